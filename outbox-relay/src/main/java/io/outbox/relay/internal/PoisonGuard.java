package io.outbox.relay.internal;

import io.outbox.relay.FailureKind;
import io.outbox.relay.PoisonPolicy;
import io.outbox.spi.DeadLetterFailure;
import java.time.Clock;
import java.time.Instant;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * Per-bucket bookkeeping of the failing head message (rule R12), kept apart from the engine's
 * loop: which message of a bucket failed for a reason of its own, how often in a row, since when,
 * and whether the policy now gives up on it. Retriable failures are never counted. While a
 * bucket's head has counted failures, the bucket reads batches of one message, so the messages
 * behind it are not re-sent with every attempt. With a store that keeps failing heads' records
 * (capability C4) the count is also stored after each counted failure and read back
 * ({@link #resume}) by the next owner of the bucket, so a takeover or a restart does not reset it.
 *
 * <p>Thread-safe (synchronized): the relay's store threads read batch limits and report outcomes
 * ({@link BucketTask}, {@link HeadFailures}), its loop thread forgets buckets it no longer owns.
 */
final class PoisonGuard {

    /** At most one WARN per bucket per this interval under {@link PoisonPolicy#BLOCK}. */
    private static final long WARN_INTERVAL_NANOS = TimeUnit.MINUTES.toNanos(1);

    /** A bucket's failing head. */
    private static final class Head {
        final UUID messageId;
        int attempts;
        final Instant firstFailureAt;
        Instant lastFailureAt;
        long lastWarnNanos;
        boolean warned;

        Head(UUID messageId, Instant at) {
            this.messageId = messageId;
            this.firstFailureAt = at;
            this.lastFailureAt = at;
        }

        Head(UUID messageId, int attempts, Instant firstFailureAt, Instant lastFailureAt) {
            this.messageId = messageId;
            this.attempts = attempts;
            this.firstFailureAt = firstFailureAt;
            this.lastFailureAt = lastFailureAt;
        }
    }

    /**
     * What a failure means for the bucket.
     *
     * @param kind the failure's kind
     * @param messageId the message it is counted against (or that failed, when not counted)
     * @param attempts the counted message-specific failures of that message in a row; 0 when none
     * @param giveUp whether the policy moves the message to the dead letters now
     * @param failure the counted failures for the store (the dead letter's record when
     *     {@code giveUp}, else the failing head's record) for a message-specific failure; null
     *     for other kinds
     * @param warn whether to log this failure at WARN (rate-limited under block)
     */
    record Verdict(FailureKind kind, UUID messageId, int attempts, boolean giveUp, DeadLetterFailure failure,
                   boolean warn) {
    }

    private final PoisonPolicy policy;
    private final int maxAttempts;
    private final String relayId;
    private final Clock clock;
    private final Map<Integer, Head> heads = new HashMap<>();

    PoisonGuard(PoisonPolicy policy, int maxAttempts, String relayId, Clock clock) {
        this.policy = policy;
        this.maxAttempts = maxAttempts;
        this.relayId = relayId;
        this.clock = clock;
    }

    PoisonPolicy policy() {
        return policy;
    }

    /** The batch size for the bucket's next read: one while its head has counted failures. */
    synchronized int batchLimit(int bucket, int batchSize) {
        return heads.containsKey(bucket) ? 1 : batchSize;
    }

    /**
     * Whether the bucket's count is of this message already, so no stored record needs reading.
     */
    synchronized boolean counting(int bucket, UUID messageId) {
        Head head = heads.get(bucket);
        return head != null && head.messageId.equals(messageId);
    }

    /**
     * Goes on from a stored record of the bucket's failing head (C4), read after this relay took
     * the bucket over or restarted: the next counted failure of that message is the record's
     * attempts plus one. Ignored when the bucket already counts that message.
     */
    synchronized void resume(int bucket, UUID messageId, DeadLetterFailure stored) {
        if (!counting(bucket, messageId)) {
            heads.put(bucket, new Head(messageId, stored.attempts(), stored.firstFailureAt(),
                    stored.lastFailureAt()));
        }
    }

    /** The bucket's head was acknowledged: its count ends. */
    synchronized void acknowledged(int bucket) {
        heads.remove(bucket);
    }

    /** Classifies and, for a message-specific failure, counts it. */
    synchronized Verdict failed(int bucket, UUID messageId, Throwable error) {
        FailureKind kind = FailureKind.classify(error);
        Head head = heads.get(bucket);
        if (kind != FailureKind.MESSAGE) {
            int attempts = head != null && head.messageId.equals(messageId) ? head.attempts : 0;
            return new Verdict(kind, messageId, attempts, false, null, true);
        }
        Instant now = Instant.ofEpochMilli(clock.millis());
        if (head == null || !head.messageId.equals(messageId)) {
            head = new Head(messageId, now);
            heads.put(bucket, head);
        }
        head.attempts++;
        head.lastFailureAt = now.isBefore(head.firstFailureAt) ? head.firstFailureAt : now;
        DeadLetterFailure failure = new DeadLetterFailure(LogText.oneLine(String.valueOf(error.getMessage())),
                error.getClass().getName(), head.attempts, head.firstFailureAt, head.lastFailureAt, relayId);
        if (policy == PoisonPolicy.DEAD_LETTER && head.attempts >= maxAttempts) {
            return new Verdict(kind, messageId, head.attempts, true, failure, true);
        }
        long nowNanos = System.nanoTime();
        boolean warn = policy == PoisonPolicy.DEAD_LETTER || !head.warned
                || nowNanos - head.lastWarnNanos >= WARN_INTERVAL_NANOS;
        if (warn) {
            head.warned = true;
            head.lastWarnNanos = nowNanos;
        }
        return new Verdict(kind, messageId, head.attempts, false, failure, warn);
    }

    /** The bucket's head left it (moved, or gone): its count ends. */
    synchronized void forget(int bucket) {
        heads.remove(bucket);
    }

    /** Keeps only the given buckets' heads: a bucket given up is counted afresh by its next owner. */
    synchronized void retain(BitSet owned) {
        heads.keySet().removeIf(bucket -> !owned.get(bucket));
    }
}
