package io.outbox.spi.support;

import io.outbox.spi.LeaseRequest;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.OutboxStore;
import java.time.Clock;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The acquire recipe of {@link OutboxStore#acquireBucketLeases} (rules S4, S4b, S5, S6, S7, S8,
 * S11), written once over a few primitives the store supplies ({@link LeaseStore}). Every store
 * calls {@link #acquire}; none keeps its own copy of the steps:
 * <ol>
 *   <li>{@code now} from the store's {@link Clock} (S11).</li>
 *   <li>S8, both ways: {@link LeaseStore#strayRows} reports pending rows (or a writer's
 *       bookkeeping, such as sequence counters) in a bucket below 0 or at or above
 *       {@code bucketCount}; any makes the call throw {@link OutboxMisconfigurationException}
 *       naming the buckets, before anything is written.</li>
 *   <li>The caller's heartbeat ({@link LeaseStore#writeHeartbeat}).</li>
 *   <li>One snapshot of heartbeats and leases ({@link LeaseStore#readSnapshot}), planned with
 *       {@link LeasePlan#compute}.</li>
 *   <li>Missing lease rows created free ({@link LeaseStore#createFreeLeases}; a store whose
 *       claim is a conditional upsert needs none and keeps the default no-op).</li>
 *   <li>The keep, release and claim writes ({@link LeaseStore#writeLeases}), each conditional
 *       as {@link LeaseWrites} documents; a refused write is no error.</li>
 *   <li>Stale heartbeats deleted, fenced by the time observed ({@link LeaseStore#deleteStaleHeartbeats}).</li>
 *   <li>The owned leases read back ({@link LeaseStore#readOwned}): what the call returns, ascending,
 *       limited to {@code [0, bucketCount)}.</li>
 * </ol>
 * Exclusivity (S5) rests on the conditions of the writes alone: the store's database evaluates
 * each atomically on one row. The plan keeps relays that see the same membership from ever
 * writing the same lease (S4b).
 *
 * <p>Stateless and thread-safe; the primitives are called on the calling thread, in the order
 * above, at most once each per call.
 */
public final class LeaseAcquisition {

    private LeaseAcquisition() {
    }

    /**
     * Runs the acquire recipe.
     *
     * @param <E> the checked exception the primitives may throw ({@link RuntimeException} when none)
     * @param request the relay's request; not null
     * @param clock the store's clock, the source of {@code now} (S11); not null
     * @param store the store's primitives; not null
     * @return the buckets the relay owns after the call, read back, ascending, distinct, each in
     *     {@code [0, bucketCount)}; immutable
     * @throws OutboxMisconfigurationException if {@link LeaseStore#strayRows} reports rows outside
     *     {@code [0, bucketCount)} (S8)
     * @throws NullPointerException if an argument is null, or a primitive returns null
     * @throws E whatever a primitive throws
     */
    public static <E extends Exception> List<Integer> acquire(LeaseRequest request, Clock clock, LeaseStore<E> store)
            throws E {
        StoreArguments.requireRequest(request);
        Objects.requireNonNull(clock, "clock must not be null");
        Objects.requireNonNull(store, "store must not be null");
        long now = clock.millis();
        int bucketCount = request.bucketCount();
        String me = request.relayId();
        requireNoStrayRows(store.strayRows(bucketCount), bucketCount);
        store.writeHeartbeat(me, now);
        LeaseSnapshot snapshot = Objects.requireNonNull(store.readSnapshot(bucketCount),
                "readSnapshot returned null");
        LeasePlan plan = LeasePlan.compute(request, now, snapshot.heartbeats(), snapshot.leases());
        if (!plan.missingBuckets().isEmpty()) {
            store.createFreeLeases(plan.missingBuckets());
        }
        LeaseWrites writes = LeaseWrites.of(plan);
        if (!writes.isEmpty()) {
            store.writeLeases(writes);
        }
        if (!plan.staleRelays().isEmpty()) {
            store.deleteStaleHeartbeats(plan.staleRelays());
        }
        return normalized(Objects.requireNonNull(store.readOwned(me, now, bucketCount), "readOwned returned null"),
                bucketCount);
    }

    /**
     * S8: fails when rows lie outside {@code [0, bucketCount)}.
     *
     * @param stray what {@link LeaseStore#strayRows} found; not null
     * @param bucketCount the relay's bucket count
     * @throws OutboxMisconfigurationException if any entry names a bucket
     */
    static void requireNoStrayRows(List<StrayRows> stray, int bucketCount) {
        Objects.requireNonNull(stray, "strayRows returned null");
        List<String> found = new ArrayList<>();
        for (StrayRows rows : stray) {
            if (!rows.buckets().isEmpty()) {
                found.add(rows.describe());
            }
        }
        if (!found.isEmpty()) {
            throw new OutboxMisconfigurationException(String.join("; ", found) + ": outside [0, " + bucketCount
                    + "), so no relay ever leases them. Writers and relays disagree on bucketCount, or something other"
                    + " than the outbox writer wrote these rows; give every writer and relay the same bucketCount"
                    + " (rule S8)");
        }
    }

    private static List<Integer> normalized(List<Integer> owned, int bucketCount) {
        BitSet set = new BitSet(bucketCount);
        for (Integer bucket : owned) {
            int b = Objects.requireNonNull(bucket, "readOwned returned a null bucket");
            if (b >= 0 && b < bucketCount) {
                set.set(b);
            }
        }
        return set.stream().boxed().toList();
    }

    /**
     * The primitives a store supplies to {@link LeaseAcquisition#acquire}: plain reads and
     * conditional single-row writes, each mapped onto one or a few statements of its database.
     * Implementations are usually short-lived (bound to one connection for one call) or the
     * store itself.
     *
     * @param <E> the checked exception the primitives throw ({@code SQLException} for JDBC;
     *     {@link RuntimeException} when none)
     */
    public interface LeaseStore<E extends Exception> {

        /**
         * S8: finds pending rows (and any bookkeeping a writer leaves per bucket, such as sequence
         * counters) in a bucket below 0 or at or above {@code bucketCount}. Should be an index
         * seek, not a scan: it runs on every acquire. Reporting the lowest such bucket on each
         * side is enough.
         *
         * @param bucketCount the relay's bucket count
         * @return one entry per kind of row checked; entries with no buckets mean none found;
         *     not null
         * @throws E on a database error
         */
        List<StrayRows> strayRows(int bucketCount) throws E;

        /**
         * Records (upserts) the relay's heartbeat: {@code relayId, lastSeen = nowMillis}.
         *
         * @param relayId the relay
         * @param nowMillis the time, epoch milliseconds
         * @throws E on a database error
         */
        void writeHeartbeat(String relayId, long nowMillis) throws E;

        /**
         * Reads every relay's heartbeat and the lease rows of buckets in {@code [0, bucketCount)}
         * (rows of other buckets may be included; they are ignored), one query each where the
         * database allows.
         *
         * @param bucketCount the relay's bucket count
         * @return the snapshot; not null
         * @throws E on a database error
         */
        LeaseSnapshot readSnapshot(int bucketCount) throws E;

        /**
         * Creates free lease rows (no owner, expiry 0) for buckets that have none, idempotently: a
         * row a concurrent relay created first is as good. The default does nothing, for stores
         * whose claim writes a missing row itself (a conditional upsert).
         *
         * @param buckets the buckets without a row, ascending; not empty
         * @throws E on a database error other than a duplicate key
         */
        default void createFreeLeases(List<Integer> buckets) throws E {
        }

        /**
         * Performs the keep, release and claim writes, each a conditional write on one lease row
         * that the database evaluates atomically; see {@link LeaseWrites} for each condition. A
         * refused condition is not an error (another relay moved first). The store may send them
         * as one batch.
         *
         * @param writes the writes; not empty
         * @throws E on a database error
         */
        void writeLeases(LeaseWrites writes) throws E;

        /**
         * Deletes the heartbeats of relays silent for {@value LeasePlan#STALE_HEARTBEAT_LEASES}
         * lease durations, each fenced by the {@code lastSeen} observed (a relay that came back
         * keeps its row). The default does nothing: stale heartbeats then only cost space.
         *
         * @param stale relay id to observed {@code lastSeen}; not empty
         * @throws E on a database error
         */
        default void deleteStaleHeartbeats(Map<String, Long> stale) throws E {
        }

        /**
         * Reads back the buckets whose lease row has {@code owner = relayId} and
         * {@code expiresAt > nowMillis}.
         *
         * @param relayId the relay
         * @param nowMillis the time of this acquire, epoch milliseconds
         * @param bucketCount the relay's bucket count; rows outside {@code [0, bucketCount)} may be
         *     returned, they are dropped
         * @return the buckets in any order; not null
         * @throws E on a database error
         */
        List<Integer> readOwned(String relayId, long nowMillis, int bucketCount) throws E;
    }

    /**
     * Heartbeats and lease rows as read in one snapshot.
     *
     * @param heartbeats relay id to last heartbeat, epoch milliseconds; not null
     * @param leases the lease rows; not null, no null elements, one per bucket
     */
    public record LeaseSnapshot(Map<String, Long> heartbeats, Collection<BucketLease> leases) {

        /**
         * Checks the fields.
         *
         * @param heartbeats the heartbeats
         * @param leases the leases
         * @throws NullPointerException if a field is null
         */
        public LeaseSnapshot {
            Objects.requireNonNull(heartbeats, "heartbeats must not be null");
            Objects.requireNonNull(leases, "leases must not be null");
        }
    }

    /**
     * Rows of one kind found outside {@code [0, bucketCount)} (S8). The exception's message reads
     * {@code "<rows> in bucket(s) [<buckets>] of <location> (<remedy>): outside [0, <bucketCount>) ..."}.
     *
     * @param rows what the rows are, e.g. {@code "pending outbox messages"}; not null
     * @param location where they live, e.g. {@code "table public.outbox_messages"}, or null
     * @param buckets the stray buckets found, ascending; not null, empty when none; immutable
     * @param remedy what an operator can do beyond aligning bucketCount, or null
     */
    public record StrayRows(String rows, String location, List<Integer> buckets, String remedy) {

        /**
         * Checks and copies the fields.
         *
         * @param rows what the rows are
         * @param location where they live, or null
         * @param buckets the buckets found
         * @param remedy the remedy, or null
         * @throws NullPointerException if {@code rows} or {@code buckets} is null
         */
        public StrayRows {
            Objects.requireNonNull(rows, "rows must not be null");
            buckets = List.copyOf(new java.util.TreeSet<>(buckets));
        }

        /**
         * Rows of a kind in the given stray buckets, without a remedy.
         *
         * @param rows what the rows are
         * @param location where they live, or null
         * @param buckets the stray buckets found; may be empty
         * @return the finding
         */
        public static StrayRows of(String rows, String location, List<Integer> buckets) {
            return new StrayRows(rows, location, buckets, null);
        }

        String describe() {
            return rows + " in bucket(s) " + buckets + (location == null ? "" : " of " + location)
                    + (remedy == null ? "" : " (" + remedy + ")");
        }
    }

    /**
     * Lease writes a store performs, derived from a {@link LeasePlan}. Each is conditional on one
     * row:
     * <ul>
     *   <li>{@link #keep()}: where {@code owner = relayId and expiresAt = observed expiry}, set
     *       {@code expiresAt = } {@link Keep#expiresAtMillis()} (never shorter than before, S5).</li>
     *   <li>{@link #release()}: same condition, set {@code owner = null} (the expiry stays).</li>
     *   <li>{@link #claim()}: where {@code owner is null or expiresAt <= nowMillis} (a missing
     *       row counts as free), set {@code owner = relayId, expiresAt = }
     *       {@link #claimExpiresAtMillis()}.</li>
     * </ul>
     *
     * @param relayId the relay writing; not null
     * @param nowMillis the time of this acquire, epoch milliseconds
     * @param keep the leases to extend, ascending by bucket; immutable
     * @param release the leases to give back, as observed, ascending by bucket; immutable
     * @param claim the free or expired leases to take, as observed, ascending by bucket; immutable
     * @param claimExpiresAtMillis the expiry a claim writes, epoch milliseconds
     */
    public record LeaseWrites(String relayId, long nowMillis, List<Keep> keep, List<BucketLease> release,
                              List<BucketLease> claim, long claimExpiresAtMillis) {

        /**
         * Checks and copies the fields.
         *
         * @param relayId the relay
         * @param nowMillis now
         * @param keep the keeps
         * @param release the releases
         * @param claim the claims
         * @param claimExpiresAtMillis the claim expiry
         * @throws NullPointerException if a field or element is null
         */
        public LeaseWrites {
            Objects.requireNonNull(relayId, "relayId must not be null");
            keep = List.copyOf(keep);
            release = List.copyOf(release);
            claim = List.copyOf(claim);
        }

        /**
         * The writes of a plan.
         *
         * @param plan the plan; not null
         * @return its writes
         */
        public static LeaseWrites of(LeasePlan plan) {
            List<Keep> keep = new ArrayList<>(plan.keep().size());
            for (BucketLease observed : plan.keep()) {
                keep.add(new Keep(observed, plan.renewedExpiry(observed)));
            }
            return new LeaseWrites(plan.request().relayId(), plan.nowMillis(), keep, plan.release(), plan.claim(),
                    plan.claimExpiry());
        }

        /**
         * Whether there is nothing to write.
         *
         * @return true when keep, release and claim are all empty
         */
        public boolean isEmpty() {
            return keep.isEmpty() && release.isEmpty() && claim.isEmpty();
        }
    }

    /**
     * One keep write.
     *
     * @param observed the lease as read (the condition: owner and expiry unchanged); not null
     * @param expiresAtMillis the expiry to write, {@code >= observed.expiresAtMillis()}
     */
    public record Keep(BucketLease observed, long expiresAtMillis) {

        /**
         * Checks the fields.
         *
         * @param observed the lease as read
         * @param expiresAtMillis the new expiry
         * @throws NullPointerException if {@code observed} is null
         */
        public Keep {
            Objects.requireNonNull(observed, "observed must not be null");
        }

        /**
         * The bucket kept.
         *
         * @return {@code observed().bucket()}
         */
        public int bucket() {
            return observed.bucket();
        }
    }
}
