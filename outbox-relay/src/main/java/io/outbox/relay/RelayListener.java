package io.outbox.relay;

import java.util.List;

/**
 * Callbacks on what a relay does, for metrics, health checks and tests. Every method has an
 * empty default, so implement only what you need.
 *
 * <p>The relay calls a listener from its own threads (the publishing thread, and the renewal
 * thread for {@link #onOwnedBucketsChanged}); implementations are thread-safe and quick, and never
 * block. An exception thrown by a listener is logged and otherwise ignored: it never changes what
 * the relay publishes or deletes.
 */
public interface RelayListener {

    /**
     * The buckets this relay may publish changed: after an acquisition, a lost renewal (R5, R9), a
     * store error (R3) or the relay's stop.
     *
     * @param ownedBuckets the buckets now owned, ascending, immutable; empty when none
     */
    default void onOwnedBucketsChanged(List<Integer> ownedBuckets) {
    }

    /**
     * The broker acknowledged messages and the store deleted them (R2).
     *
     * @param bucket the bucket
     * @param count the number of messages, {@code >= 1}
     */
    default void onPublished(int bucket, int count) {
    }

    /**
     * A publish left messages unacknowledged; they stay in the store and the bucket is retried
     * after a backoff (R3).
     *
     * @param bucket the bucket
     * @param acknowledged how many leading messages were acknowledged (and deleted) anyway
     * @param error the first error; not null
     */
    default void onPublishFailed(int bucket, int acknowledged, Throwable error) {
    }

    /**
     * A message failed for a reason of its own (rule R12, {@link FailureKind#MESSAGE}): too large,
     * an invalid topic or partition, a row the store cannot decode. Called after
     * {@link #onPublishFailed} for the same failure; retriable failures never come here.
     *
     * @param bucket the bucket
     * @param messageId the message
     * @param attempts its message-specific failures in a row, counted by this relay, {@code >= 1}
     * @param error the failure; not null
     */
    default void onMessageFailed(int bucket, java.util.UUID messageId, int attempts, Throwable error) {
    }

    /**
     * A message was moved to the store's dead letters ({@link PoisonPolicy#DEAD_LETTER}, C4); its
     * bucket goes on with the messages behind it.
     *
     * @param bucket the bucket
     * @param messageId the message
     * @param failure what was recorded with it; not null
     */
    default void onDeadLettered(int bucket, java.util.UUID messageId, io.outbox.spi.DeadLetterFailure failure) {
    }

    /**
     * A store call failed; the relay drops its lease state and retries after a backoff (R3).
     *
     * @param error the error; not null
     */
    default void onStoreError(Throwable error) {
    }

    /**
     * The relay stopped: closed, or on a fatal error (R6).
     *
     * @param fatalError the fatal error, usually an
     *     {@link io.outbox.spi.OutboxMisconfigurationException}; null after an ordinary close
     */
    default void onTerminated(Throwable fatalError) {
    }
}
