package io.outbox.spi.support;

import io.outbox.spi.LeaseRequest;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.OutboxStore;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The acquire recipe of {@link OutboxStore#acquireBucketLeases} (rules S4, S4b, S5, S6, S7, S8,
 * S11, S13, R14), written once over a few primitives the store supplies ({@link LeaseStore}). Every store
 * calls {@link #acquire}; none keeps its own copy of the steps:
 * <ol>
 *   <li>{@code now} from the store's {@link Clock} (S11).</li>
 *   <li>S8, both ways: {@link LeaseStore#strayRows} reports pending rows (or a writer's
 *       bookkeeping, such as sequence counters) in a bucket below 0 or at or above
 *       {@code bucketCount}; any makes the call throw {@link OutboxMisconfigurationException}
 *       naming the buckets, before anything is written.</li>
 *   <li>The caller's heartbeat ({@link LeaseStore#writeHeartbeat}).</li>
 *   <li>One snapshot of heartbeats and leases ({@link LeaseStore#readSnapshot}), then the clock
 *       read again (the time of observation, S13), planned with
 *       {@link LeasePlan#compute}.</li>
 *   <li>Missing lease rows created free ({@link LeaseStore#createFreeLeases}; a store whose
 *       claim is a conditional upsert needs none and keeps the default no-op).</li>
 *   <li>The keep, release and claim writes ({@link LeaseStore#writeLeases}), each conditional
 *       as {@link LeaseWrites} documents; a refused write is no error.</li>
 *   <li>Stale heartbeats deleted, fenced by the time observed ({@link LeaseStore#deleteStaleHeartbeats}).</li>
 *   <li>The owned leases read back ({@link LeaseStore#readOwned}), limited to those this call
 *       kept or claimed: what the call returns, ascending. A lease of the caller's that it judged
 *       expired (time passed between its two readings of the clock) and left to a peer is not
 *       returned, though its stored expiry may still be ahead of {@code now} (S5).</li>
 * </ol>
 * Exclusivity (S5) rests on the conditions of the writes alone: the store's database evaluates
 * each atomically on one row. The plan keeps relays that see the same membership from ever
 * writing the same lease (S4b).
 *
 * <h2>Liveness by observed change (S13)</h2>
 * An instance remembers, per relay id that calls it, the last value it read of each peer's
 * heartbeat and of each bucket's lease ({@code owner, expiresAt}), with the time it first read
 * that value on its own clock. A peer's heartbeat or a held lease counts as expired only once
 * its value has stayed unchanged for one lease duration of the caller's clock since the caller
 * first saw it; stored timestamps are never compared with the caller's clock. A free lease (no
 * owner) is claimable at once. Every claim is conditional on the exact value observed, so of two
 * relays that judge differently at most one write lands. A live relay's writes always change the
 * stored value even when its clock went back: its heartbeat is {@code max(previous + 1, now)},
 * a kept lease's expiry {@code max(observed + 1, now + leaseDuration)}.
 *
 * <p>The same observations give the plan what rule R14 needs: a peer is <em>renewing</em> while
 * its heartbeat changed within half a lease duration of the caller's clock, and a claimable lease
 * (free, or expired as above) is <em>overdue</em> once it has stayed claimable and unchanged for a
 * quarter lease duration since the caller first judged it so. With every relay renewing at
 * {@code renewInterval}, a bucket whose holder died is claimed by a live relay within
 * {@code leaseDuration + 3 * renewInterval} of the holder's last write: at most
 * {@code renewInterval} until a live peer first reads that write; a lease duration, rounded up to
 * its next call, until it judges it expired and the relay the plan names claims it; and if that
 * relay does not, the overdue claim of whichever peer still sees it claimable, at that peer's first
 * call a quarter lease duration after its judgement. That last step takes one renew interval when
 * the renew interval is at least a quarter lease, and at most a quarter lease plus one renew
 * interval when it is shorter (a bound of {@code 1.25 * leaseDuration + 3 * renewInterval}). Either
 * way the wait is at most two lease durations when the renew interval is at most a third of the
 * lease, as by default.
 *
 * <p>Clock assumptions that remain: every relay's clock runs at about the same rate (an
 * interval of one lease duration on one clock is about one on another); their offsets are
 * irrelevant. Elapsed time is the sum of the forward steps of the caller's clock between its
 * calls (a step back counts as zero), so a clock set back delays takeover by nothing more than
 * the intervals it swallows, and a clock set forward expires only values that did not change
 * since the caller's previous call. A relay that has just started has observed nothing: it takes
 * over a dead relay's buckets one lease duration after its first call.
 *
 * <p>Thread-safe. Memory: per relay id, one entry per bucket and one per peer heartbeat of the
 * last snapshot; the state of a relay id that has not called for
 * {@value LeasePlan#STALE_HEARTBEAT_LEASES} lease durations is dropped. A store keeps one
 * instance for its lifetime; the primitives are called on the calling thread, in the order
 * above, at most once each per call.
 */
public final class LeaseAcquisition {

    private final ConcurrentHashMap<String, Observer> observers = new ConcurrentHashMap<>();

    /** A fresh instance that has observed nothing. */
    public LeaseAcquisition() {
    }

    /**
     * Runs the acquire recipe.
     *
     * @param <E> the checked exception the primitives may throw ({@link RuntimeException} when none)
     * @param request the relay's request; not null
     * @param clock the store's clock, the source of {@code now} (S11); not null
     * @param store the store's primitives; not null
     * @return the buckets the relay owns after the call, read back, ascending, distinct, each in
     *     {@code [0, bucketCount)}; immutable. Only buckets this call kept or claimed are returned
     *     (S5): the caller counts on each lasting a lease duration from the start of its call, and a
     *     lease of its own that it judged expired during the call and left to a peer may still show
     *     an expiry after {@code now}.
     * @throws OutboxMisconfigurationException if {@link LeaseStore#strayRows} reports rows outside
     *     {@code [0, bucketCount)} (S8)
     * @throws NullPointerException if an argument is null, or a primitive returns null
     * @throws E whatever a primitive throws
     */
    public <E extends Exception> List<Integer> acquire(LeaseRequest request, Clock clock, LeaseStore<E> store)
            throws E {
        StoreArguments.requireRequest(request);
        Objects.requireNonNull(clock, "clock must not be null");
        Objects.requireNonNull(store, "store must not be null");
        long now = clock.millis();
        int bucketCount = request.bucketCount();
        long duration = request.leaseDurationMillis();
        String me = request.relayId();
        requireNoStrayRows(store.strayRows(bucketCount), bucketCount);
        Observer observer = observers.computeIfAbsent(me, id -> new Observer());
        long heartbeat;
        synchronized (observer) {
            heartbeat = observer.nextHeartbeat(now);
        }
        store.writeHeartbeat(me, heartbeat);
        LeaseSnapshot snapshot = Objects.requireNonNull(store.readSnapshot(bucketCount),
                "readSnapshot returned null");
        // The time of observation is read after the snapshot returns: a value counts as first seen
        // no earlier than it was actually read, so "unchanged for a lease duration since first seen"
        // never credits time from before the holder wrote it, however long this call took (S5).
        long observedAt = clock.millis();
        LeasePlan.Liveness liveness;
        synchronized (observer) {
            liveness = observer.observe(me, observedAt, duration, bucketCount, snapshot);
        }
        LeasePlan plan = LeasePlan.compute(request, now, snapshot.heartbeats(), snapshot.leases(), liveness);
        if (!plan.missingBuckets().isEmpty()) {
            store.createFreeLeases(plan.missingBuckets());
        }
        LeaseWrites writes = LeaseWrites.of(plan);
        if (!writes.isEmpty()) {
            synchronized (observer) {
                observer.noteWrites(writes);
            }
            store.writeLeases(writes);
        }
        if (!plan.staleRelays().isEmpty()) {
            store.deleteStaleHeartbeats(plan.staleRelays());
        }
        forgetIdleObservers(me, now, duration);
        BitSet written = new BitSet(bucketCount);
        writes.keep().forEach(keep -> written.set(keep.bucket()));
        writes.claim().forEach(claimed -> written.set(claimed.bucket()));
        return normalized(Objects.requireNonNull(store.readOwned(me, now, bucketCount), "readOwned returned null"),
                written);
    }

    private void forgetIdleObservers(String me, long now, long duration) {
        if (observers.size() <= 1) {
            return;
        }
        long idle = LeasePlan.STALE_HEARTBEAT_LEASES * duration;
        observers.forEach((id, observer) -> {
            if (!id.equals(me) && observer.idleLongerThan(now, idle)) {
                observers.remove(id, observer);
            }
        });
    }

    /**
     * What one relay id has observed; guarded by its own monitor. Buckets are kept in arrays
     * indexed by bucket and updated in place, so an observation costs one pass over the snapshot
     * and no per-bucket allocation: at 65,536 buckets a map of boxed entries, rebuilt and copied on
     * every call, was most of an acquisition's CPU time.
     */
    private static final class Observer {

        private long lastNow;
        private boolean started;
        /** Elapsed time on the caller's clock, forward steps only. */
        private long elapsed;
        private long lastHeartbeat;
        private boolean wroteHeartbeat;
        private volatile long lastCallMillis;
        private Map<String, Seen> peers = new HashMap<>();
        /** Buckets of the last snapshot (and of this relay's writes since). */
        private BitSet known = new BitSet();
        /**
         * Buckets whose value last seen this relay has judged claimable (free, or unchanged for a
         * lease duration); for those, {@link #firstSeen} holds when it first judged so.
         */
        private BitSet claimable = new BitSet();
        /**
         * Per bucket: the owner, expiry and elapsed time at first sight of the value last seen (once
         * judged claimable: at that judgement).
         */
        private String[] owners = new String[0];
        private long[] values = new long[0];
        private long[] firstSeen = new long[0];

        long nextHeartbeat(long now) {
            long value = wroteHeartbeat ? Math.max(lastHeartbeat + 1, now) : now;
            lastHeartbeat = value;
            wroteHeartbeat = true;
            return value;
        }

        /**
         * Records the values this relay is about to write as seen now: a relay that stops calling
         * for a lease duration then judges its own leases as its peers do. A refused write leaves
         * another value in the store, which the next snapshot sees as a change.
         */
        void noteWrites(LeaseWrites writes) {
            String me = writes.relayId();
            for (Keep keep : writes.keep()) {
                see(keep.bucket(), me, keep.expiresAtMillis());
            }
            for (BucketLease released : writes.release()) {
                see(released.bucket(), null, released.expiresAtMillis());
            }
            for (BucketLease claimed : writes.claim()) {
                see(claimed.bucket(), me, writes.claimExpiresAtMillis());
            }
        }

        private void see(int bucket, String owner, long value) {
            if (bucket >= owners.length) {
                resize(bucket + 1);
            }
            owners[bucket] = owner;
            values[bucket] = value;
            firstSeen[bucket] = elapsed;
            known.set(bucket);
            claimable.clear(bucket);
        }

        private void resize(int bucketCount) {
            owners = Arrays.copyOf(owners, bucketCount);
            values = Arrays.copyOf(values, bucketCount);
            firstSeen = Arrays.copyOf(firstSeen, bucketCount);
            known.clear(bucketCount, Math.max(bucketCount, known.length()));
            claimable.clear(bucketCount, Math.max(bucketCount, claimable.length()));
        }

        boolean idleLongerThan(long now, long idle) {
            return Math.abs(now - lastCallMillis) > idle;
        }

        LeasePlan.Liveness observe(String me, long now, long duration, int bucketCount, LeaseSnapshot snapshot) {
            if (started) {
                elapsed += Math.max(0, now - lastNow);
            }
            started = true;
            lastNow = now;
            lastCallMillis = now;
            long at = elapsed;
            Map<String, Seen> nextPeers = new HashMap<>();
            snapshot.heartbeats().forEach((relayId, lastSeen) -> {
                if (relayId != null && lastSeen != null && !relayId.equals(me)) {
                    Seen before = peers.get(relayId);
                    nextPeers.put(relayId, before != null && before.owner == null && before.value == lastSeen
                            ? before : new Seen(null, lastSeen, at));
                }
            });
            peers = nextPeers;
            if (owners.length != bucketCount) {
                resize(bucketCount);
            }
            // One pass: keep the first sight of an unchanged value, note a changed one as seen now,
            // and judge each lease for this snapshot (the view the plan gets is fixed here): held and
            // expired, claimable (free or expired) since when, and overdue (R14).
            BitSet inSnapshot = new BitSet(bucketCount);
            BitSet expired = new BitSet(bucketCount);
            BitSet overdue = new BitSet(bucketCount);
            long overdueAfter = LeasePlan.overdueAfterMillis(duration);
            for (BucketLease lease : snapshot.leases()) {
                if (lease == null || lease.bucket() >= bucketCount) {
                    continue;
                }
                int b = lease.bucket();
                if (!known.get(b) || values[b] != lease.expiresAtMillis() || !Objects.equals(owners[b], lease.owner())) {
                    owners[b] = lease.owner();
                    values[b] = lease.expiresAtMillis();
                    firstSeen[b] = at;
                    claimable.clear(b);
                }
                inSnapshot.set(b);
                if (!claimable.get(b) && (lease.owner() == null || at - firstSeen[b] >= duration)) {
                    claimable.set(b);
                    firstSeen[b] = at;
                }
                if (claimable.get(b)) {
                    expired.set(b);
                    if (at - firstSeen[b] >= overdueAfter) {
                        overdue.set(b);
                    }
                }
            }
            known = inSnapshot; // a bucket without a row has no history
            claimable.and(inSnapshot);
            Map<String, Seen> peerView = Map.copyOf(nextPeers);
            long freshWindow = LeasePlan.freshWindowMillis(duration);
            return new LeasePlan.Liveness() {
                @Override
                public boolean heartbeatExpired(String relayId, long lastSeen) {
                    return unchangedFor(peerView.get(relayId), lastSeen, duration);
                }

                @Override
                public boolean heartbeatFresh(String relayId, long lastSeen) {
                    Seen seen = peerView.get(relayId);
                    return seen == null || seen.value != lastSeen || at - seen.firstSeen <= freshWindow;
                }

                /** Answers for the leases of this snapshot, as {@link LeasePlan.Liveness} allows. */
                @Override
                public boolean overdue(BucketLease lease) {
                    return overdue.get(lease.bucket());
                }

                @Override
                public boolean heartbeatStale(String relayId, long lastSeen) {
                    return unchangedFor(peerView.get(relayId), lastSeen, LeasePlan.STALE_HEARTBEAT_LEASES * duration);
                }

                /** Answers for the leases of this snapshot, as {@link LeasePlan.Liveness} allows. */
                @Override
                public boolean leaseExpired(BucketLease lease) {
                    return expired.get(lease.bucket());
                }

                private boolean unchangedFor(Seen seen, long value, long span) {
                    return seen != null && seen.value == value && at - seen.firstSeen >= span;
                }
            };
        }
    }

    /** A value as first observed: owner (null for heartbeats), value, elapsed time at first sight. */
    private record Seen(String owner, long value, long firstSeen) {
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

    /** The buckets read back that this call wrote (kept or claimed), ascending and distinct. */
    private static List<Integer> normalized(List<Integer> owned, BitSet written) {
        BitSet set = new BitSet(written.length());
        for (Integer bucket : owned) {
            int b = Objects.requireNonNull(bucket, "readOwned returned a null bucket");
            if (b >= 0 && written.get(b)) {
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
         * {@link LeaseAcquisition} passes {@code max(previous value + 1, now)}, so the stored
         * value changes on every call (S13).
         *
         * @param relayId the relay
         * @param nowMillis the value to store, epoch milliseconds
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
            buckets = List.copyOf(new TreeSet<>(buckets));
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
     *       {@code expiresAt = } {@link Keep#expiresAtMillis()} (always later than before, S5, S13).</li>
     *   <li>{@link #release()}: same condition, set {@code owner = null} (the expiry stays).</li>
     *   <li>{@link #claim()}: where {@code owner} and {@code expiresAt} equal the observed lease's
     *       exactly (a null owner matching a null or absent one; a missing row counts as the free
     *       lease {@code (null, 0)}), set {@code owner = relayId, expiresAt = }
     *       {@link #claimExpiresAtMillis()}. The planner judged the observed value free or expired
     *       by observed change (S13); the condition never compares clocks.</li>
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
