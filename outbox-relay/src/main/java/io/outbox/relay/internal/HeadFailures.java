package io.outbox.relay.internal;

import io.outbox.relay.FailureKind;
import io.outbox.relay.PublishResult;
import io.outbox.spi.CorruptMessageException;
import io.outbox.spi.DeadLetterConflictException;
import io.outbox.spi.DeadLetterFailure;
import io.outbox.spi.DeadLetters;
import io.outbox.spi.HeadFailure;
import io.outbox.spi.Pending;
import java.time.Clock;
import java.util.List;
import java.util.UUID;
import org.slf4j.Logger;

/**
 * What a bucket task does with a failed publish (rule R12), on the task's store thread after the
 * delete of the acknowledged prefix: counts the failure against the message it names
 * ({@link PoisonGuard}), and with a store that keeps dead letters (capability C4) stores each
 * counted failure, goes on from the count a previous owner stored, and moves the message to the
 * dead letters when the policy gives up on it. Stateless but for the thread-safe guard it
 * updates; safe on several store threads at once (one task per bucket at a time).
 */
final class HeadFailures {

    private static final Logger LOG = RelayLog.LOG;

    /**
     * What was done with a failed message.
     *
     * @param verdict the failure's kind and count
     * @param deadLettered whether the message was moved to the dead letters (C4)
     * @param conflict why the policy's move was refused (another dead letter holds the id); null
     *     when it was not
     */
    record Handled(PoisonGuard.Verdict verdict, boolean deadLettered, DeadLetterConflictException conflict) {
    }

    private final PoisonGuard poison;
    /** The store's dead letters (C4); null when it has none. */
    private final DeadLetters deadLetters;
    private final LeaseTable leases;
    private final Clock clock;
    private final String relayId;

    HeadFailures(PoisonGuard poison, DeadLetters deadLetters, LeaseTable leases, Clock clock, String relayId) {
        this.poison = poison;
        this.deadLetters = deadLetters;
        this.leases = leases;
        this.clock = clock;
        this.relayId = relayId;
    }

    /**
     * R12: counts a message-specific failure and, when the policy gives up, moves the message (C4).
     * With C4 the count goes on from the bucket's stored record after a takeover or a restart, and
     * each counted failure is stored, so a peer, the next owner and {@code outbox-relay pending}
     * see it. A move refused because a dead letter with another record holds the message id
     * ({@link DeadLetterConflictException}) keeps the bucket waiting behind the message, as under
     * {@code block}; other buckets are not held up.
     *
     * @param batch the messages of the failed publish
     * @param result its failed result; the failed message is the one after the acknowledged prefix
     * @param corrupt the row after the batch the store could not decode, when the whole batch was
     *     acknowledged; else null
     */
    Handled handle(int bucket, List<Pending> batch, PublishResult result, CorruptMessageException corrupt) {
        int acknowledged = result.acknowledged();
        UUID failed = acknowledged < batch.size() ? batch.get(acknowledged).message().messageId() : corrupt.messageId();
        Throwable error = result.firstError();
        if (deadLetters != null && FailureKind.classify(error) == FailureKind.MESSAGE
                && !poison.counting(bucket, failed)) {
            resumeCount(bucket, failed);
        }
        PoisonGuard.Verdict verdict = poison.failed(bucket, failed, error);
        if (verdict.kind() != FailureKind.MESSAGE || deadLetters == null || !leases.isHeld(bucket, clock.millis())) {
            return new Handled(verdict, false, null);
        }
        DeadLetterFailure record = verdict.failure();
        DeadLetterConflictException conflict = null;
        if (verdict.giveUp()) {
            try {
                boolean moved = deadLetters.moveToDeadLetters(bucket, failed, record);
                poison.forget(bucket);
                return new Handled(verdict, moved, null);
            } catch (DeadLetterConflictException e) {
                conflict = e; // nothing changed: the message stays pending and its bucket waits
                record = new DeadLetterFailure(LogText.oneLine(e.getMessage()) + "; last error: " + record.reason(),
                        record.causeClass(), record.attempts(), record.firstFailureAt(), record.lastFailureAt(),
                        record.relayId());
            }
        }
        try {
            deadLetters.recordHeadFailure(bucket, failed, record);
        } catch (RuntimeException e) {
            // The count goes on in memory; only a takeover before the next stored record loses it.
            LOG.warn("could not store the failures of a bucket's head relayId={} bucket={} messageId={} error={}",
                    relayId, bucket, failed, LogText.oneLine(e.toString()));
        }
        return new Handled(verdict, false, conflict);
    }

    /** Reads the bucket's stored record of its failing head (C4) and goes on from it. */
    private void resumeCount(int bucket, UUID failed) {
        try {
            for (HeadFailure stored : deadLetters.headFailures(List.of(bucket))) {
                if (stored.bucket() == bucket && stored.messageId().equals(failed)) {
                    poison.resume(bucket, failed, stored.failure());
                    LOG.info("going on with the stored failures of a bucket's head relayId={} bucket={} messageId={} "
                            + "attempts={} countedBy={}", relayId, bucket, failed, stored.failure().attempts(),
                            LogText.visible(stored.failure().relayId()));
                }
            }
        } catch (RuntimeException e) {
            LOG.warn("could not read the stored failures of a bucket's head; counting from here relayId={} bucket={} "
                    + "messageId={} error={}", relayId, bucket, failed, LogText.oneLine(e.toString()));
        }
    }
}
