package io.outbox.tck;

import com.google.auto.service.AutoService;
import io.outbox.OutboxMessage;
import io.outbox.spi.CloseableOutboxStore;
import io.outbox.spi.CorruptMessageException;
import io.outbox.spi.DeadLetter;
import io.outbox.spi.DeadLetterConflictException;
import io.outbox.spi.DeadLetterFailure;
import io.outbox.spi.DeadLetters;
import io.outbox.spi.HeadFailure;
import io.outbox.spi.LeaseRelease;
import io.outbox.spi.LeaseRenewal;
import io.outbox.spi.LeaseRequest;
import io.outbox.spi.LeaseTable;
import io.outbox.spi.LeaseView;
import io.outbox.spi.OutboxStore;
import io.outbox.spi.OutboxStoreProvider;
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
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.common.config.ConfigDef;

/**
 * Deliberately broken variants of the reference store, each with one fault a real store could
 * have; {@link KitBitesTest} shows the kit fails each on exactly the rules it declares. Message
 * operations and capabilities go to a reference store; faults of the lease primitives run on a
 * lease table of their own (and offer neither C1 nor C3, whose writes would miss it).
 */
final class FaultyStores {

    /** Every rule of the store kit. */
    static final String EVERY_STORE_RULE = "S1 S2 S3 S4 S4b S5 S6 S7 S8 S9 S10 S11 S12 S13 E4 E5 R11 R12 R14 C1 C2 C3 C4 C5 C6 "
            + "discovery";

    /** How long a call of {@link Fault#BLOCKS_IN_EVERY_CALL} blocks before it gives up by itself. */
    static final Duration BLOCKING = Duration.ofSeconds(30);

    /** The header blob a corrupted row holds (an unknown codec version). */
    static final byte[] CORRUPT_HEADERS = {0x7f};

    /** The faults: the kit test that catches each, and exactly the rules a kit run over it fails. */
    enum Fault implements Bite {
        // Whole-store failures: every call blocks, or throws
        BLOCKS_IN_EVERY_CALL("required_S1_nextBatchReturnsAtMostMaxCountOldestFirst", EVERY_STORE_RULE,
                "every call of the store blocks (a lost connection without a socket timeout)"),
        THROWS_FROM_EVERY_CALL("required_S1_nextBatchReturnsAtMostMaxCountOldestFirst", EVERY_STORE_RULE,
                "every call of the store throws (the database is down)"),
        // S1
        RETURNS_BATCH_OUT_OF_ORDER("required_S1_nextBatchReturnsAtMostMaxCountOldestFirst",
                "S1 S2 S9 S10 S12 E5 C4 C5", "nextBatch returns the right messages in reverse order"),
        RETURNS_MORE_THAN_MAX_COUNT("required_S1_batchNeverExceedsMaxCountWithMultiMessageTransactions",
                "S1 S12 E5 C4 C5", "nextBatch returns one message more than maxCount when there are more"),
        READS_A_NEGATIVE_BUCKET("required_S1_nextBatchRefusesANegativeBucket", "S1",
                "nextBatch of a negative bucket returns nothing instead of refusing it"),
        ACCEPTS_MAX_COUNT_BELOW_ONE("required_S1_nextBatchRefusesMaxCountBelowOne", "S1",
                "nextBatch with maxCount < 1 returns nothing instead of refusing it"),
        IGNORES_THE_BYTE_BUDGET("required_S1_nextBatchKeepsTheByteBudget", "S1",
                "nextBatch reads maxCount messages whatever maxBytes says"),
        // S2
        DELETES_NOTHING("required_S2_markPublishedDeletesExactlyThePrefix", "S2",
                "markPublished deletes nothing"),
        DELETES_BEYOND_THE_PREFIX("required_S2_markPublishedDeletesExactlyThePrefix", "S1 S2 C5",
                "markPublished deletes the whole batch it last returned, not just the given prefix"),
        DELETES_BY_SEQUENCE_RANGE("required_S2_markPublishedSparesAMessageCommittedLate", "S2",
                "markPublished deletes every row up to the last published one, like seq <= last"),
        IGNORES_FOREIGN_MESSAGES("required_S2_markPublishedRefusesAForeignMessage", "S2",
                "markPublished skips entries it did not read instead of refusing the call"),
        DELETES_FROM_ANOTHER_BUCKET("required_S2_markPublishedRefusesAnotherBucketsMessage", "S2",
                "markPublished deletes each message from its own bucket, whatever bucket was named"),
        // S3
        PROBES_NEGATIVE_BUCKETS("required_S3_bucketsWithPendingRefusesANegativeBucket", "S3",
                "bucketsWithPending skips negative buckets instead of refusing them"),
        PROBES_IN_REQUEST_ORDER("required_S3_bucketsWithPendingIsExact", "S3",
                "bucketsWithPending answers in the order asked, repeats included, not ascending and distinct"),
        // S4, S4b, S7
        RETURNS_BUCKETS_UNSORTED("required_S4_aLoneRelayAcquiresEveryBucket", "S4 R11",
                "acquireBucketLeases returns the buckets it owns in descending order"),
        NEVER_RELEASES_THE_EXCESS("required_S4_excessIsReleasedToAJoiningRelay", "S4 S4b S5 S6 S7 R11 R14 C6",
                "the lease writes skip the release of buckets above the share", true),
        DROPS_A_HELD_BUCKET_EACH_ROUND("required_S4b_heldBucketsAreKeptRoundAfterRound",
                "S4 S4b S5 S6 S7 S11 S13 R11 R14 C6",
                "a relay that passes back the buckets it held releases its lowest one after each acquire", true),
        COUNTS_ONLY_LEASE_HOLDERS("required_S7_fairSharesConvergeAsRelaysJoinAndLeave", "S4 S4b S5 S6 S7 S13 R11 R14 C6",
                "the share counts only relays holding a lease, so a joining relay never gets one", true),
        // S5
        GRANTS_WITHOUT_CONDITIONAL_CHECK("stochastic_S5_noBucketIsEverHeldByTwoRelaysUnderContention", "S5",
                "claims are plain writes of what the relay planned, without a condition the database checks", true),
        SKIPS_THE_KEEP_WRITE("required_S5_keepingALeaseExtendsIt", "S4b S5 S6 S7 S13 R14",
                "a relay keeping its leases writes nothing (they are still fresh), so they are not extended", true),
        // S6
        IGNORES_LEASE_EXPIRY("required_S6_aStoppedRelaysBucketsAreTakenOverAfterTheLeaseDuration",
                "S5 S6 S7 S11 S13 R14", "a lease stays with its owner until released, whatever its expiry", true),
        READ_BACK_INCLUDES_EXPIRED_LEASES("required_S6_aLeaseStopsCountingAtItsExpiryInstant", "S5 S6",
                "the answer is the read-back of every lease the relay is named owner of, expired or not", true),
        ANSWERS_WITH_LEASES_IT_DID_NOT_WRITE("required_S5_aLeaseJudgedExpiredDuringTheCallIsNotReturned", "S5",
                "the answer is the read-back of every unexpired lease the relay is named owner of, kept or claimed "
                        + "in this call or not", true),
        // S8
        DROPS_ROWS_IN_UNKNOWN_BUCKETS("required_S8_rowsOutsideTheBucketRangeAreFatal", "S8",
                "rows in buckets the relay cannot claim are deleted silently instead of failing loudly", true),
        IGNORES_ROWS_BELOW_BUCKET_ZERO("required_S8_rowsBelowBucketZeroAreFatal", "S8",
                "the S8 probe looks only upward: rows in a negative bucket are stranded silently", true),
        // S9
        EXPIRES_OLD_ROWS("required_S9_pendingRowsNeverExpire", "S9 S10",
                "nextBatch leaves out messages created more than a year before the store's clock"),
        // S10
        EMPTY_VALUE_BECOMES_NULL("required_S10_everyFieldRoundTripsExactly", "S10",
                "an empty value comes back as null"),
        ACCEPTS_PAYLOADS_OVER_THE_LIMIT("required_S10_oneByteOverTheLimitFailsAndWritesNothing", "S10",
                "the writer accepts payloads 100 bytes over the limit the store declares"),
        // S11
        LEASES_BY_THE_SYSTEM_CLOCK("required_S11_leaseTimeComesFromTheInjectedClock",
                "S5 S6 S7 S11 S13 R14 C6", "lease time comes from the system clock, not the injected one", true),
        // S12
        SHARES_A_BUFFER_BETWEEN_CALLS("stochastic_S12_oneStoreInstanceServesConcurrentCallers", "S12",
                "nextBatch fills one buffer shared by every caller of the instance"),
        // S13, R14
        JUDGES_EXPIRY_BY_CLOCK("required_S13_relaysWithClocksFarApartKeepFairSharesAndNeverShareABucket",
                "S5 S6 S8 S13 R14", "expiry judged by comparing the caller's clock with stored "
                + "timestamps, and claims conditional on expiresAt <= now: the rule before S13", true),
        PLANS_FOR_SILENT_RELAYS("required_R14_deadRelaysSharesAndDeadClaimersClaimsReachALiveRelayWithinTwoLeaseDurations",
                "S5 S6 S8 S13 R14", "plans buckets for every live relay, renewing or not, and never takes an "
                + "overdue bucket (the plan before R14); judges expiry by the stored times", true),
        // R11, R12
        IGNORES_BUSY_BUCKETS("required_R11_busyBucketsAreKeptAboveTheShareUntilTheyAreIdle", "R11",
                "acquireBucketLeases plans without the busy buckets of the request"),
        CORRUPT_ROW_WITHOUT_ITS_ID("required_R12_aCorruptRowIsReportedWithItsBucketAndMessageId", "R12",
                "a row whose headers cannot be decoded fails nextBatch with a bare IllegalStateException"),
        // E4, E5, discovery (the fixture's writer and provider)
        COMMITS_ON_ROLLBACK("required_E4_aRolledBackEnqueueLeavesNothing", "E4",
                "the enqueue helper commits on a connection of its own, so a rollback keeps the messages"),
        LOSES_RACING_WRITES("stochastic_E5_concurrentWritersLoseNothingAndKeepTheirOrder", "E5",
                "the writer reserves the sequence as max + 1 and swallows the duplicate key of a race"),
        PROVIDER_IGNORES_UNKNOWN_SETTINGS("required_discovery_providerIsFoundByName", "discovery",
                "the provider accepts a misspelt setting without a word"),
        // C1, C2, C3
        RENEWAL_IGNORES_EXPIRY("optional_C1_renewalReportsLostLeases", "C1 S5?",
                "renewal reports every bucket asked for as still held"),
        OLDEST_FROM_THE_HEADS_ONLY("optional_C2_pendingMetricsCountEveryBucketAndFindTheOldest", "C2",
                "the pending metrics take the oldest creation time of the buckets' heads only"),
        RELEASE_DOES_NOTHING("optional_C3_releaseHandsBucketsOverAtOnce", "C3",
                "releaseBucketLeases returns without releasing anything"),
        // C4
        MOVE_LOSES_THE_ATTEMPTS("optional_C4_aMoveKeepsBytesIdAndFailureAndFreesTheBucketsHead", "C4",
                "a move records the failure with one attempt, whatever the count"),
        MOVED_MESSAGE_STAYS_PENDING("optional_C4_deadLettersAreNeverLeasedReadOrCounted", "C4 R12",
                "a move copies the message into the dead letters and leaves it pending"),
        MOVE_OVERWRITES_ANOTHER_RECORD("optional_C4_aMoveThatFailsHalfWayLeavesTheMessagePendingAndNothingDoubled",
                "C4", "a move over a dead letter with a different record replaces it"),
        MOVE_REFUSES_A_REPEAT("optional_C4_aRepeatOfADeadLetterMovesIntoIt", "C4",
                "a move of a repeat of a dead letter fails with DeadLetterConflictException"),
        HEAD_FAILURE_IN_THE_INSTANCE("optional_C4_aHeadFailureIsDurableAndReadByAnotherInstance", "C4",
                "the head failures live in the store instance, not in the store"),
        HEAD_FAILURE_OUTLIVES_ITS_MESSAGE("optional_C4_aHeadFailureEndsWhenItsMessageIsPublishedOrMoved", "C4",
                "headFailures reports every record made, head of its bucket or not"),
        MOVE_CHECKS_THEN_MOVES("optional_C4_concurrentMovesOfOneMessageMoveItOnce", "C4",
                "a move answers whether the message was pending when it looked, not whether it moved it"),
        MOVES_WHAT_IS_NOT_PENDING("optional_C4_aMessageNoLongerPendingIsNotMoved", "C4",
                "a move of a message that is not pending reports true"),
        REPLAY_KEEPS_THE_DEAD_LETTER("optional_C4_replayKeepsIdAndBytesAndGoesAfterWhatIsPendingNow", "C4",
                "a replay puts the message back and keeps its dead letter"),
        PURGE_REMOVES_EVERY_DEAD_LETTER("optional_C4_purgeRemovesOnlyWhatItNames", "C4",
                "a purge of one dead letter removes all of them"),
        MOVES_FROM_A_NEGATIVE_BUCKET("optional_C4_negativeBucketsAreRefused", "C4",
                "a move from a negative bucket reports false instead of refusing the bucket"),
        LIST_REPEATS_THE_CURSOR("optional_C4_listPagesInIdOrderWithoutRepeats", "C4",
                "a page of dead letters starts at the cursor, not after it"),
        // C5
        READS_AHEAD_AFTER_THE_LAST_POSITION("optional_C5_readAheadLeavesOutTheBatchInFlight", "C5",
                "the read ahead returns what follows the last message in flight, like seq > last"),
        // C6
        LEASE_VIEW_FREES_EXPIRED_LEASES("optional_C6_leaseTableShowsOwnersExpiriesAndHeartbeats", "C6",
                "the lease view shows an expired lease as free, not as stored");

        private final Bite.Declared declared;
        private final boolean leaseLevel;

        Fault(String caughtBy, String rules, String fault) {
            this(caughtBy, rules, fault, false);
        }

        Fault(String caughtBy, String rules, String fault, boolean leaseLevel) {
            this.declared = new Bite.Declared(caughtBy, rules, fault);
            this.leaseLevel = leaseLevel;
        }

        @Override
        public Bite.Declared declared() {
            return declared;
        }

        /** Whether the fault lies in the lease primitives, run on a lease table of the faulty store's own. */
        boolean leaseLevel() {
            return leaseLevel;
        }
    }

    private FaultyStores() {
    }

    /** The storage of one test: message rows in a reference store, a lease table, corrupted rows. */
    static final class Storage {
        final InMemoryOutboxStore rows;
        final ConcurrentMap<Integer, BucketLease> leases = new ConcurrentHashMap<>();
        final ConcurrentMap<String, Long> heartbeats = new ConcurrentHashMap<>();
        final Set<UUID> corrupt = ConcurrentHashMap.newKeySet();
        final Map<Integer, HeadFailure> headFailures = new ConcurrentHashMap<>();
        final AtomicLong writerSequence = new AtomicLong();
        final Set<Long> writtenSequences = ConcurrentHashMap.newKeySet();

        Storage(Clock clock, long maxPayloadBytes) {
            this.rows = InMemoryOutboxStore.builder().clock(clock).maxPayloadBytes(maxPayloadBytes).build();
        }
    }

    /**
     * A store over the storage of one test with one fault, or none.
     *
     * @param fault the fault; null for none
     * @param storage the test's storage
     * @param clock the store's clock
     * @return a new store instance
     */
    static OutboxStore create(Fault fault, Storage storage, Clock clock) {
        if (fault == Fault.BLOCKS_IN_EVERY_CALL || fault == Fault.THROWS_FROM_EVERY_CALL) {
            return down(fault);
        }
        return new FaultyStore(fault, storage, clock);
    }

    /** A store whose every call but close blocks or throws, as {@link Fault#BLOCKS_IN_EVERY_CALL} and the next say. */
    static CloseableOutboxStore down(Fault fault) {
        InvocationHandler down = (proxy, method, args) -> {
            if (method.getDeclaringClass() == Object.class) {
                return method.getName().equals("equals") ? proxy == args[0]
                        : method.getName().equals("hashCode") ? System.identityHashCode(proxy) : fault.name();
            }
            if (method.getName().equals("close")) {
                return null;
            }
            if (fault == Fault.THROWS_FROM_EVERY_CALL) {
                throw new IllegalStateException("the database is down");
            }
            long until = System.nanoTime() + BLOCKING.toNanos();
            while (System.nanoTime() < until) {
                LockSupport.parkNanos(until - System.nanoTime()); // deaf to interrupts, like a socket read
            }
            throw new IllegalStateException("no answer within " + BLOCKING);
        };
        return (CloseableOutboxStore) Proxy.newProxyInstance(CloseableOutboxStore.class.getClassLoader(),
                new Class<?>[] {CloseableOutboxStore.class}, down);
    }

    /** The provider of the stores that are down: what it opens blocks or throws, as the setting "fault" says. */
    @AutoService(OutboxStoreProvider.class)
    public static final class DownProvider implements OutboxStoreProvider {
        /** The provider name. */
        static final String NAME = "down-memory";

        /** Setting: the name of the fault, {@link Fault#BLOCKS_IN_EVERY_CALL} or {@link Fault#THROWS_FROM_EVERY_CALL}. */
        static final String FAULT = "fault";

        @Override
        public String name() {
            return NAME;
        }

        @Override
        public CloseableOutboxStore create(Map<String, String> config) {
            return down(Fault.valueOf(config.get(FAULT)));
        }
    }

    /**
     * The writer of {@link Fault#LOSES_RACING_WRITES}: it takes the sequence as the last one + 1,
     * read before its insert, and drops the message when the insert meets a sequence a racing writer
     * took (the swallowed duplicate key).
     *
     * @param storage the test's storage
     * @param messages the messages
     */
    static void enqueueRacily(Storage storage, List<OutboxMessage> messages) {
        messages.forEach(m -> StoredMessages.requirePayloadAtMost(m, storage.rows.maxPayloadBytes()));
        for (OutboxMessage message : messages) {
            long sequence = storage.writerSequence.get() + 1;
            Thread.yield();
            if (storage.writtenSequences.add(sequence)) {
                storage.writerSequence.set(sequence);
                storage.rows.enqueue(List.of(message));
            }
        }
    }

    /** The provider of {@link Fault#PROVIDER_IGNORES_UNKNOWN_SETTINGS}: the in-memory provider without its checks. */
    @AutoService(OutboxStoreProvider.class)
    public static final class LaxProvider implements OutboxStoreProvider {
        /** The provider name. */
        static final String NAME = "lax-memory";

        @Override
        public String name() {
            return NAME;
        }

        @Override
        public ConfigDef configDef() {
            return new ConfigDef();
        }

        @Override
        public CloseableOutboxStore create(Map<String, String> config) {
            return new InMemoryOutboxStoreProvider().create(Map.of(InMemoryOutboxStoreProvider.NAME_CONFIG,
                    config.get(InMemoryOutboxStoreProvider.NAME_CONFIG)));
        }
    }

    /** Message operations and capabilities go to the reference store, leases too unless the fault is in them. */
    private static final class FaultyStore implements ReadAhead.Self, PendingMetrics.Self, LeaseRenewal, LeaseRelease {
        private final Fault fault;
        private final Storage storage;
        private final InMemoryOutboxStore rows;
        private final Clock clock;
        private final Map<Integer, List<Pending>> lastBatch = new ConcurrentHashMap<>();
        private final LeaseAcquisition acquisition = new LeaseAcquisition();
        private final List<Pending> sharedBuffer = new ArrayList<>();
        private final DeadLetters deadLetters;

        FaultyStore(Fault fault, Storage storage, Clock clock) {
            this.fault = fault;
            this.storage = storage;
            this.rows = storage.rows;
            this.clock = clock;
            this.deadLetters = new FaultyDeadLetters(fault, storage, rows.deadLetters().orElseThrow());
        }

        private boolean is(Fault f) {
            return fault == f;
        }

        @Override
        public List<Integer> acquireBucketLeases(LeaseRequest request) {
            if (fault != null && fault.leaseLevel()) {
                return acquireOnOwnLeases(request);
            }
            List<Integer> owned = rows.acquireBucketLeases(is(Fault.IGNORES_BUSY_BUCKETS)
                    ? request.withBusyBuckets(List.of()) : request);
            if (is(Fault.RETURNS_BUCKETS_UNSORTED)) {
                List<Integer> reversed = new ArrayList<>(owned);
                Collections.reverse(reversed);
                return List.copyOf(reversed);
            }
            return owned;
        }

        private List<Integer> acquireOnOwnLeases(LeaseRequest request) {
            if (is(Fault.DROPS_ROWS_IN_UNKNOWN_BUCKETS)) {
                for (int bucket : rows.pendingBuckets()) {
                    if (bucket >= request.bucketCount()) {
                        rows.markPublished(bucket, rows.nextBatch(bucket, Integer.MAX_VALUE));
                    }
                }
            }
            OwnLeases primitives = new OwnLeases();
            if (is(Fault.JUDGES_EXPIRY_BY_CLOCK) || is(Fault.PLANS_FOR_SILENT_RELAYS)) {
                long now = clock.millis();
                primitives.writeHeartbeat(request.relayId(), now);
                LeaseSnapshot snapshot = primitives.readSnapshot(request.bucketCount());
                LeasePlan.Liveness byClock = LeasePlan.Liveness.byClock(now, request.leaseDurationMillis());
                LeasePlan plan = is(Fault.JUDGES_EXPIRY_BY_CLOCK)
                        ? LeasePlan.compute(request, now, snapshot.heartbeats(), snapshot.leases())
                        : LeasePlan.compute(request, now, snapshot.heartbeats(), snapshot.leases(), new LeasePlan.Liveness() {
                            @Override
                            public boolean heartbeatExpired(String relayId, long lastSeen) {
                                return byClock.heartbeatExpired(relayId, lastSeen);
                            }

                            @Override
                            public boolean heartbeatStale(String relayId, long lastSeen) {
                                return byClock.heartbeatStale(relayId, lastSeen);
                            }

                            @Override
                            public boolean leaseExpired(BucketLease lease) {
                                return byClock.leaseExpired(lease);
                            }
                        });
                primitives.createFreeLeases(plan.missingBuckets());
                primitives.writeLeases(LeaseWrites.of(plan));
                return primitives.readOwned(request.relayId(), now, request.bucketCount()).stream().sorted().toList();
            }
            Clock leaseClock = is(Fault.LEASES_BY_THE_SYSTEM_CLOCK) ? Clock.systemUTC() : clock;
            List<Integer> owned = acquisition.acquire(request, leaseClock, primitives);
            if (is(Fault.READ_BACK_INCLUDES_EXPIRED_LEASES) || is(Fault.ANSWERS_WITH_LEASES_IT_DID_NOT_WRITE)) {
                return primitives.lastReadBack.stream().sorted().toList();
            }
            if (is(Fault.DROPS_A_HELD_BUCKET_EACH_ROUND) && !request.heldBuckets().isEmpty() && !owned.isEmpty()) {
                int dropped = owned.get(0);
                storage.leases.computeIfPresent(dropped, (b, lease) -> new BucketLease(b, null, lease.expiresAtMillis()));
                return owned.subList(1, owned.size());
            }
            return owned;
        }

        /** The lease primitives over the faulty store's own lease table, with its fault. */
        private final class OwnLeases implements LeaseAcquisition.LeaseStore<RuntimeException> {
            /** What {@link #readOwned} last returned, before the recipe kept only the leases it wrote. */
            private List<Integer> lastReadBack = List.of();

            @Override
            public List<StrayRows> strayRows(int bucketCount) {
                List<Integer> outside = rows.pendingBuckets().stream()
                        .filter(b -> b >= bucketCount || (b < 0 && !is(Fault.IGNORES_ROWS_BELOW_BUCKET_ZERO)))
                        .toList();
                return List.of(StrayRows.of("pending rows", null, outside));
            }

            @Override
            public void writeHeartbeat(String relayId, long nowMillis) {
                storage.heartbeats.put(relayId, nowMillis);
            }

            @Override
            public LeaseSnapshot readSnapshot(int bucketCount) {
                Map<String, Long> heartbeats = new HashMap<>(storage.heartbeats);
                if (is(Fault.COUNTS_ONLY_LEASE_HOLDERS)) {
                    heartbeats.keySet().removeIf(relay -> storage.leases.values().stream()
                            .noneMatch(lease -> relay.equals(lease.owner())));
                }
                return new LeaseSnapshot(Map.copyOf(heartbeats), List.copyOf(storage.leases.values()));
            }

            @Override
            public void createFreeLeases(List<Integer> buckets) {
                buckets.forEach(b -> storage.leases.putIfAbsent(b, BucketLease.free(b)));
            }

            @Override
            public void writeLeases(LeaseWrites writes) {
                String me = writes.relayId();
                long now = writes.nowMillis();
                ConcurrentMap<Integer, BucketLease> leases = storage.leases;
                for (LeaseAcquisition.Keep keep : is(Fault.SKIPS_THE_KEEP_WRITE) ? List.<LeaseAcquisition.Keep>of()
                        : writes.keep()) {
                    leases.replace(keep.bucket(), keep.observed(), new BucketLease(keep.bucket(), me, keep.expiresAtMillis()));
                }
                if (!is(Fault.NEVER_RELEASES_THE_EXCESS)) {
                    for (BucketLease observed : writes.release()) {
                        leases.replace(observed.bucket(), observed, BucketLease.free(observed.bucket()));
                    }
                }
                for (BucketLease observed : writes.claim()) {
                    BucketLease claimed = new BucketLease(observed.bucket(), me, writes.claimExpiresAtMillis());
                    if (is(Fault.GRANTS_WITHOUT_CONDITIONAL_CHECK)) {
                        LockSupport.parkNanos(200_000); // the round trip between the read and the write
                        leases.put(observed.bucket(), claimed);
                    } else if (is(Fault.IGNORES_LEASE_EXPIRY)) {
                        leases.computeIfPresent(observed.bucket(),
                                (b, current) -> current.owner() == null && current.equals(observed) ? claimed : current);
                    } else if (is(Fault.JUDGES_EXPIRY_BY_CLOCK)) {
                        leases.computeIfPresent(observed.bucket(), (b, current) -> current.isClaimable(now) ? claimed : current);
                    } else {
                        leases.replace(observed.bucket(), observed, claimed);
                    }
                }
            }

            @Override
            public List<Integer> readOwned(String relayId, long nowMillis, int bucketCount) {
                List<Integer> owned = new ArrayList<>();
                storage.leases.values().forEach(lease -> {
                    boolean mine = is(Fault.IGNORES_LEASE_EXPIRY) || is(Fault.READ_BACK_INCLUDES_EXPIRED_LEASES)
                            ? relayId.equals(lease.owner()) : lease.isHeldBy(relayId, nowMillis);
                    if (mine && lease.bucket() < bucketCount) {
                        owned.add(lease.bucket());
                    }
                });
                lastReadBack = List.copyOf(owned);
                return owned;
            }
        }

        @Override
        public Optional<LeaseRenewal> leaseRenewal() {
            return fault != null && fault.leaseLevel() ? Optional.empty() : Optional.of(this);
        }

        @Override
        public List<Integer> renewBucketLeases(LeaseRequest request) {
            return is(Fault.RENEWAL_IGNORES_EXPIRY) ? request.heldBuckets() : rows.renewBucketLeases(request);
        }

        @Override
        public Optional<LeaseRelease> leaseRelease() {
            return fault != null && fault.leaseLevel() ? Optional.empty() : Optional.of(this);
        }

        @Override
        public void releaseBucketLeases(String relayId) {
            if (!is(Fault.RELEASE_DOES_NOTHING)) {
                rows.releaseBucketLeases(relayId);
            }
        }

        @Override
        public Optional<DeadLetters> deadLetters() {
            return Optional.of(deadLetters);
        }

        @Override
        public Optional<LeaseView> leaseView() {
            return Optional.of(bucketCount -> {
                LeaseTable table;
                if (fault != null && fault.leaseLevel()) {
                    LeaseTable.requireBucketCount(bucketCount);
                    table = LeaseTable.of(clock.millis(), Map.copyOf(storage.heartbeats),
                            List.copyOf(storage.leases.values()), bucketCount);
                } else {
                    table = rows.leaseView().orElseThrow().leaseTable(bucketCount);
                }
                if (!is(Fault.LEASE_VIEW_FREES_EXPIRED_LEASES)) {
                    return table;
                }
                List<BucketLease> freed = table.leases().stream().map(lease -> lease.isClaimable(table.readAtMillis())
                        ? BucketLease.free(lease.bucket()) : lease).toList();
                return new LeaseTable(table.readAtMillis(), table.heartbeats(), freed);
            });
        }

        @Override
        public PendingSnapshot pendingMetrics(Duration timeout) {
            if (!is(Fault.OLDEST_FROM_THE_HEADS_ONLY)) {
                return rows.pendingMetrics(timeout);
            }
            Instant oldest = null;
            for (int bucket : rows.pendingBuckets()) {
                Instant head = rows.nextBatch(bucket, 1).get(0).message().createdAt();
                oldest = oldest == null || head.isBefore(oldest) ? head : oldest;
            }
            return new PendingSnapshot(rows.pendingMetrics(timeout).pendingCount(), oldest);
        }

        @Override
        public List<Integer> bucketsWithPending(List<Integer> buckets) {
            if (is(Fault.PROBES_NEGATIVE_BUCKETS) && buckets != null) {
                return rows.bucketsWithPending(buckets.stream().filter(b -> b == null || b >= 0).toList());
            }
            if (is(Fault.PROBES_IN_REQUEST_ORDER)) {
                Set<Integer> pending = Set.copyOf(rows.bucketsWithPending(buckets));
                return buckets.stream().filter(pending::contains).toList();
            }
            return rows.bucketsWithPending(buckets);
        }

        @Override
        public List<Pending> nextBatch(int bucket, int maxCount, long maxBytes) {
            if ((is(Fault.READS_A_NEGATIVE_BUCKET) && bucket < 0) || (is(Fault.ACCEPTS_MAX_COUNT_BELOW_ONE) && maxCount < 1)) {
                return List.of();
            }
            int asked = is(Fault.RETURNS_MORE_THAN_MAX_COUNT) && maxCount < Integer.MAX_VALUE ? maxCount + 1 : maxCount;
            long budget = is(Fault.IGNORES_THE_BYTE_BUDGET) ? Long.MAX_VALUE : maxBytes;
            List<Pending> batch = readable(bucket, rows.nextBatch(bucket, asked, budget));
            lastBatch.put(bucket, batch);
            if (is(Fault.RETURNS_BATCH_OUT_OF_ORDER)) {
                List<Pending> reversed = new ArrayList<>(batch);
                Collections.reverse(reversed);
                return List.copyOf(reversed);
            }
            if (is(Fault.SHARES_A_BUFFER_BETWEEN_CALLS)) {
                sharedBuffer.clear();
                for (Pending p : batch) {
                    sharedBuffer.add(p);
                    Thread.yield();
                }
                return List.copyOf(sharedBuffer);
            }
            return batch;
        }

        /** The batch as the store decodes it: up to a corrupted row (R12), with this fault's transformations. */
        private List<Pending> readable(int bucket, List<Pending> batch) {
            List<Pending> read = new ArrayList<>();
            for (Pending p : batch) {
                OutboxMessage m = p.message();
                if (storage.corrupt.contains(m.messageId())) {
                    if (is(Fault.CORRUPT_ROW_WITHOUT_ITS_ID)) {
                        throw new IllegalStateException("cannot decode the headers of a row");
                    }
                    throw new CorruptMessageException(bucket, m.messageId(), read, "headers cannot be decoded", null);
                }
                if (is(Fault.EXPIRES_OLD_ROWS) && m.createdAt().isBefore(clock.instant().minus(Duration.ofDays(365)))) {
                    continue;
                }
                if (is(Fault.EMPTY_VALUE_BECOMES_NULL) && m.value() != null && m.value().length == 0) {
                    p = new Pending(StoredMessages.rebuild(m.messageId(), m.bucket(), m.topic(), m.key(), null,
                            m.headers(), m.partition(), m.createdAt()), p.handle());
                }
                read.add(p);
            }
            return List.copyOf(read);
        }

        @Override
        public List<Pending> nextBatchExcluding(int bucket, List<Pending> inFlight, int maxCount, long maxBytes) {
            if (!is(Fault.READS_AHEAD_AFTER_THE_LAST_POSITION) || inFlight.isEmpty()) {
                return rows.nextBatchExcluding(bucket, inFlight, maxCount, maxBytes);
            }
            List<Pending> visible = rows.nextBatch(bucket, Integer.MAX_VALUE);
            UUID last = inFlight.get(inFlight.size() - 1).message().messageId();
            int after = 0;
            while (after < visible.size() && !visible.get(after).message().messageId().equals(last)) {
                after++;
            }
            int from = Math.min(after + 1, visible.size());
            return BatchBytes.prefix(visible.subList(from, Math.min(visible.size(), from + maxCount)), maxBytes);
        }

        @Override
        public void markPublished(int bucket, List<Pending> published) {
            if (is(Fault.DELETES_NOTHING)) {
                return;
            }
            if (is(Fault.IGNORES_FOREIGN_MESSAGES)) {
                for (Pending m : published) {
                    try {
                        rows.markPublished(bucket, List.of(m));
                    } catch (IllegalArgumentException notOurs) {
                        // skipped silently: the fault
                    }
                }
            } else if (is(Fault.DELETES_FROM_ANOTHER_BUCKET)) {
                published.forEach(p -> rows.markPublished(p.message().bucket(), List.of(p)));
            } else if (is(Fault.DELETES_BEYOND_THE_PREFIX) && !published.isEmpty()) {
                rows.markPublished(bucket, lastBatch.getOrDefault(bucket, published));
            } else if (is(Fault.DELETES_BY_SEQUENCE_RANGE) && !published.isEmpty()) {
                List<Pending> visible = rows.nextBatch(bucket, Integer.MAX_VALUE);
                UUID last = published.get(published.size() - 1).message().messageId();
                int through = 0;
                while (through < visible.size() && !visible.get(through).message().messageId().equals(last)) {
                    through++;
                }
                rows.markPublished(bucket, visible.subList(0, Math.min(through + 1, visible.size())));
            } else {
                rows.markPublished(bucket, published);
            }
        }
    }

    /** The reference store's dead letters with one fault; a corrupted row's dead letter keeps the corrupt blob. */
    private static final class FaultyDeadLetters implements DeadLetters {
        private final Fault fault;
        private final Storage storage;
        private final DeadLetters dead;
        private final Map<Integer, HeadFailure> ownHeads = new ConcurrentHashMap<>();

        FaultyDeadLetters(Fault fault, Storage storage, DeadLetters dead) {
            this.fault = fault;
            this.storage = storage;
            this.dead = dead;
        }

        private boolean is(Fault f) {
            return fault == f;
        }

        private boolean pending(int bucket, UUID messageId) {
            return storage.rows.nextBatch(bucket, 1_000).stream().anyMatch(p -> p.message().messageId().equals(messageId));
        }

        @Override
        public boolean moveToDeadLetters(int bucket, UUID messageId, DeadLetterFailure failure) {
            if (is(Fault.MOVES_FROM_A_NEGATIVE_BUCKET) && bucket < 0) {
                return false;
            }
            if (is(Fault.MOVES_WHAT_IS_NOT_PENDING) && !pending(bucket, messageId)) {
                return true;
            }
            if (is(Fault.MOVE_CHECKS_THEN_MOVES)) {
                boolean was = pending(bucket, messageId);
                LockSupport.parkNanos(20_000_000); // the round trip between the read and the move
                try {
                    dead.moveToDeadLetters(bucket, messageId, failure);
                } catch (RuntimeException ignored) {
                    // the other mover's dead letter is there already
                }
                return was;
            }
            Optional<DeadLetter> existing = dead.deadLetter(messageId);
            if (is(Fault.MOVE_REFUSES_A_REPEAT) && existing.isPresent()) {
                throw new DeadLetterConflictException(bucket, messageId, "the faulty dead letters");
            }
            if (is(Fault.MOVE_OVERWRITES_ANOTHER_RECORD) && existing.isPresent()) {
                dead.purgeDeadLetter(messageId);
            }
            OutboxMessage moved = storage.rows.nextBatch(bucket, 1_000).stream().map(Pending::message)
                    .filter(m -> m.messageId().equals(messageId)).findFirst().orElse(null);
            DeadLetterFailure recorded = is(Fault.MOVE_LOSES_THE_ATTEMPTS) ? new DeadLetterFailure(failure.reason(),
                    failure.causeClass(), 1, failure.firstFailureAt(), failure.lastFailureAt(), failure.relayId()) : failure;
            boolean done = dead.moveToDeadLetters(bucket, messageId, recorded);
            if (done && moved != null && is(Fault.MOVED_MESSAGE_STAYS_PENDING)) {
                storage.rows.insertRow(bucket, moved);
            }
            return done;
        }

        @Override
        public boolean recordHeadFailure(int bucket, UUID messageId, DeadLetterFailure failure) {
            if (is(Fault.HEAD_FAILURE_IN_THE_INSTANCE)) {
                if (!pending(bucket, messageId)) {
                    return false;
                }
                ownHeads.put(bucket, new HeadFailure(bucket, messageId, failure));
                return true;
            }
            boolean recorded = dead.recordHeadFailure(bucket, messageId, failure);
            if (recorded) {
                storage.headFailures.put(bucket, new HeadFailure(bucket, messageId, failure));
            }
            return recorded;
        }

        @Override
        public List<HeadFailure> headFailures(List<Integer> buckets) {
            if (is(Fault.HEAD_FAILURE_IN_THE_INSTANCE)) {
                List<Integer> asked = StoreArguments.requireBuckets(buckets);
                return asked.stream().map(ownHeads::get).filter(h -> h != null && storage.rows.nextBatch(h.bucket(), 1)
                        .stream().anyMatch(p -> p.message().messageId().equals(h.messageId()))).toList();
            }
            if (is(Fault.HEAD_FAILURE_OUTLIVES_ITS_MESSAGE)) {
                List<Integer> asked = StoreArguments.requireBuckets(buckets);
                return asked.stream().map(storage.headFailures::get).filter(Objects::nonNull).toList();
            }
            return dead.headFailures(buckets);
        }

        @Override
        public List<DeadLetter> deadLetters(UUID after, int limit) {
            if (is(Fault.LIST_REPEATS_THE_CURSOR) && after != null) {
                List<DeadLetter> page = new ArrayList<>();
                dead.deadLetter(after).ifPresent(page::add);
                page.addAll(dead.deadLetters(after, limit));
                return List.copyOf(page.subList(0, Math.min(limit, page.size())));
            }
            return dead.deadLetters(after, limit);
        }

        @Override
        public Optional<DeadLetter> deadLetter(UUID messageId) {
            return dead.deadLetter(messageId).map(d -> storage.corrupt.contains(messageId) ? new DeadLetter(d.messageId(),
                    d.bucket(), d.topic(), d.key(), d.value(), CORRUPT_HEADERS, d.partition(), d.createdAt(), d.failure(),
                    d.deadLetteredAt()) : d);
        }

        @Override
        public boolean replayDeadLetter(UUID messageId) {
            if (is(Fault.REPLAY_KEEPS_THE_DEAD_LETTER)) {
                Optional<DeadLetter> d = dead.deadLetter(messageId);
                d.ifPresent(letter -> storage.rows.insertRow(letter.bucket(), StoredMessages.rebuild(letter.messageId(),
                        letter.bucket(), letter.topic(), letter.key(), letter.value(), letter.decodedHeaders(),
                        letter.partition(), letter.createdAt())));
                return d.isPresent();
            }
            return dead.replayDeadLetter(messageId);
        }

        @Override
        public boolean purgeDeadLetter(UUID messageId) {
            if (is(Fault.PURGE_REMOVES_EVERY_DEAD_LETTER)) {
                boolean found = dead.deadLetter(messageId).isPresent();
                for (DeadLetter d : dead.deadLetters(null, 1_000)) {
                    dead.purgeDeadLetter(d.messageId());
                }
                return found;
            }
            return dead.purgeDeadLetter(messageId);
        }
    }
}
