package io.outbox.relay.internal;

import io.outbox.relay.PublishResult;
import java.time.Duration;
import java.util.List;

/**
 * How a {@link BucketTask} ended: the one value a task hands to the loop thread, through
 * {@link StoreWork}'s completion queue, once every part of it (the read, the publish with its
 * delete, the read ahead) has ended. Immutable; the loop reads nothing else of the task.
 *
 * @param bucket the task's bucket
 * @param kind how it ended
 * @param batchSize the messages read (and published, for {@link Kind#PUBLISHED} and
 *     {@link Kind#LEASE_LOST}); 0 when none
 * @param limit the batch size asked of the store: one while the bucket's head has counted failures
 *     (R12); 0 when the task read nothing
 * @param full whether the batch may have left messages behind: it reached {@code limit}, or the
 *     byte budget may have stopped it ({@link StoreWork#full}); the loop then reads the bucket
 *     again without waiting (R4)
 * @param result the publisher's answer, normalized; null when nothing was published
 * @param publishMillis how long the publish took by the relay's clock; 0 when none
 * @param failure what the task did with a failed message (R12, C4); null when nothing was counted
 * @param ahead the bucket's next batch, read during the publish (C5); null when none was read
 * @param error why the task failed, for {@link Kind#FAILED}; else null
 * @param timesInOutbox for each acknowledged and deleted message, from its createdAt to the delete
 *     (O3); empty when none
 */
record TaskOutcome(int bucket, Kind kind, int batchSize, int limit, boolean full, PublishResult result,
                   long publishMillis, HeadFailures.Handled failure, ReadBatch ahead, Throwable error,
                   List<Duration> timesInOutbox) {

    /** How a bucket's task ended. */
    enum Kind {
        /** Not run: the relay was stopping, or an earlier failure stopped new work. */
        SKIPPED,
        /** The bucket held no pending message. */
        EMPTY,
        /** The lease was too short to start a publish (R1, R5); nothing was published. */
        NO_LEASE,
        /** The lease ended during the publish (R9); nothing was deleted. */
        LEASE_LOST,
        /** The publisher answered; the acknowledged prefix was deleted. */
        PUBLISHED,
        /** A store call or a check of its answer failed. */
        FAILED,
        /** The relay gave up on the task after its close timeout; nothing was deleted. */
        ABANDONED
    }

    /** An end before anything was read or published. */
    static TaskOutcome of(int bucket, Kind kind) {
        return new TaskOutcome(bucket, kind, 0, 0, false, null, 0, null, null, null, List.of());
    }

    /** A failure of a store call or of a check of the store's answer. */
    static TaskOutcome failed(int bucket, Throwable error) {
        return new TaskOutcome(bucket, Kind.FAILED, 0, 0, false, null, 0, null, null, error, List.of());
    }

    /** The same outcome with the batch read ahead during its publish; this one when {@code next} is null. */
    TaskOutcome withAhead(ReadBatch next) {
        return next == null ? this
                : new TaskOutcome(bucket, kind, batchSize, limit, full, result, publishMillis, failure, next, error,
                        timesInOutbox);
    }
}
