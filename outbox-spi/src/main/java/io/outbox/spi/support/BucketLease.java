package io.outbox.spi.support;

/**
 * A bucket's lease as a store last read it: who holds it and until when.
 *
 * <p>A lease is held by {@code owner} while {@code now < expiresAtMillis}; at or after that
 * instant it is expired and any relay may claim it. A lease with a null owner is free. Times are
 * epoch milliseconds from the store's injected clock (S11).
 *
 * @param bucket the bucket, {@code >= 0}
 * @param owner the holding relay's id, or null when the lease is free
 * @param expiresAtMillis when the lease expires, epoch milliseconds; 0 for a lease never taken
 */
public record BucketLease(int bucket, String owner, long expiresAtMillis) {

    /**
     * Validates the bucket.
     *
     * @param bucket the bucket, {@code >= 0}
     * @param owner the holding relay, or null
     * @param expiresAtMillis the expiry, epoch milliseconds
     * @throws IllegalArgumentException if {@code bucket < 0}
     */
    public BucketLease {
        if (bucket < 0) {
            throw new IllegalArgumentException("bucket must be >= 0 but was " + bucket);
        }
    }

    /**
     * A lease row that does not exist yet (or was never taken).
     *
     * @param bucket the bucket
     * @return a free lease expiring at 0
     */
    public static BucketLease free(int bucket) {
        return new BucketLease(bucket, null, 0L);
    }

    /**
     * Whether a relay holds this lease at a given time.
     *
     * @param relayId the relay id; not null
     * @param nowMillis the current time, epoch milliseconds
     * @return true when {@code owner} equals {@code relayId} and the lease has not expired
     */
    public boolean isHeldBy(String relayId, long nowMillis) {
        return relayId.equals(owner) && nowMillis < expiresAtMillis;
    }

    /**
     * Whether any relay may claim this lease at a given time.
     *
     * @param nowMillis the current time, epoch milliseconds
     * @return true when it has no owner or has expired
     */
    public boolean isClaimable(long nowMillis) {
        return owner == null || nowMillis >= expiresAtMillis;
    }
}
