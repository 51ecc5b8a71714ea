package io.outbox.spi;

import io.outbox.OutboxBucket;
import java.time.Duration;
import java.util.BitSet;
import java.util.List;
import java.util.Objects;

/**
 * One relay's call to {@link OutboxStore#acquireBucketLeases} or
 * {@link LeaseRenewal#renewBucketLeases}.
 *
 * @param relayId the calling relay's id: 1 to {@value #MAX_RELAY_ID_LENGTH} characters, not blank,
 *     no control characters; unique among the relays sharing a store
 * @param bucketCount the number of buckets, {@code >= 1}; the same for every writer and relay
 * @param leaseDuration how long a lease granted or renewed now lasts; positive, at least 1 ms,
 *     stored in epoch milliseconds (S11)
 * @param heldBuckets the buckets the relay owned after its last successful call (S4b), or, for a
 *     renewal, the buckets to renew; normalized to distinct, ascending, immutable; each in
 *     {@code [0, bucketCount)}
 * @param busyBuckets the held buckets with a publish in flight or about to start (rule R11): an
 *     acquisition keeps each of them that the relay still holds, even above its fair share, and
 *     counts them toward the share first, so a relay never loses a lease to a rebalance while it
 *     publishes the bucket; the relay asks again once their tasks end. Ignored by renewals.
 *     Normalized like {@code heldBuckets}; empty by default
 */
public record LeaseRequest(String relayId, int bucketCount, Duration leaseDuration, List<Integer> heldBuckets,
                           List<Integer> busyBuckets) {

    /** Longest relay id, in characters; stores size their owner columns for it. */
    public static final int MAX_RELAY_ID_LENGTH = 128;

    /**
     * Validates and normalizes the fields.
     *
     * @param relayId the calling relay's id
     * @param bucketCount the number of buckets
     * @param leaseDuration the lease duration
     * @param heldBuckets the buckets held, or to renew
     * @param busyBuckets the held buckets being published (R11)
     * @throws NullPointerException if a field or a held or busy bucket is null
     * @throws IllegalArgumentException naming the bad field and value
     */
    public LeaseRequest {
        requireRelayId(relayId);
        OutboxBucket.requireBucketCount(bucketCount);
        Objects.requireNonNull(leaseDuration, "leaseDuration must not be null");
        if (leaseDuration.toMillis() < 1) {
            throw new IllegalArgumentException("leaseDuration must be at least 1 ms but was " + leaseDuration);
        }
        heldBuckets = normalize("heldBuckets", heldBuckets, bucketCount);
        busyBuckets = normalize("busyBuckets", busyBuckets, bucketCount);
    }

    /**
     * A request without busy buckets.
     *
     * @param relayId the calling relay's id
     * @param bucketCount the number of buckets
     * @param leaseDuration the lease duration
     * @param heldBuckets the buckets held, or to renew
     * @throws NullPointerException if a field or a held bucket is null
     * @throws IllegalArgumentException naming the bad field and value
     */
    public LeaseRequest(String relayId, int bucketCount, Duration leaseDuration, List<Integer> heldBuckets) {
        this(relayId, bucketCount, leaseDuration, heldBuckets, List.of());
    }

    private static List<Integer> normalize(String field, List<Integer> buckets, int bucketCount) {
        Objects.requireNonNull(buckets, field + " must not be null");
        if (buckets.isEmpty()) {
            return List.of();
        }
        // A BitSet, not a TreeSet: 65,536 buckets normalize in linear time.
        BitSet set = new BitSet(bucketCount);
        for (Integer bucket : buckets) {
            Objects.requireNonNull(bucket, field + " must not contain null");
            if (bucket < 0 || bucket >= bucketCount) {
                throw new IllegalArgumentException(field + " contains " + bucket + ", outside [0, "
                        + bucketCount + ")");
            }
            set.set(bucket);
        }
        Integer[] sorted = new Integer[set.cardinality()];
        int i = 0;
        for (int b = set.nextSetBit(0); b >= 0; b = set.nextSetBit(b + 1)) {
            sorted[i++] = b;
        }
        return List.of(sorted);
    }

    /**
     * A request from a relay holding nothing yet.
     *
     * @param relayId the relay id
     * @param bucketCount the number of buckets, {@code >= 1}
     * @param leaseDuration the lease duration, at least 1 ms
     * @return the request, with no held buckets
     */
    public static LeaseRequest of(String relayId, int bucketCount, Duration leaseDuration) {
        return new LeaseRequest(relayId, bucketCount, leaseDuration, List.of());
    }

    /**
     * The same request with other held buckets.
     *
     * @param buckets the buckets held; not null, each in {@code [0, bucketCount)}
     * @return a new request
     */
    public LeaseRequest withHeldBuckets(List<Integer> buckets) {
        return new LeaseRequest(relayId, bucketCount, leaseDuration, buckets, busyBuckets);
    }

    /**
     * The same request with other busy buckets (R11).
     *
     * @param buckets the held buckets being published; not null, each in {@code [0, bucketCount)}
     * @return a new request
     */
    public LeaseRequest withBusyBuckets(List<Integer> buckets) {
        return new LeaseRequest(relayId, bucketCount, leaseDuration, heldBuckets, buckets);
    }

    /**
     * The lease duration in milliseconds.
     *
     * @return {@code leaseDuration().toMillis()}
     */
    public long leaseDurationMillis() {
        return leaseDuration.toMillis();
    }

    /**
     * Checks a relay id.
     *
     * @param relayId the relay id
     * @return {@code relayId}
     * @throws NullPointerException if it is null
     * @throws IllegalArgumentException if it is blank, longer than {@value #MAX_RELAY_ID_LENGTH}
     *     characters, or holds a control character
     */
    public static String requireRelayId(String relayId) {
        Objects.requireNonNull(relayId, "relayId must not be null");
        if (relayId.isBlank()) {
            throw new IllegalArgumentException("relayId must not be blank but was '" + relayId + "'");
        }
        if (relayId.length() > MAX_RELAY_ID_LENGTH) {
            throw new IllegalArgumentException("relayId must be at most " + MAX_RELAY_ID_LENGTH
                    + " characters but has " + relayId.length() + ": '" + relayId.substring(0, 40) + "...'");
        }
        if (relayId.chars().anyMatch(Character::isISOControl)) {
            throw new IllegalArgumentException("relayId must not contain control characters: '"
                    + relayId.replaceAll("\\p{Cntrl}", "?") + "'");
        }
        return relayId;
    }
}
