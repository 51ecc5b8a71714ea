package io.outbox.spi;

import java.time.Instant;

/**
 * The store's backlog at one moment (capability C2).
 *
 * @param pendingCount the number of pending messages in all buckets, {@code >= 0}
 * @param oldestCreatedAt the creation time of the oldest pending message, or null exactly when
 *     there are none
 */
public record PendingSnapshot(long pendingCount, Instant oldestCreatedAt) {

    /**
     * Validates the count.
     *
     * @param pendingCount the number of pending messages
     * @param oldestCreatedAt the oldest creation time, or null
     * @throws IllegalArgumentException if {@code pendingCount < 0}
     */
    public PendingSnapshot {
        if (pendingCount < 0) {
            throw new IllegalArgumentException("pendingCount must be >= 0 but was " + pendingCount);
        }
    }
}
