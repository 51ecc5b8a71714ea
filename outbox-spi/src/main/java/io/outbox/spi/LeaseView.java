package io.outbox.spi;

import java.util.Optional;

/**
 * Optional store capability C6: the fleet's lease table as the store holds it, for operators: the
 * owner and expiry of every bucket's lease and the heartbeat of every relay the store knows. It
 * reads what {@link OutboxStore#acquireBucketLeases} reads (its snapshot of heartbeats and leases)
 * and writes nothing: no heartbeat, no lease, no table.
 *
 * <p>The view is as stored, judged by nobody: an owner whose lease expired, or a heartbeat that
 * stopped changing, is shown as it is; {@link LeaseTable#readAtMillis()} is the store's clock
 * (S11) at the read, so a reader can compare expiries with it. Thread-safe (S12). A store offers it
 * through {@link OutboxStore#leaseView()}: a store that implements it itself implements
 * {@link Self}, which returns the store there. The kit's {@code optional_C6_*} rules check it.
 */
public interface LeaseView {

    /**
     * Reads the lease of every bucket in {@code [0, bucketCount)} and every relay's heartbeat.
     *
     * @param bucketCount the fleet's bucket count, {@code >= 1}
     * @return the table: one lease per bucket, ascending (a bucket never leased is free, expiry 0);
     *     lease rows of other buckets are left out; not null
     * @throws IllegalArgumentException if {@code bucketCount < 1}
     * @throws RuntimeException on a database error
     */
    LeaseTable leaseTable(int bucketCount);

    /**
     * A store that is its own {@link LeaseView}: implementing this interface makes
     * {@link OutboxStore#leaseView()} return the store (C6), with no accessor to write.
     */
    interface Self extends OutboxStore, LeaseView {

        /**
         * This store, which is its own {@link LeaseView} (C6).
         *
         * @return this store
         */
        @Override
        default Optional<LeaseView> leaseView() {
            return Optional.of(this);
        }
    }
}
