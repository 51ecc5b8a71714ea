package io.outbox.spi.support;

import io.outbox.OutboxBucket;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.TreeSet;

/**
 * The rank-based fair share of buckets among live relays (rules S4, S4b, S7).
 *
 * <p>The relay ids are sorted in ordinal order ({@link String#compareTo}, UTF-16 code units) and
 * ranked from 0. With {@code N} buckets and {@code R} relays, the relay of rank {@code i} gets
 * {@code floor(N/R)} buckets, plus one when {@code i < N mod R}. Its preferred range is the
 * contiguous run of that many buckets that starts after the ranges of all lower ranks, so the
 * ranges are disjoint and together cover every bucket. When {@code R > N} the relays ranked
 * {@code N} and above get nothing.
 *
 * <p>Every relay that sees the same membership computes the same shares and ranges, which is what
 * lets {@link LeasePlan} plan claims instead of racing for them. Instances are immutable and
 * thread-safe; the result does not depend on the order of the input ids.
 */
public final class FairShare {

    private final int bucketCount;
    private final List<String> relays;

    private FairShare(int bucketCount, List<String> relays) {
        this.bucketCount = bucketCount;
        this.relays = relays;
    }

    /**
     * Computes the fair share of {@code bucketCount} buckets among the given relays.
     *
     * @param bucketCount the number of buckets, {@code >= 1}
     * @param relayIds the live relays' ids in any order; not null, no null elements; duplicates
     *     count once; may be empty (then nobody has a share)
     * @return the fair share
     * @throws IllegalArgumentException if {@code bucketCount < 1}
     * @throws NullPointerException if {@code relayIds} or an element is null
     */
    public static FairShare of(int bucketCount, Collection<String> relayIds) {
        OutboxBucket.requireBucketCount(bucketCount);
        Objects.requireNonNull(relayIds, "relayIds must not be null");
        TreeSet<String> sorted = new TreeSet<>();
        for (String id : relayIds) {
            sorted.add(Objects.requireNonNull(id, "relayIds must not contain null"));
        }
        return new FairShare(bucketCount, Collections.unmodifiableList(new ArrayList<>(sorted)));
    }

    /**
     * The number of buckets shared.
     *
     * @return the bucket count, {@code >= 1}
     */
    public int bucketCount() {
        return bucketCount;
    }

    /**
     * The relays, in rank order.
     *
     * @return the distinct relay ids sorted ordinally; immutable
     */
    public List<String> relays() {
        return relays;
    }

    /**
     * A relay's rank.
     *
     * @param relayId a relay id; not null
     * @return its 0-based rank, or -1 when it is not among the relays
     */
    public int rank(String relayId) {
        int index = Collections.binarySearch(relays, Objects.requireNonNull(relayId, "relayId must not be null"));
        return index < 0 ? -1 : index;
    }

    /**
     * A relay's share.
     *
     * @param relayId a relay id; not null
     * @return the number of buckets it should hold; 0 when it is not among the relays
     */
    public int share(String relayId) {
        int rank = rank(relayId);
        return rank < 0 ? 0 : shareOfRank(rank);
    }

    /**
     * The share of the relay with a given rank.
     *
     * @param rank a rank in {@code [0, relays().size())}
     * @return {@code floor(N/R)}, plus one when {@code rank < N mod R}
     * @throws IndexOutOfBoundsException if the rank is out of range
     */
    public int shareOfRank(int rank) {
        Objects.checkIndex(rank, relays.size());
        int r = relays.size();
        return bucketCount / r + (rank < bucketCount % r ? 1 : 0);
    }

    /**
     * A relay's preferred contiguous range of buckets.
     *
     * @param relayId a relay id; not null
     * @return its range, of size {@link #share(String)}; empty ({@code [0, 0)}) when it is not
     *     among the relays
     */
    public BucketRange preferredRange(String relayId) {
        int rank = rank(relayId);
        return rank < 0 ? new BucketRange(0, 0) : rangeOfRank(rank);
    }

    /**
     * The preferred range of the relay with a given rank.
     *
     * @param rank a rank in {@code [0, relays().size())}
     * @return the range, of size {@link #shareOfRank(int)}
     * @throws IndexOutOfBoundsException if the rank is out of range
     */
    public BucketRange rangeOfRank(int rank) {
        Objects.checkIndex(rank, relays.size());
        int r = relays.size();
        int base = bucketCount / r;
        int extra = bucketCount % r;
        int start = Math.min(bucketCount, rank * base + Math.min(rank, extra));
        return new BucketRange(start, Math.min(bucketCount, start + shareOfRank(rank)));
    }

    /**
     * The relay whose preferred range holds a bucket.
     *
     * @param bucket a bucket in {@code [0, bucketCount)}
     * @return the relay id, or null when there are no relays
     * @throws IndexOutOfBoundsException if the bucket is out of range
     */
    public String preferredRelay(int bucket) {
        Objects.checkIndex(bucket, bucketCount);
        if (relays.isEmpty()) {
            return null;
        }
        // Ranks below N mod R hold base + 1 buckets each, then ranks hold base: constant time, so a
        // caller can map every one of 65,536 buckets without a quadratic loop.
        int r = relays.size();
        int base = bucketCount / r;
        int extra = bucketCount % r;
        int longRuns = extra * (base + 1);
        int rank = bucket < longRuns ? bucket / (base + 1) : extra + (bucket - longRuns) / base;
        return relays.get(rank);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("FairShare[buckets=").append(bucketCount);
        for (int rank = 0; rank < relays.size(); rank++) {
            sb.append(", ").append(relays.get(rank)).append('=').append(rangeOfRank(rank));
        }
        return sb.append(']').toString();
    }
}
