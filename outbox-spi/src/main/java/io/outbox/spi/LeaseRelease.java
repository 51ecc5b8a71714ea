package io.outbox.spi;

/**
 * Optional store capability C3: gives back every lease a relay holds and removes its heartbeat,
 * so that on a graceful stop peers take its buckets over at once instead of after the lease
 * duration (R9).
 *
 * <p>Each write is fenced by owner: only leases whose owner is {@code relayId} are freed; a lease
 * another relay took over in the meantime is left alone. Thread-safe.
 */
public interface LeaseRelease {

    /**
     * Frees the relay's leases and deletes its heartbeat.
     *
     * @param relayId the relay giving up its leases; not null
     * @throws RuntimeException on a database error; the leases then simply expire
     */
    void releaseBucketLeases(String relayId);
}
