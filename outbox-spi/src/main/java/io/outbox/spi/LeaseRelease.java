package io.outbox.spi;

import java.util.Optional;

/**
 * Optional store capability C3: gives back every lease a relay holds and removes its heartbeat,
 * so that on a graceful stop peers take its buckets over at once instead of after the lease
 * duration (R9).
 *
 * <p>Each write is fenced by owner: only leases whose owner is {@code relayId} are freed; a lease
 * another relay took over in the meantime is left alone. Thread-safe.
 *
 * <p>A store offers it through {@link OutboxStore#leaseRelease()}: a store that implements it
 * itself implements {@link Self}, which returns the store there.
 */
public interface LeaseRelease {

    /**
     * Frees the relay's leases and deletes its heartbeat.
     *
     * @param relayId the relay giving up its leases; not null
     * @throws RuntimeException on a database error; the leases then simply expire
     */
    void releaseBucketLeases(String relayId);

    /**
     * A store that is its own {@link LeaseRelease}: implementing this interface makes
     * {@link OutboxStore#leaseRelease()} return the store (C3), with no accessor to write.
     */
    interface Self extends OutboxStore, LeaseRelease {

        /**
         * This store, which is its own {@link LeaseRelease} (C3).
         *
         * @return this store
         */
        @Override
        default Optional<LeaseRelease> leaseRelease() {
            return Optional.of(this);
        }
    }
}
