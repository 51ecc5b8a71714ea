package io.outbox.tck;

import io.outbox.OutboxMessage;
import io.outbox.spi.CloseableOutboxStore;
import io.outbox.spi.DeadLetters;
import io.outbox.spi.LeaseRelease;
import io.outbox.spi.LeaseRenewal;
import io.outbox.spi.LeaseRequest;
import io.outbox.spi.LeaseTable;
import io.outbox.spi.LeaseView;
import io.outbox.spi.Pending;
import io.outbox.spi.PendingMetrics;
import io.outbox.spi.PendingSnapshot;
import io.outbox.spi.ReadAhead;
import io.outbox.spi.support.BatchBytes;
import io.outbox.spi.support.BucketLease;
import io.outbox.spi.support.LeaseAcquisition;
import io.outbox.spi.support.LeaseAcquisition.LeaseSnapshot;
import io.outbox.spi.support.LeaseAcquisition.LeaseWrites;
import io.outbox.spi.support.LeaseAcquisition.StrayRows;
import io.outbox.spi.support.LeasePlan;
import io.outbox.spi.support.StoreArguments;
import io.outbox.spi.support.StoredMessages;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A thread-safe, in-memory reference implementation of the store SPI and all five capabilities
 * (C1 {@link LeaseRenewal}, C2 {@link PendingMetrics}, C3 {@link LeaseRelease} and C5
 * {@link ReadAhead} by the store itself, C4 {@link DeadLetters} by its dead letters' own object,
 * each returned by its accessor); it passes the whole compatibility kit. Use it in tests of code
 * around the relay, and read it as the template for a custom store: every method maps one-to-one
 * onto what a database store does.
 *
 * <ul>
 *   <li>Messages live per bucket in a map sorted by a sequence number reserved at enqueue (E5),
 *       like an auto-increment id or a per-bucket counter; {@link #nextBatch} reads the lowest
 *       sequences and stops at the count or the byte budget (S1, {@link BatchBytes}),
 *       {@link #markPublished} deletes by that native id (S2), carried as the handle of each
 *       {@link Pending} entry; {@link #nextBatchExcluding} (C5) walks the same order
 *       and skips the sequences of the batch in flight, the twin of {@code id NOT IN (...)}.</li>
 *   <li>Leases are one record per bucket. Every transition is one atomic conditional write on the
 *       record as it was read ({@link ConcurrentMap#replace(Object, Object, Object)}, the
 *       in-memory twin of {@code UPDATE ... WHERE owner = ? AND expires_at = ?}), planned with the
 *       shared {@link LeasePlan} (S4, S4b, S5).</li>
 *   <li>All time comes from the injected {@link Clock}, in epoch milliseconds (S11).</li>
 * </ul>
 *
 * <p>Build one with {@link #builder()}, as every store is built. Enqueue with
 * {@link #enqueue(List)} (one committed transaction) or {@link #begin()} (a transaction the caller
 * commits or rolls back: this store's native transaction, where a database store's writer takes
 * the caller's connection or session). There is no schema to create. Nothing is persisted: the
 * data lives as long as the instance; {@link #close()} owns nothing to release and keeps it. All
 * methods are thread-safe.
 *
 * <h2>As a base</h2>
 * The class is open for extension: a subclass may override any SPI method, and any capability
 * accessor, to wrap it (count calls, add latency, inject a fault for a test of code around the
 * relay) and call {@code super} for the reference behaviour; its constructor takes a
 * {@link Builder}. Every argument check is {@link StoreArguments}' and the lease recipe is
 * {@link LeaseAcquisition}'s, so a subclass, like any store, inherits the exact behaviour the kit
 * pins. The kit's fixture for this store,
 * {@link InMemoryOutboxStoreTck}, is the template for a non-JDBC store's fixture.
 */
public class InMemoryOutboxStore implements CloseableOutboxStore, LeaseRenewal.Self, PendingMetrics.Self,
        LeaseRelease.Self, ReadAhead.Self, LeaseView.Self {

    /**
     * The default largest payload: 1,000,000 bytes, which a Kafka producer and broker on their
     * default size limits (1 MiB) accept with the record overhead and the message-id header added.
     */
    public static final long DEFAULT_MAX_PAYLOAD_BYTES = 1_000_000;

    private final Clock clock;
    private final long maxPayloadBytes;
    private final AtomicLong sequence = new AtomicLong();
    private final ConcurrentMap<Integer, ConcurrentNavigableMap<Long, Pending>> messages = new ConcurrentHashMap<>();
    private final ConcurrentMap<Integer, BucketLease> leases = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, Long> heartbeats = new ConcurrentHashMap<>();
    private final InMemoryDeadLetters deadLetters;
    private final InMemoryLeases leaseStore = new InMemoryLeases();
    private final LeaseAcquisition acquisition = new LeaseAcquisition();

    /**
     * Creates a store; for subclasses ({@code new InMemoryOutboxStore(InMemoryOutboxStore.builder()
     * .clock(clock)) { ... }}). Others call {@link Builder#build()}.
     *
     * @param builder the settings; not null
     */
    protected InMemoryOutboxStore(Builder builder) {
        this.clock = builder.clock;
        this.maxPayloadBytes = builder.maxPayloadBytes;
        this.deadLetters = new InMemoryDeadLetters(clock, messages, sequence::incrementAndGet,
                (message, seq) -> new Pending(message, new Row(this, seq)));
    }

    /**
     * Starts building a store.
     *
     * @return a builder with the system UTC clock and {@value #DEFAULT_MAX_PAYLOAD_BYTES}-byte payloads
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The largest payload this store accepts.
     *
     * @return the limit on {@link StoredMessages#payloadSize}, in bytes
     */
    public long maxPayloadBytes() {
        return maxPayloadBytes;
    }

    /**
     * Enqueues messages in one transaction that commits at once (E4).
     *
     * @param batch the messages; not null, no null elements
     * @throws io.outbox.OutboxPayloadTooLargeException if a message is over the limit;
     *     nothing is written then
     */
    public void enqueue(List<OutboxMessage> batch) {
        Transaction tx = begin();
        tx.enqueue(batch);
        tx.commit();
    }

    /**
     * Enqueues messages in one transaction that commits at once (E4).
     *
     * @param batch the messages; no null elements
     * @throws io.outbox.OutboxPayloadTooLargeException if a message is over the limit;
     *     nothing is written then
     */
    public void enqueue(OutboxMessage... batch) {
        enqueue(List.of(batch));
    }

    /**
     * Starts a transaction: messages enqueued in it become visible together at
     * {@link Transaction#commit()}, and never if it is rolled back.
     *
     * @return a new transaction; confined to one thread
     */
    public Transaction begin() {
        return new Transaction();
    }

    /**
     * A unit of work on the store, like a database transaction. Sequence numbers are reserved at
     * enqueue (E5); a rollback leaves a harmless gap. Not thread-safe; use from one thread.
     */
    public final class Transaction {

        private final List<Pending> pending = new ArrayList<>();
        private boolean done;

        private Transaction() {
        }

        /**
         * Adds messages to the transaction.
         *
         * @param batch the messages; not null, no null elements
         * @throws io.outbox.OutboxPayloadTooLargeException if a message is over the limit;
         *     the transaction is left as it was
         * @throws IllegalStateException if the transaction has ended
         */
        public void enqueue(List<OutboxMessage> batch) {
            requireOpen();
            Objects.requireNonNull(batch, "batch must not be null");
            for (OutboxMessage m : batch) {
                StoredMessages.requirePayloadAtMost(Objects.requireNonNull(m, "batch must not contain null"),
                        maxPayloadBytes);
            }
            for (OutboxMessage m : batch) {
                pending.add(row(m));
            }
        }

        /**
         * Makes the enqueued messages visible.
         *
         * @throws IllegalStateException if the transaction has ended
         */
        public void commit() {
            requireOpen();
            done = true;
            for (Pending row : pending) {
                rowsOf(row.message().bucket()).put(sequenceOf(row), row);
            }
        }

        /** Discards the enqueued messages; a no-op after commit or rollback. */
        public void rollback() {
            done = true;
            pending.clear();
        }

        private void requireOpen() {
            if (done) {
                throw new IllegalStateException("transaction already ended");
            }
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>The shared {@link LeaseAcquisition} recipe over this store's maps: each primitive is one
     * map operation, the conditional ones {@link ConcurrentMap#replace(Object, Object, Object)}
     * and {@link ConcurrentMap#computeIfPresent}.
     */
    @Override
    public List<Integer> acquireBucketLeases(LeaseRequest request) {
        StoreArguments.requireRequest(request);
        return acquisition.acquire(request, clock, leaseStore);
    }

    /** The primitives of {@link LeaseAcquisition}: the template a database store maps onto statements. */
    private final class InMemoryLeases implements LeaseAcquisition.LeaseStore<RuntimeException> {

        /** S8: pending rows the relay can never claim mean writers and relays disagree on the count. */
        @Override
        public List<StrayRows> strayRows(int bucketCount) {
            List<Integer> outside = new ArrayList<>();
            messages.forEach((bucket, rows) -> {
                if ((bucket < 0 || bucket >= bucketCount) && !rows.isEmpty()) {
                    outside.add(bucket);
                }
            });
            return List.of(StrayRows.of("pending outbox messages", "the in-memory store", outside));
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
            for (int bucket : buckets) {
                leases.putIfAbsent(bucket, BucketLease.free(bucket));
            }
        }

        @Override
        public void writeLeases(LeaseWrites writes) {
            String me = writes.relayId();
            for (LeaseAcquisition.Keep keep : writes.keep()) {
                BucketLease observed = keep.observed();
                leases.replace(observed.bucket(), observed, new BucketLease(observed.bucket(), me, keep.expiresAtMillis()));
            }
            for (BucketLease observed : writes.release()) {
                leases.replace(observed.bucket(), observed,
                        new BucketLease(observed.bucket(), null, observed.expiresAtMillis()));
            }
            for (BucketLease observed : writes.claim()) {
                // S13: conditional on the exact value observed, never on a clock comparison.
                leases.replace(observed.bucket(), observed,
                        new BucketLease(observed.bucket(), me, writes.claimExpiresAtMillis()));
            }
        }

        @Override
        public void deleteStaleHeartbeats(Map<String, Long> stale) {
            stale.forEach(heartbeats::remove);
        }

        @Override
        public List<Integer> readOwned(String relayId, long nowMillis, int bucketCount) {
            return ownedBy(relayId, nowMillis, bucketCount);
        }
    }

    private List<Integer> ownedBy(String relayId, long now, int bucketCount) {
        BitSet owned = new BitSet(bucketCount);
        leases.values().forEach(lease -> {
            if (lease.bucket() < bucketCount && lease.isHeldBy(relayId, now)) {
                owned.set(lease.bucket());
            }
        });
        return owned.stream().boxed().toList();
    }

    @Override
    public List<Integer> renewBucketLeases(LeaseRequest request) {
        StoreArguments.requireRequest(request);
        long now = clock.millis();
        String me = request.relayId();
        heartbeats.merge(me, now, (stored, fresh) -> Math.max(stored + 1, fresh));
        List<Integer> held = new ArrayList<>();
        for (int bucket : request.heldBuckets()) {
            BucketLease after = leases.computeIfPresent(bucket, (b, current) -> current.isHeldBy(me, now)
                    ? new BucketLease(b, me, LeasePlan.renewedExpiry(current.expiresAtMillis(), now,
                            request.leaseDurationMillis()))
                    : current);
            if (after != null && after.isHeldBy(me, now)) {
                held.add(bucket);
            }
        }
        return List.copyOf(held);
    }

    /**
     * {@inheritDoc}
     *
     * <p>The same snapshot of the maps the acquire recipe reads (C6).
     */
    @Override
    public LeaseTable leaseTable(int bucketCount) {
        LeaseTable.requireBucketCount(bucketCount);
        LeaseSnapshot snapshot = leaseStore.readSnapshot(bucketCount);
        return LeaseTable.of(clock.millis(), snapshot.heartbeats(), snapshot.leases(), bucketCount);
    }

    @Override
    public void releaseBucketLeases(String relayId) {
        Objects.requireNonNull(relayId, "relayId must not be null");
        for (BucketLease observed : List.copyOf(leases.values())) {
            if (relayId.equals(observed.owner())) {
                leases.replace(observed.bucket(), observed,
                        new BucketLease(observed.bucket(), null, observed.expiresAtMillis()));
            }
        }
        heartbeats.remove(relayId);
    }

    @Override
    public List<Integer> bucketsWithPending(List<Integer> buckets) {
        List<Integer> pending = new ArrayList<>();
        for (int bucket : StoreArguments.requireBuckets(buckets)) {
            Map<Long, Pending> rows = messages.get(bucket);
            if (rows != null && !rows.isEmpty()) {
                pending.add(bucket);
            }
        }
        return List.copyOf(pending);
    }

    @Override
    public List<Pending> nextBatch(int bucket, int maxCount, long maxBytes) {
        StoreArguments.requireBucket(bucket);
        StoreArguments.requireMaxCount(maxCount);
        StoreArguments.requireMaxBytes(maxBytes);
        return oldest(bucket, maxCount, maxBytes, Set.of());
    }

    /**
     * {@inheritDoc}
     *
     * <p>Walks the bucket in sequence order and skips the sequences of {@code inFlight}.
     */
    @Override
    public List<Pending> nextBatchExcluding(int bucket, List<Pending> inFlight, int maxCount, long maxBytes) {
        StoreArguments.requireBucket(bucket);
        StoreArguments.requireMaxCount(maxCount);
        StoreArguments.requireMaxBytes(maxBytes);
        Objects.requireNonNull(inFlight, "inFlight must not be null");
        Set<Long> excluded = new HashSet<>();
        for (Pending p : inFlight) {
            if (Objects.requireNonNull(p, "inFlight must not contain null").handle() instanceof Row row
                    && row.store() == this) {
                excluded.add(row.sequence());
            }
        }
        return oldest(bucket, maxCount, maxBytes, excluded);
    }

    /**
     * The bucket's lowest sequences but the excluded ones, at most {@code maxCount} and within
     * {@code maxBytes} (S1): the walk stops at the first message the budget refuses.
     */
    private List<Pending> oldest(int bucket, int maxCount, long maxBytes, Set<Long> excluded) {
        ConcurrentNavigableMap<Long, Pending> rows = messages.get(bucket);
        if (rows == null) {
            return List.of();
        }
        List<Pending> batch = new ArrayList<>(Math.min(maxCount, 1024));
        BatchBytes budget = new BatchBytes(maxBytes);
        for (Map.Entry<Long, Pending> row : rows.entrySet()) {
            if (batch.size() == maxCount) {
                break;
            }
            if (!excluded.contains(row.getKey())) {
                if (!budget.admit(row.getValue().message())) {
                    break;
                }
                batch.add(row.getValue());
            }
        }
        return List.copyOf(batch);
    }

    @Override
    public void markPublished(int bucket, List<Pending> published) {
        List<Row> handles = StoreArguments.requirePublished(bucket, published, Row.class, row -> row.store() == this,
                "this in-memory store");
        Map<Long, Pending> rows = messages.get(bucket);
        if (rows != null) {
            for (Row row : handles) {
                rows.remove(row.sequence());
            }
        }
    }

    @Override
    public PendingSnapshot pendingMetrics(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout must not be null");
        long count = 0;
        Instant oldest = null;
        for (ConcurrentNavigableMap<Long, Pending> rows : messages.values()) {
            for (Pending row : rows.values()) {
                count++;
                Instant createdAt = row.message().createdAt();
                if (oldest == null || createdAt.isBefore(oldest)) {
                    oldest = createdAt;
                }
            }
        }
        return new PendingSnapshot(count, oldest);
    }

    /**
     * C4: the dead letters, a map beside the pending rows; moves and replays take one lock.
     *
     * @return the store's dead letters
     */
    @Override
    public Optional<DeadLetters> deadLetters() {
        return Optional.of(deadLetters);
    }

    /**
     * Writes a message's row into any bucket, committed at once, as a writer with another bucket
     * count (or a hand-written fix) would: even a negative one, which {@link OutboxMessage} itself
     * cannot carry. For tests of rule S8; the relay never publishes such a row.
     *
     * @param bucket the bucket the row is stored under; any value
     * @param message the message; not null
     */
    public void insertRow(int bucket, OutboxMessage message) {
        Pending row = row(Objects.requireNonNull(message, "message must not be null"));
        rowsOf(bucket).put(sequenceOf(row), row);
    }

    private static long sequenceOf(Pending row) {
        return ((Row) row.handle()).sequence();
    }

    /** A message as stored: with the next sequence number, this store's native id (E5). */
    private Pending row(OutboxMessage message) {
        return new Pending(message, new Row(this, sequence.incrementAndGet()));
    }

    private ConcurrentNavigableMap<Long, Pending> rowsOf(int bucket) {
        return messages.computeIfAbsent(bucket, b -> new ConcurrentSkipListMap<>());
    }

    /**
     * Reads the lease table, for tests and diagnostics.
     *
     * @return bucket to lease as stored now; a copy
     */
    public Map<Integer, BucketLease> leases() {
        return new HashMap<>(leases);
    }

    /**
     * The buckets holding pending messages, for tests and diagnostics.
     *
     * @return every bucket with at least one pending message, ascending; a copy
     */
    public List<Integer> pendingBuckets() {
        TreeSet<Integer> pending = new TreeSet<>();
        messages.forEach((bucket, rows) -> {
            if (!rows.isEmpty()) {
                pending.add(bucket);
            }
        });
        return List.copyOf(pending);
    }

    /**
     * The handle of a row: its sequence number, the native id of this store, and the store that
     * made it (a database store's handle names its table instead).
     */
    private record Row(InMemoryOutboxStore store, long sequence) {
    }

    /** Does nothing: the store owns no resource outside the heap, and its data stays readable. */
    @Override
    public void close() {
    }

    /** Builds an {@link InMemoryOutboxStore}. Each setter validates at once; not thread-safe. */
    public static final class Builder {

        private Clock clock = Clock.systemUTC();
        private long maxPayloadBytes = DEFAULT_MAX_PAYLOAD_BYTES;

        private Builder() {
        }

        /**
         * Sets the source of all lease time (S11).
         *
         * @param clock the clock; not null; default {@link Clock#systemUTC()}
         * @return this builder
         * @throws NullPointerException if {@code clock} is null
         */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock must not be null");
            return this;
        }

        /**
         * Sets the largest payload accepted (S10).
         *
         * @param maxPayloadBytes the limit on {@link StoredMessages#payloadSize}, in bytes, {@code >= 0};
         *     default {@value InMemoryOutboxStore#DEFAULT_MAX_PAYLOAD_BYTES}
         * @return this builder
         * @throws IllegalArgumentException if {@code maxPayloadBytes < 0}, naming the value
         */
        public Builder maxPayloadBytes(long maxPayloadBytes) {
            if (maxPayloadBytes < 0) {
                throw new IllegalArgumentException("maxPayloadBytes must be >= 0 but was " + maxPayloadBytes);
            }
            this.maxPayloadBytes = maxPayloadBytes;
            return this;
        }

        /**
         * Builds a new, empty store.
         *
         * @return the store
         */
        public InMemoryOutboxStore build() {
            return new InMemoryOutboxStore(this);
        }
    }
}
