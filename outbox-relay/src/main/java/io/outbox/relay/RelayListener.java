package io.outbox.relay;

import io.outbox.notify.NotificationTransport;
import io.outbox.spi.DeadLetterFailure;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

/**
 * Callbacks on what a relay does, for metrics, health checks and tests. Every method has an
 * empty default, so implement only what you need.
 *
 * <p>The relay calls a listener from its own threads (the loop thread, and the renewal
 * thread for {@link #onOwnedBucketsChanged} and {@link #onLeasesExpired}; a transport's thread for
 * {@link #onNotificationStateChanged}), and {@link #onWakeUp} from the thread that wakes it;
 * implementations are thread-safe and quick, and never block. An exception thrown by a listener is logged and otherwise ignored: it never changes what
 * the relay publishes or deletes.
 */
public interface RelayListener {

    /**
     * The relay's loop started (before its first acquisition); called on the loop thread.
     *
     * @param options the relay's options; not null
     */
    default void onStarted(RelayOptions options) {
    }

    /**
     * One pass of the relay's loop ended (O3): acquire when due, discover, start tasks, without
     * the idle wait that may follow. Loop thread.
     *
     * @param took how long the pass took, by {@link System#nanoTime()}; not null, not negative
     */
    default void onCycle(Duration took) {
    }

    /**
     * The relay looked for owned buckets with pending messages ({@code bucketsWithPending}), at the
     * poll interval or after a wake-up (R8). Loop thread.
     *
     * @param foundWork whether some owned bucket had pending messages
     */
    default void onPoll(boolean foundWork) {
    }

    /**
     * {@link OutboxRelay#wakeUp()} or {@link OutboxRelay#wakeUp(java.util.Collection)} was called
     * (R8). Called on the caller's thread (a committing thread, a transport's thread): keep it a
     * counter increment.
     */
    default void onWakeUp() {
    }

    /**
     * Leases this relay held ran out before a store call confirmed them again (R1), or a renewal
     * found them taken (R5). Loop or renewal thread.
     *
     * @param buckets the buckets, ascending, immutable; never empty
     */
    default void onLeasesExpired(List<Integer> buckets) {
    }

    /**
     * The publisher answered a batch, successfully or not (before {@link #onPublished} and
     * {@link #onPublishFailed} for it). Loop thread.
     *
     * @param bucket the bucket
     * @param count the messages in the batch, {@code >= 1}
     * @param took from handing the batch to the publisher to its answer, by the relay's clock
     *     (millisecond resolution); not null
     */
    default void onPublishCompleted(int bucket, int count, Duration took) {
    }

    /**
     * How long each acknowledged and deleted message spent in the outbox: from its createdAt to
     * its deletion, by the relay's clock (O3). Called with {@link #onPublished}, on the loop thread.
     *
     * @param bucket the bucket
     * @param times one per acknowledged message, in order; immutable, never empty; an entry is zero
     *     when the writer's clock was ahead
     */
    default void onTimesInOutbox(int bucket, List<Duration> times) {
    }

    /**
     * The buckets this relay may publish changed: after an acquisition, a lost renewal (R5, R9), a
     * store error (R3) or the relay's stop.
     *
     * @param ownedBuckets the buckets now owned, ascending, immutable; empty when none
     */
    default void onOwnedBucketsChanged(List<Integer> ownedBuckets) {
    }

    /**
     * A lease round succeeded: the store answered {@code acquireBucketLeases} (S4), whether or not
     * the owned buckets changed. Called from the loop thread after {@link #onOwnedBucketsChanged}
     * for the same round; readiness checks (rule H1) use it.
     *
     * @param ownedBuckets the buckets owned after the round, ascending, immutable; empty when none
     */
    default void onLeaseRound(List<Integer> ownedBuckets) {
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
    default void onMessageFailed(int bucket, UUID messageId, int attempts, Throwable error) {
    }

    /**
     * A message was moved to the store's dead letters ({@link PoisonPolicy#DEAD_LETTER}, C4); its
     * bucket goes on with the messages behind it.
     *
     * @param bucket the bucket
     * @param messageId the message
     * @param failure what was recorded with it; not null
     */
    default void onDeadLettered(int bucket, UUID messageId, DeadLetterFailure failure) {
    }

    /**
     * A store call failed; the relay drops its lease state and retries after a backoff (R3).
     *
     * @param error the error; not null
     */
    default void onStoreError(Throwable error) {
    }

    /**
     * The notification transport that wakes this relay lost its listening connection or has it
     * back (rule N6); see {@link OutboxRelay#notificationStateChanged}. Called from the transport's
     * thread, once per change; the relay polls meanwhile (N4).
     *
     * @param state the new state; not null
     */
    default void onNotificationStateChanged(NotificationTransport.State state) {
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
