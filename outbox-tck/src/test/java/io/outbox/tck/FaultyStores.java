package io.outbox.tck;

import io.outbox.OutboxMessage;
import io.outbox.spi.LeaseRequest;
import io.outbox.spi.OutboxStore;
import io.outbox.spi.support.BucketLease;
import io.outbox.spi.support.LeaseAcquisition;
import io.outbox.spi.support.LeaseAcquisition.LeaseSnapshot;
import io.outbox.spi.support.LeaseAcquisition.LeaseWrites;
import io.outbox.spi.support.LeaseAcquisition.StrayRows;
import io.outbox.spi.support.LeasePlan;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.locks.LockSupport;

/**
 * Deliberately broken variants of the reference store. Each has one fault a real store could
 * have; {@link KitBitesTest} shows the kit catches each one. None implements the optional
 * capabilities, so the kit judges them by its required rules alone.
 */
final class FaultyStores {

    /** The faults. */
    enum Fault {
        /** A lease stays with its owner until released, whatever its expiry. */
        IGNORES_LEASE_EXPIRY,
        /** Claims are plain writes of what the relay planned, without a condition the database checks. */
        GRANTS_WITHOUT_CONDITIONAL_CHECK,
        /** {@code nextBatch} returns the right messages in reverse order. */
        RETURNS_BATCH_OUT_OF_ORDER,
        /** {@code markPublished} deletes the whole batch it last returned, not just the given prefix. */
        DELETES_BEYOND_THE_PREFIX,
        /** Rows in buckets the relay cannot claim are deleted silently instead of failing loudly. */
        DROPS_ROWS_IN_UNKNOWN_BUCKETS,
        /** {@code markPublished} deletes every row up to the last published one, like {@code seq <= last}. */
        DELETES_BY_SEQUENCE_RANGE,
        /** The read-back returns every lease the relay is named owner of, expired or not. */
        READ_BACK_INCLUDES_EXPIRED_LEASES,
        /** S8 looks only upward: rows in a negative bucket are stranded silently. */
        IGNORES_ROWS_BELOW_BUCKET_ZERO,
        /** {@code nextBatch} of a negative bucket returns nothing instead of refusing it. */
        READS_A_NEGATIVE_BUCKET,
        /** {@code nextBatch} with {@code maxCount < 1} returns nothing instead of refusing it. */
        ACCEPTS_MAX_COUNT_BELOW_ONE,
        /** {@code bucketsWithPending} skips negative buckets instead of refusing them. */
        PROBES_NEGATIVE_BUCKETS,
        /** {@code markPublished} skips messages it did not read instead of refusing the call. */
        IGNORES_FOREIGN_MESSAGES,
        /** {@code markPublished} deletes each message from its own bucket, whatever bucket was named. */
        DELETES_FROM_ANOTHER_BUCKET,
        /**
         * Expiry judged by comparing the relay's clock with stored timestamps (heartbeats and lease
         * expiries), and claims conditional on {@code expiresAt <= now}: the rule before S13.
         */
        JUDGES_EXPIRY_BY_CLOCK,
        /** The read ahead returns what follows the last message in flight, like {@code seq > last}. */
        READS_AHEAD_AFTER_THE_LAST_POSITION
    }

    private FaultyStores() {
    }

    /** The storage of one test: message rows in a reference store, and a lease table. */
    static final class Storage {
        final InMemoryOutboxStore rows;
        final ConcurrentMap<Integer, BucketLease> leases = new ConcurrentHashMap<>();
        final ConcurrentMap<String, Long> heartbeats = new ConcurrentHashMap<>();

        Storage(Clock clock) {
            this.rows = InMemoryOutboxStore.builder().clock(clock).build();
        }
    }

    static OutboxStore create(Fault fault, Storage storage, Clock clock) {
        return new FaultyStore(fault, storage, clock);
    }

    /** Message operations go to the reference store; leases live in a table of its own. */
    private static final class FaultyStore implements OutboxStore, io.outbox.spi.ReadAhead {
        private final Fault fault;
        private final InMemoryOutboxStore rows;
        private final Clock clock;
        private final ConcurrentMap<Integer, BucketLease> leases;
        private final ConcurrentMap<String, Long> heartbeats;
        private final Map<Integer, List<OutboxMessage>> lastBatch = new ConcurrentHashMap<>();
        private final LeaseAcquisition acquisition = new LeaseAcquisition();

        FaultyStore(Fault fault, Storage storage, Clock clock) {
            this.fault = fault;
            this.rows = storage.rows;
            this.leases = storage.leases;
            this.heartbeats = storage.heartbeats;
            this.clock = clock;
        }

        @Override
        public List<Integer> acquireBucketLeases(LeaseRequest request) {
            if (fault == Fault.DROPS_ROWS_IN_UNKNOWN_BUCKETS) {
                for (int bucket : rows.pendingBuckets()) {
                    if (bucket >= request.bucketCount()) {
                        rows.markPublished(bucket, rows.nextBatch(bucket, Integer.MAX_VALUE));
                    }
                }
            }
            FaultyLeases primitives = new FaultyLeases();
            if (fault == Fault.JUDGES_EXPIRY_BY_CLOCK) {
                long now = clock.millis();
                primitives.writeHeartbeat(request.relayId(), now);
                LeaseSnapshot snapshot = primitives.readSnapshot(request.bucketCount());
                LeasePlan plan = LeasePlan.compute(request, now, snapshot.heartbeats(), snapshot.leases());
                primitives.createFreeLeases(plan.missingBuckets());
                primitives.writeLeases(LeaseWrites.of(plan));
                return primitives.readOwned(request.relayId(), now, request.bucketCount()).stream().sorted().toList();
            }
            return acquisition.acquire(request, clock, primitives);
        }

        /** The shared recipe over lease primitives with this store's fault. */
        private final class FaultyLeases implements LeaseAcquisition.LeaseStore<RuntimeException> {
            @Override
            public List<StrayRows> strayRows(int bucketCount) {
                List<Integer> outside = rows.pendingBuckets().stream()
                        .filter(b -> b >= bucketCount || (b < 0 && fault != Fault.IGNORES_ROWS_BELOW_BUCKET_ZERO))
                        .toList();
                return List.of(StrayRows.of("pending rows", null, outside));
            }

            @Override
            public void writeHeartbeat(String relayId, long nowMillis) {
                heartbeats.put(relayId, nowMillis);
            }

            @Override
            public LeaseSnapshot readSnapshot(int bucketCount) {
                return new LeaseSnapshot(Map.copyOf(heartbeats), List.copyOf(leases.values()));
            }

            @Override
            public void createFreeLeases(List<Integer> buckets) {
                buckets.forEach(b -> leases.putIfAbsent(b, BucketLease.free(b)));
            }

            @Override
            public void writeLeases(LeaseWrites writes) {
                String me = writes.relayId();
                long now = writes.nowMillis();
                for (LeaseAcquisition.Keep keep : writes.keep()) {
                    leases.replace(keep.bucket(), keep.observed(), new BucketLease(keep.bucket(), me, keep.expiresAtMillis()));
                }
                for (BucketLease observed : writes.release()) {
                    leases.replace(observed.bucket(), observed, BucketLease.free(observed.bucket()));
                }
                for (BucketLease observed : writes.claim()) {
                    BucketLease claimed = new BucketLease(observed.bucket(), me, writes.claimExpiresAtMillis());
                    switch (fault) {
                        case GRANTS_WITHOUT_CONDITIONAL_CHECK -> {
                            LockSupport.parkNanos(200_000); // the round trip between the read and the write
                            leases.put(observed.bucket(), claimed);
                        }
                        case IGNORES_LEASE_EXPIRY -> leases.computeIfPresent(observed.bucket(),
                                (b, current) -> current.owner() == null && current.equals(observed) ? claimed : current);
                        case JUDGES_EXPIRY_BY_CLOCK -> leases.computeIfPresent(observed.bucket(),
                                (b, current) -> current.isClaimable(now) ? claimed : current);
                        default -> leases.replace(observed.bucket(), observed, claimed);
                    }
                }
            }

            @Override
            public List<Integer> readOwned(String relayId, long nowMillis, int bucketCount) {
                List<Integer> owned = new ArrayList<>();
                leases.values().forEach(lease -> {
                    boolean mine = fault == Fault.IGNORES_LEASE_EXPIRY || fault == Fault.READ_BACK_INCLUDES_EXPIRED_LEASES
                            ? relayId.equals(lease.owner()) : lease.isHeldBy(relayId, nowMillis);
                    if (mine) {
                        owned.add(lease.bucket());
                    }
                });
                return owned;
            }
        }

        @Override
        public List<Integer> bucketsWithPending(List<Integer> buckets) {
            if (fault == Fault.PROBES_NEGATIVE_BUCKETS && buckets != null) {
                return rows.bucketsWithPending(buckets.stream().filter(b -> b == null || b >= 0).toList());
            }
            return rows.bucketsWithPending(buckets);
        }

        @Override
        public List<OutboxMessage> nextBatch(int bucket, int maxCount) {
            if ((fault == Fault.READS_A_NEGATIVE_BUCKET && bucket < 0)
                    || (fault == Fault.ACCEPTS_MAX_COUNT_BELOW_ONE && maxCount < 1)) {
                return List.of();
            }
            List<OutboxMessage> batch = rows.nextBatch(bucket, maxCount);
            lastBatch.put(bucket, batch);
            if (fault == Fault.RETURNS_BATCH_OUT_OF_ORDER) {
                List<OutboxMessage> reversed = new ArrayList<>(batch);
                Collections.reverse(reversed);
                return List.copyOf(reversed);
            }
            return batch;
        }

        @Override
        public List<OutboxMessage> nextBatchExcluding(int bucket, List<OutboxMessage> inFlight, int maxCount) {
            if (fault != Fault.READS_AHEAD_AFTER_THE_LAST_POSITION || inFlight.isEmpty()) {
                return rows.nextBatchExcluding(bucket, inFlight, maxCount);
            }
            List<OutboxMessage> visible = rows.nextBatch(bucket, Integer.MAX_VALUE);
            java.util.UUID last = inFlight.get(inFlight.size() - 1).messageId();
            int after = 0;
            while (after < visible.size() && !visible.get(after).messageId().equals(last)) {
                after++;
            }
            int from = Math.min(after + 1, visible.size());
            return List.copyOf(visible.subList(from, Math.min(visible.size(), from + maxCount)));
        }

        @Override
        public void markPublished(int bucket, List<OutboxMessage> published) {
            if (fault == Fault.IGNORES_FOREIGN_MESSAGES) {
                for (OutboxMessage m : published) {
                    try {
                        rows.markPublished(bucket, List.of(m));
                    } catch (IllegalArgumentException notOurs) {
                        // skipped silently: the fault
                    }
                }
                return;
            }
            if (fault == Fault.DELETES_FROM_ANOTHER_BUCKET) {
                published.forEach(m -> rows.markPublished(m.bucket(), List.of(m)));
                return;
            }
            if (fault == Fault.DELETES_BEYOND_THE_PREFIX && !published.isEmpty()) {
                rows.markPublished(bucket, lastBatch.getOrDefault(bucket, published));
            } else if (fault == Fault.DELETES_BY_SEQUENCE_RANGE && !published.isEmpty()) {
                List<OutboxMessage> visible = rows.nextBatch(bucket, Integer.MAX_VALUE);
                java.util.UUID last = published.get(published.size() - 1).messageId();
                int through = 0;
                while (through < visible.size() && !visible.get(through).messageId().equals(last)) {
                    through++;
                }
                rows.markPublished(bucket, visible.subList(0, Math.min(through + 1, visible.size())));
            } else {
                rows.markPublished(bucket, published);
            }
        }
    }
}
