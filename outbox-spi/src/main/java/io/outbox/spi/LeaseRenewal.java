package io.outbox.spi;

import java.util.List;
import java.util.Optional;

/**
 * Optional store capability C1: extends the leases a relay still holds, and refreshes its
 * heartbeat, without acquiring or releasing anything. It lets the relay keep its leases during a
 * publish that lasts longer than a renewal interval (R5).
 *
 * <p>Each bucket is renewed atomically with a conditional write "owner = me and expiresAt &gt;
 * now", setting {@code expiresAt = max(expiresAt, now + leaseDuration)}: a renewal never shortens
 * a lease, whatever the clock did (S5). Implementations are thread-safe and may run concurrently
 * with {@link OutboxStore#nextBatch} and {@link OutboxStore#markPublished} (S12).
 *
 * <p>A store offers it through {@link OutboxStore#leaseRenewal()}: a store that implements it
 * itself implements {@link Self}, which returns the store there.
 */
public interface LeaseRenewal {

    /**
     * Renews the caller's leases on {@link LeaseRequest#heldBuckets()} and records its heartbeat.
     *
     * @param request the relay id, bucket count, lease duration, and in {@code heldBuckets} the
     *     buckets to renew; not null
     * @return the buckets of {@code heldBuckets} the caller still holds after the call, ascending,
     *     immutable; a bucket missing from it has expired or been taken over, and the relay must
     *     stop publishing it
     * @throws RuntimeException on a database error; the relay then treats every lease as
     *     unconfirmed and lets it age out
     */
    List<Integer> renewBucketLeases(LeaseRequest request);

    /**
     * A store that is its own {@link LeaseRenewal}: implementing this interface makes
     * {@link OutboxStore#leaseRenewal()} return the store (C1), with no accessor to write.
     */
    interface Self extends OutboxStore, LeaseRenewal {

        /**
         * This store, which is its own {@link LeaseRenewal} (C1).
         *
         * @return this store
         */
        @Override
        default Optional<LeaseRenewal> leaseRenewal() {
            return Optional.of(this);
        }
    }
}
