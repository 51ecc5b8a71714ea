package io.outbox.spi;

import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * Optional store capability C4: the store's dead letters, where a relay moves a message it gave
 * up on (rule R12, {@code poison.policy=dead-letter}) and where an operator lists, shows,
 * replays and purges them.
 *
 * <ul>
 *   <li>{@link #moveToDeadLetters} is atomic: one transaction, one conditional write or one
 *       {@code TransactWriteItems}. After it the message is either still pending and no dead
 *       letter was written, or it is a dead letter and no longer pending: never lost, never
 *       both.</li>
 *   <li>Dead letters are never leased, never returned by {@link OutboxStore#nextBatch}, never
 *       counted by {@link OutboxStore#bucketsWithPending} or {@link PendingMetrics}, never
 *       published.</li>
 *   <li>A store keeps at most one dead letter per message id. Moving a message whose id already
 *       has a dead letter with the same record (topic, key, value, header blob, partition: a
 *       repeat, such as a message enqueued twice) removes the pending message and gives the
 *       existing dead letter the new failure, atomically: nothing is lost, since both held the
 *       same record. When the records differ the move throws {@link DeadLetterConflictException}
 *       and changes nothing: neither is lost, and the message stays pending.</li>
 *   <li>{@link #recordHeadFailure} keeps, durably, the counted failures of a bucket's failing
 *       head, so that a relay taking the bucket over (or restarted) goes on counting, and an
 *       operator command in another process can show them; {@link #headFailures} reports a
 *       record only while its message is the bucket's head, so publishing or moving the head
 *       clears it.</li>
 *   <li>{@link #replayDeadLetter} puts the message back into its bucket as a new pending message
 *       with the same id and bytes, after every message pending in that bucket now, and removes
 *       the dead letter, atomically.</li>
 *   <li>{@link #purgeDeadLetter} removes exactly the dead letter it names.</li>
 * </ul>
 * Thread-safe; may run concurrently with every other store call. Every error other than the
 * documented results is a {@link RuntimeException} after which nothing changed.
 *
 * <p>A store offers it through {@link OutboxStore#deadLetters()}: a store that implements it
 * itself implements {@link Self}, which returns the store there.
 */
public interface DeadLetters {

    /**
     * Moves a pending message, with its stored bytes as they are (even a header blob that cannot
     * be decoded), into the dead letters, recording why.
     *
     * @param bucket the message's bucket, {@code >= 0}
     * @param messageId the message's id; not null. When a bucket holds two pending messages with
     *     the same id (a writer's bug), the older one is moved.
     * @param failure why; not null
     * @return true when moved; false when no pending message of that id is in that bucket (it
     *     was published or moved meanwhile): nothing was written then
     * @throws DeadLetterConflictException if a dead letter with that id and a different record
     *     exists already; nothing changed. (With the same record the move succeeds: the pending
     *     message is removed and the dead letter records the new failure.)
     * @throws IllegalArgumentException if {@code bucket < 0}; nothing changed
     * @throws RuntimeException on a database error; nothing changed
     */
    boolean moveToDeadLetters(int bucket, UUID messageId, DeadLetterFailure failure);

    /**
     * Records, durably, the counted failures of a pending message that stalls its bucket
     * (capability C4, rule R12): one record per bucket, replacing the bucket's previous one.
     * The relay calls it after each message-specific failure of the bucket's head, with the
     * attempts counted so far (read back with {@link #headFailures} after a takeover or a restart,
     * so the count survives them). The record goes with its message: once the message is
     * published or moved it is no longer reported; a move removes it.
     *
     * @param bucket the message's bucket, {@code >= 0}
     * @param messageId the pending message's id; not null
     * @param failure the counted failures; not null
     * @return true when recorded; false when no pending message of that id is in that bucket
     *     (published or moved meanwhile): nothing was written then
     * @throws IllegalArgumentException if {@code bucket < 0}
     * @throws RuntimeException on a database error; the previous record may be kept
     */
    boolean recordHeadFailure(int bucket, UUID messageId, DeadLetterFailure failure);

    /**
     * The recorded failures of the heads of these buckets: for each bucket whose head (its
     * oldest pending message) has a record from {@link #recordHeadFailure}, that record. A
     * record of a message that is no longer the head is not reported.
     *
     * @param buckets the buckets, each {@code >= 0}; not null; may be empty
     * @return the records, ascending by bucket, at most one per bucket; immutable
     * @throws NullPointerException if the list or a bucket is null
     * @throws IllegalArgumentException if a bucket is negative
     * @throws RuntimeException on a database error
     */
    List<HeadFailure> headFailures(List<Integer> buckets);

    /**
     * One page of dead letters, ordered by message id in its text form (which is also the order
     * of its 16 bytes read as unsigned).
     *
     * @param after list only ids after this one; null for the first page
     * @param limit the most dead letters returned, in {@code [1, 1000]}
     * @return the page, immutable; shorter than {@code limit} (possibly empty) on the last page
     * @throws IllegalArgumentException if {@code limit} is out of range
     */
    List<DeadLetter> deadLetters(UUID after, int limit);

    /**
     * One dead letter.
     *
     * @param messageId the id; not null
     * @return the dead letter, or empty when there is none with that id
     */
    Optional<DeadLetter> deadLetter(UUID messageId);

    /**
     * Puts a dead letter back into its bucket as a pending message with the same id, topic, key,
     * value, header blob, partition and creation time, enqueued after every message pending in
     * that bucket now, and removes the dead letter; atomically.
     *
     * @param messageId the id; not null
     * @return true when replayed; false when there is no dead letter with that id
     * @throws RuntimeException on a database error; nothing changed
     */
    boolean replayDeadLetter(UUID messageId);

    /**
     * Removes one dead letter for good.
     *
     * @param messageId the id; not null
     * @return true when removed; false when there was none with that id
     * @throws RuntimeException on a database error; nothing changed
     */
    boolean purgeDeadLetter(UUID messageId);

    /**
     * Checks a page size for {@link #deadLetters}.
     *
     * @param limit the requested page size
     * @return {@code limit}
     * @throws IllegalArgumentException if {@code limit} is not in {@code [1, 1000]}
     */
    static int requireLimit(int limit) {
        if (limit < 1 || limit > 1000) {
            throw new IllegalArgumentException("limit must be in [1, 1000] but was " + limit);
        }
        return limit;
    }

    /**
     * A store that is its own {@link DeadLetters}: implementing this interface makes
     * {@link OutboxStore#deadLetters()} return the store (C4), with no accessor to write.
     */
    interface Self extends OutboxStore, DeadLetters {

        /**
         * This store, which is its own {@link DeadLetters} (C4).
         *
         * @return this store
         */
        @Override
        default Optional<DeadLetters> deadLetters() {
            return Optional.of(this);
        }
    }
}
