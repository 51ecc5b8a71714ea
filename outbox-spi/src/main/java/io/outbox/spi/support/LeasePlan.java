package io.outbox.spi.support;

import io.outbox.spi.LeaseRequest;
import io.outbox.spi.OutboxStore;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * The lease writes one relay should make, planned from one snapshot of heartbeats and leases
 * (rules S4, S4b, S5, S7, R14). Every store calls this instead of reimplementing the arithmetic.
 *
 * <h2>How a store uses it in {@link OutboxStore#acquireBucketLeases}</h2>
 * Stores do not run these steps themselves: {@link LeaseAcquisition#acquire} runs them over the
 * store's primitives, with its judgement by observed change (S13) in place of the clock comparison
 * of the four-argument {@code compute} and a heartbeat that changes on every call. The steps:
 * <ol>
 *   <li>Read {@code now} from the store's clock. Record the relay's heartbeat ({@code relayId,
 *       lastSeen = now}) with an upsert.</li>
 *   <li>Read all heartbeats and all lease rows (one query each where the database allows).</li>
 *   <li>{@code LeasePlan plan = LeasePlan.compute(request, now, heartbeats, leases)}.</li>
 *   <li>For each lease in {@link #keep()}: conditional write "owner = me and expiresAt = the
 *       observed expiry" setting {@code expiresAt = }{@link #renewedExpiry(BucketLease)} (later
 *       than before, so a clock set back neither cuts a lease short nor leaves it unchanged).</li>
 *   <li>For each lease in {@link #release()}: conditional write "owner = me and expiresAt = the
 *       observed expiry" setting {@code owner = null}.</li>
 *   <li>For each lease in {@link #claim()}: conditional write "owner and expiresAt as observed"
 *       setting {@code owner = me, expiresAt = }{@link #claimExpiry()} (S13). A bucket listed in
 *       {@link #missingBuckets()} has no row yet: create it free first, idempotently (a duplicate
 *       key from a concurrent relay is fine), or use a conditional upsert.</li>
 *   <li>Optionally delete the heartbeats in {@link #staleRelays()}, fenced by the observed
 *       {@code lastSeen}.</li>
 *   <li>Read back the leases with {@code owner = me and expiresAt > now} and return their buckets
 *       ascending.</li>
 * </ol>
 * A refused conditional write is not an error: another relay moved first, and the read-back
 * states what this relay owns. Exclusivity (S5) rests on those conditions alone; the plan only
 * keeps relays that see the same membership from ever writing the same lease (S4b), so a stable
 * fleet makes no refused writes.
 *
 * <h2>The plan</h2>
 * Live relays are the caller plus every relay whose heartbeat the {@link Liveness} does not
 * count as expired ({@link LeaseAcquisition} judges by observed change, S13; the four-argument
 * {@code compute} by comparing {@code now} with the stored times). {@link FairShare} over them
 * gives each relay a share and a preferred range. Of the live relays, the caller and those whose
 * heartbeat changed within half a lease duration are <em>renewing</em>
 * ({@link Liveness#heartbeatFresh}); a relay that stopped (or is about to expire) keeps its rank
 * and share, and what it holds, but is planned nothing new (R14: a dead relay's share does not
 * hold buckets hostage). Claimable buckets (free or expired, ascending) are assigned, identically
 * on every relay that sees the same snapshot: first each to the relay whose preferred range holds
 * it, if that relay is renewing and below its share, then leftovers to renewing relays still below
 * their share, in rank order. A relay's deficit is its share minus its leases not counted as
 * expired (capped at the share). Buckets no renewing relay is short of (the shares of relays that
 * stopped renewing) go to the renewing relays above their shares, each to the relay whose
 * preferred range in a {@link FairShare} over the renewing relays alone holds it. The caller
 * claims the buckets assigned to it, and also every claimable bucket its {@link Liveness} calls
 * {@linkplain Liveness#overdue overdue}: left claimable and unchanged for a quarter lease duration
 * since the caller first judged it so, because the relay it was planned for died or judged
 * differently (R14; the one claim relays may race for, settled by the conditional write, S5).
 *
 * <p>The caller keeps its unexpired leases up to its share (those in
 * {@link LeaseRequest#busyBuckets()} first, then those in its preferred range, then those in
 * {@link LeaseRequest#heldBuckets()}, then the lowest); a busy bucket is kept even above the share
 * (rule R11: a bucket being published is never given away; the relay asks again when that
 * publish ends). It releases the rest only as far as renewing peers are still short after the
 * claims above, and keeps what is left above its share, so a bucket taken over above the share
 * waits for a renewing peer instead of going back to a relay that will not take it (R14).
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class LeasePlan {

    /** Heartbeats older than this many lease durations are reported as stale. */
    public static final int STALE_HEARTBEAT_LEASES = 10;

    private final LeaseRequest request;
    private final long nowMillis;
    private final FairShare fairShare;
    private final List<BucketLease> keep;
    private final List<BucketLease> release;
    private final List<BucketLease> claim;
    private final List<Integer> missingBuckets;
    private final Map<String, Long> staleRelays;

    private LeasePlan(LeaseRequest request, long nowMillis, FairShare fairShare, List<BucketLease> keep,
                      List<BucketLease> release, List<BucketLease> claim, List<Integer> missingBuckets,
                      Map<String, Long> staleRelays) {
        this.request = request;
        this.nowMillis = nowMillis;
        this.fairShare = fairShare;
        this.keep = keep;
        this.release = release;
        this.claim = claim;
        this.missingBuckets = missingBuckets;
        this.staleRelays = staleRelays;
    }

    /**
     * Plans the caller's lease writes.
     *
     * @param request the caller's request; not null
     * @param nowMillis the current time from the store's clock, epoch milliseconds
     * @param heartbeats every relay's last heartbeat, epoch milliseconds, by relay id; not null; the
     *     caller's own entry is optional (the caller always counts as live)
     * @param leases the lease rows read; not null, no null elements; rows for buckets outside
     *     {@code [0, bucketCount)} are ignored; buckets without a row count as free and are listed
     *     in {@link #missingBuckets()}
     * @return the plan
     * @throws NullPointerException if an argument or element is null
     * @throws IllegalArgumentException if two lease rows name the same bucket
     */
    public static LeasePlan compute(LeaseRequest request, long nowMillis, Map<String, Long> heartbeats,
                                    Collection<BucketLease> leases) {
        Objects.requireNonNull(request, "request must not be null");
        return compute(request, nowMillis, heartbeats, leases, Liveness.byClock(nowMillis, request.leaseDurationMillis()));
    }

    /**
     * Plans the caller's lease writes with an explicit judgement of which peers and leases have
     * expired. {@link LeaseAcquisition} passes its judgement by observed change (S13): a value
     * counts as expired only once it has stayed unchanged for one lease duration of the caller's
     * own clock.
     *
     * @param request the caller's request; not null
     * @param nowMillis the current time from the store's clock, epoch milliseconds
     * @param heartbeats every relay's last heartbeat value, by relay id; not null
     * @param leases the lease rows read; not null, no null elements
     * @param liveness which heartbeats and held leases count as expired; not null
     * @return the plan
     * @throws NullPointerException if an argument or element is null
     * @throws IllegalArgumentException if two lease rows name the same bucket
     */
    public static LeasePlan compute(LeaseRequest request, long nowMillis, Map<String, Long> heartbeats,
                                    Collection<BucketLease> leases, Liveness liveness) {
        Objects.requireNonNull(request, "request must not be null");
        Objects.requireNonNull(liveness, "liveness must not be null");
        Objects.requireNonNull(heartbeats, "heartbeats must not be null");
        Objects.requireNonNull(leases, "leases must not be null");
        String me = request.relayId();
        int n = request.bucketCount();

        Set<String> live = new HashSet<>();
        Set<String> fresh = new HashSet<>();
        live.add(me);
        fresh.add(me);
        Map<String, Long> stale = new TreeMap<>();
        heartbeats.forEach((relayId, lastSeen) -> {
            Objects.requireNonNull(relayId, "heartbeat relay id must not be null");
            Objects.requireNonNull(lastSeen, "heartbeat time must not be null");
            if (relayId.equals(me) || !liveness.heartbeatExpired(relayId, lastSeen)) {
                live.add(relayId);
                if (liveness.heartbeatFresh(relayId, lastSeen)) {
                    fresh.add(relayId);
                }
            } else if (liveness.heartbeatStale(relayId, lastSeen)) {
                stale.put(relayId, lastSeen);
            }
        });
        FairShare fairShare = FairShare.of(n, live);

        BucketLease[] byBucket = new BucketLease[n];
        for (BucketLease lease : leases) {
            Objects.requireNonNull(lease, "leases must not contain null");
            if (lease.bucket() >= n) {
                continue;
            }
            if (byBucket[lease.bucket()] != null) {
                throw new IllegalArgumentException("two lease rows for bucket " + lease.bucket());
            }
            byBucket[lease.bucket()] = lease;
        }
        List<Integer> missing = new ArrayList<>();
        for (int b = 0; b < n; b++) {
            if (byBucket[b] == null) {
                byBucket[b] = BucketLease.free(b);
                missing.add(b);
            }
        }

        // Claims: the same assignment on every relay that sees this snapshot. One pass over the
        // leases counts every relay's unexpired ones (linear in bucketCount, not buckets x relays).
        List<String> relays = fairShare.relays();
        // Neighbouring buckets mostly share an owner (preferred ranges), so the last owner's counter
        // is reused without a hash lookup; no boxing either.
        Map<String, int[]> ownedBy = new HashMap<>();
        String lastOwner = null;
        int[] lastCount = null;
        List<BucketLease> mine = new ArrayList<>();
        List<BucketLease> claimable = new ArrayList<>();
        for (BucketLease lease : byBucket) {
            String owner = lease.owner();
            if (owner == null || liveness.leaseExpired(lease)) {
                claimable.add(lease);
                continue;
            }
            if (!owner.equals(lastOwner)) {
                lastOwner = owner;
                lastCount = ownedBy.computeIfAbsent(owner, o -> new int[1]);
            }
            lastCount[0]++;
            if (owner.equals(me)) {
                mine.add(lease);
            }
        }
        // R14: only relays seen renewing lately get new buckets; a peer whose heartbeat stands
        // still (dead, or dying) keeps its share in the ranks but is planned nothing.
        boolean[] renewing = new boolean[relays.size()];
        int[] deficit = new int[relays.size()];
        int[] preferredRank = new int[n];
        for (int rank = 0; rank < relays.size(); rank++) {
            renewing[rank] = fresh.contains(relays.get(rank));
            int[] counted = ownedBy.get(relays.get(rank));
            int owned = counted == null ? 0 : counted[0];
            deficit[rank] = fairShare.shareOfRank(rank) - Math.min(owned, fairShare.shareOfRank(rank));
            BucketRange range = fairShare.rangeOfRank(rank);
            for (int b = range.start(); b < range.end(); b++) {
                preferredRank[b] = rank;
            }
        }
        int myRank = fairShare.rank(me);
        BitSet claimed = new BitSet(n);
        List<BucketLease> leftovers = new ArrayList<>();
        for (BucketLease lease : claimable) {
            int rank = preferredRank[lease.bucket()];
            if (renewing[rank] && deficit[rank] > 0) {
                deficit[rank]--;
                if (rank == myRank) {
                    claimed.set(lease.bucket());
                }
            } else {
                leftovers.add(lease);
            }
        }
        // Deficits only shrink, so the first rank still short moves forward monotonically.
        int next = 0;
        List<BucketLease> homeless = new ArrayList<>();
        for (BucketLease lease : leftovers) {
            while (next < deficit.length && (deficit[next] == 0 || !renewing[next])) {
                next++;
            }
            if (next == deficit.length) {
                homeless.add(lease);
                continue;
            }
            deficit[next]--;
            if (next == myRank) {
                claimed.set(lease.bucket());
            }
        }
        // R14: buckets no renewing relay is short of (the shares of dead peers not yet expired) go
        // to the renewing relays above their share, each to the one whose range over the renewing
        // relays alone holds it; they are given back once a renewing peer is short (below).
        if (!homeless.isEmpty()) {
            FairShare renewingShare = FairShare.of(n, fresh);
            for (BucketLease lease : homeless) {
                if (me.equals(renewingShare.preferredRelay(lease.bucket()))) {
                    claimed.set(lease.bucket());
                }
            }
        }
        // R14: a bucket left claimable for a while was planned for a relay that did not take it
        // (one that died, or judges differently): whoever sees it so takes it, conditionally (S5).
        for (BucketLease lease : claimable) {
            if (liveness.overdue(lease)) {
                claimed.set(lease.bucket());
            }
        }
        List<BucketLease> claim = new ArrayList<>(claimed.cardinality());
        for (int b = claimed.nextSetBit(0); b >= 0; b = claimed.nextSetBit(b + 1)) {
            claim.add(byBucket[b]);
        }

        // The caller's own keep / release: up to the share (busy buckets always, R11); what is
        // above it goes back only as far as renewing peers are still short, so a bucket taken over
        // above the share is not handed to a peer that would not take it (R14).
        int myShare = fairShare.share(me);
        BucketRange myRange = fairShare.preferredRange(me);
        BitSet held = new BitSet(n);
        request.heldBuckets().forEach(held::set);
        BitSet busy = new BitSet(n);
        request.busyBuckets().forEach(busy::set);
        mine.sort(Comparator.<BucketLease>comparingInt(l -> busy.get(l.bucket()) ? 0 : 1)
                .thenComparingInt(l -> myRange.contains(l.bucket()) ? 0 : 1)
                .thenComparingInt(l -> held.get(l.bucket()) ? 0 : 1)
                .thenComparingInt(BucketLease::bucket));
        int busyMine = (int) mine.stream().filter(l -> busy.get(l.bucket())).count();
        int keepCount = Math.max(Math.min(myShare, mine.size()), busyMine);
        long wanted = 0;
        for (int rank = 0; rank < deficit.length; rank++) {
            if (rank != myRank && renewing[rank]) {
                wanted += deficit[rank];
            }
        }
        keepCount = (int) Math.max(keepCount, mine.size() - wanted);
        List<BucketLease> keep = sortedByBucket(mine.subList(0, keepCount));
        List<BucketLease> release = sortedByBucket(mine.subList(keepCount, mine.size()));
        return new LeasePlan(request, nowMillis, fairShare, keep, release, List.copyOf(claim),
                List.copyOf(missing), Collections.unmodifiableMap(stale));
    }

    /**
     * Whether a heartbeat counts as live: seen within one lease duration.
     *
     * @param lastSeenMillis the heartbeat time, epoch milliseconds
     * @param nowMillis the current time, epoch milliseconds
     * @param leaseDurationMillis the lease duration in milliseconds
     * @return {@code lastSeenMillis > nowMillis - leaseDurationMillis}
     */
    public static boolean isLive(long lastSeenMillis, long nowMillis, long leaseDurationMillis) {
        return lastSeenMillis > nowMillis - leaseDurationMillis;
    }

    /**
     * How recently a live peer's heartbeat must have changed for it to count as renewing and be
     * planned new buckets (R14): half a lease duration, longer than a renew interval of at most a
     * third of it (the default), so a live relay that skips one renewal still counts.
     *
     * @param leaseDurationMillis the lease duration, milliseconds
     * @return {@code leaseDurationMillis / 2}
     */
    public static long freshWindowMillis(long leaseDurationMillis) {
        return leaseDurationMillis / 2;
    }

    /**
     * How long a bucket must have stayed claimable, unchanged, since a relay first judged it so
     * before that relay takes it whatever the plan says (R14): a quarter lease duration. The relay
     * takes it at its first lease round at least that long after its judgement (the next round when
     * the renew interval is at least a quarter lease); by then the planned claimer, which sees the
     * same rows at its own rounds, has had at least one round to claim it.
     *
     * @param leaseDurationMillis the lease duration, milliseconds
     * @return {@code leaseDurationMillis / 4}
     */
    public static long overdueAfterMillis(long leaseDurationMillis) {
        return leaseDurationMillis / 4;
    }

    /**
     * The request this plan answers.
     *
     * @return the request
     */
    public LeaseRequest request() {
        return request;
    }

    /**
     * The time the plan was made for.
     *
     * @return {@code now}, epoch milliseconds
     */
    public long nowMillis() {
        return nowMillis;
    }

    /**
     * The fair share among the live relays.
     *
     * @return the fair share
     */
    public FairShare fairShare() {
        return fairShare;
    }

    /**
     * The caller's share.
     *
     * @return the number of buckets the caller should hold
     */
    public int share() {
        return fairShare.share(request.relayId());
    }

    /**
     * The caller's unexpired leases to extend, as observed.
     *
     * @return the leases, ascending by bucket; immutable
     */
    public List<BucketLease> keep() {
        return keep;
    }

    /**
     * The caller's unexpired leases above its share, to give back, as observed.
     *
     * @return the leases, ascending by bucket; immutable
     */
    public List<BucketLease> release() {
        return release;
    }

    /**
     * The free or expired leases assigned to the caller, as observed.
     *
     * @return the leases, ascending by bucket; immutable
     */
    public List<BucketLease> claim() {
        return claim;
    }

    /**
     * Buckets in {@code [0, bucketCount)} that had no lease row.
     *
     * @return the buckets, ascending; immutable
     */
    public List<Integer> missingBuckets() {
        return missingBuckets;
    }

    /**
     * Relays whose heartbeat is older than {@value #STALE_HEARTBEAT_LEASES} lease durations; a
     * store may delete their heartbeat rows, fenced by the observed time, to keep the table small.
     *
     * @return relay id to observed heartbeat time (epoch ms); immutable, sorted by id
     */
    public Map<String, Long> staleRelays() {
        return staleRelays;
    }

    /**
     * The expiry to write on a claimed lease.
     *
     * @return {@code now + leaseDuration}, epoch milliseconds
     */
    public long claimExpiry() {
        return nowMillis + request.leaseDurationMillis();
    }

    /**
     * The expiry to write when keeping a lease: always later than the observed one, so the
     * stored value changes on every keep even when the keeping relay's clock went back (S5,
     * S13: peers see a live holder's lease change and never judge it dead).
     *
     * @param observed the lease as read; not null
     * @return {@code max(observed.expiresAtMillis() + 1, now + leaseDuration)}, epoch milliseconds
     */
    public long renewedExpiry(BucketLease observed) {
        return renewedExpiry(observed.expiresAtMillis(), nowMillis, request.leaseDurationMillis());
    }

    /**
     * The expiry a keep or renewal writes (S5, S13): later than the stored one by at least one
     * millisecond, and at least a full lease duration from {@code now}.
     *
     * @param observedExpiresAtMillis the stored expiry, epoch milliseconds
     * @param nowMillis the writer's current time, epoch milliseconds
     * @param leaseDurationMillis the lease duration, milliseconds
     * @return {@code max(observedExpiresAtMillis + 1, nowMillis + leaseDurationMillis)}
     */
    public static long renewedExpiry(long observedExpiresAtMillis, long nowMillis, long leaseDurationMillis) {
        return Math.max(observedExpiresAtMillis + 1, nowMillis + leaseDurationMillis);
    }

    /**
     * Which heartbeats and held leases a planning relay counts as expired. Implementations
     * answer for one snapshot.
     */
    public interface Liveness {

        /**
         * Whether a peer's heartbeat counts as expired: the peer is then left out of the fair
         * share.
         *
         * @param relayId the peer; not null
         * @param lastSeen the stored heartbeat value
         * @return true when the peer counts as gone
         */
        boolean heartbeatExpired(String relayId, long lastSeen);

        /**
         * Whether an expired peer's heartbeat row may be deleted (it has been expired for
         * {@value #STALE_HEARTBEAT_LEASES} lease durations).
         *
         * @param relayId the peer; not null
         * @param lastSeen the stored heartbeat value
         * @return true when the row may be deleted, fenced by {@code lastSeen}
         */
        boolean heartbeatStale(String relayId, long lastSeen);

        /**
         * Whether a lease with an owner counts as expired, so any relay may claim it
         * (conditionally on the value observed).
         *
         * @param lease the lease as read, with a non-null owner
         * @return true when the lease counts as expired
         */
        boolean leaseExpired(BucketLease lease);

        /**
         * Whether a live peer counts as renewing: its heartbeat changed within half a lease
         * duration ({@link #freshWindowMillis}). Only renewing relays are planned new buckets, and
         * a relay gives buckets above its share back only to renewing peers short of theirs (R14).
         * The default counts every live peer as renewing.
         *
         * @param relayId the peer; not null
         * @param lastSeen the stored heartbeat value
         * @return true when the peer counts as renewing
         */
        default boolean heartbeatFresh(String relayId, long lastSeen) {
            return !heartbeatExpired(relayId, lastSeen);
        }

        /**
         * Whether a claimable lease (free, or held and expired) has been claimable, unchanged, for
         * a quarter lease duration ({@link #overdueAfterMillis}) since the planner first judged it
         * so: its planned claimer did not take it, so the planner takes it whatever the plan says
         * (R14). The default answers false.
         *
         * @param lease the lease as read, free or expired
         * @return true when the lease is overdue
         */
        default boolean overdue(BucketLease lease) {
            return false;
        }

        /**
         * Judgement by comparing the planner's clock with stored timestamps: the rule for relays
         * whose clocks agree. {@link LeaseAcquisition} does not use it (it judges by observed
         * change, S13); it remains for planning from a single snapshot, as in tests.
         *
         * @param nowMillis the planner's time, epoch milliseconds
         * @param leaseDurationMillis the lease duration, milliseconds
         * @return a heartbeat is expired when not newer than {@code now - leaseDuration}, stale
         *     when not newer than {@code now - STALE_HEARTBEAT_LEASES * leaseDuration}, renewing
         *     when not older than {@code now - leaseDuration / 2}; a lease is expired at or after
         *     its expiry instant and overdue a quarter lease duration after it (a free lease,
         *     without history, never is)
         */
        static Liveness byClock(long nowMillis, long leaseDurationMillis) {
            long staleBefore = nowMillis - STALE_HEARTBEAT_LEASES * leaseDurationMillis;
            return new Liveness() {
                @Override
                public boolean heartbeatExpired(String relayId, long lastSeen) {
                    return !isLive(lastSeen, nowMillis, leaseDurationMillis);
                }

                @Override
                public boolean heartbeatFresh(String relayId, long lastSeen) {
                    return lastSeen >= nowMillis - freshWindowMillis(leaseDurationMillis);
                }

                @Override
                public boolean overdue(BucketLease lease) {
                    return lease.owner() != null
                            && nowMillis - lease.expiresAtMillis() >= overdueAfterMillis(leaseDurationMillis);
                }

                @Override
                public boolean heartbeatStale(String relayId, long lastSeen) {
                    return lastSeen <= staleBefore;
                }

                @Override
                public boolean leaseExpired(BucketLease lease) {
                    return nowMillis >= lease.expiresAtMillis();
                }
            };
        }
    }

    private static List<BucketLease> sortedByBucket(List<BucketLease> leases) {
        List<BucketLease> copy = new ArrayList<>(leases);
        copy.sort(Comparator.comparingInt(BucketLease::bucket));
        return List.copyOf(copy);
    }

    @Override
    public String toString() {
        return "LeasePlan[relay=" + request.relayId() + ", share=" + share() + ", keep=" + buckets(keep)
                + ", release=" + buckets(release) + ", claim=" + buckets(claim) + ", " + fairShare + "]";
    }

    private static List<Integer> buckets(List<BucketLease> leases) {
        return leases.stream().map(BucketLease::bucket).toList();
    }
}
