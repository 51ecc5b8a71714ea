package io.outbox.spi;

import java.time.Duration;
import java.util.Optional;

/**
 * Optional store capability C2: the whole store's backlog, for monitoring. Relays sample it on a
 * schedule apart from publishing; it is never on the publishing path.
 *
 * <p>Implementations are thread-safe, may run concurrently with every other store call, and
 * should use a bounded query (a count and a minimum over the pending rows).
 *
 * <p>A store offers it through {@link OutboxStore#pendingMetrics()}: a store that implements it
 * itself implements {@link Self}, which returns the store there.
 */
public interface PendingMetrics {

    /**
     * Counts the pending messages in all buckets and finds the oldest one's creation time.
     *
     * @param timeout how long the query may take; not null, positive. The store passes it to the
     *     database (statement timeout, maxTime) where it can.
     * @return the snapshot; never null
     * @throws RuntimeException on a database error or when the timeout elapses
     */
    PendingSnapshot pendingMetrics(Duration timeout);

    /**
     * A store that is its own {@link PendingMetrics}: implementing this interface makes
     * {@link OutboxStore#pendingMetrics()} return the store (C2), with no accessor to write.
     */
    interface Self extends OutboxStore, PendingMetrics {

        /**
         * This store, which is its own {@link PendingMetrics} (C2).
         *
         * @return this store
         */
        @Override
        default Optional<PendingMetrics> pendingMetrics() {
            return Optional.of(this);
        }
    }
}
