package io.outbox.spi;

import java.util.Objects;
import java.util.UUID;

/**
 * A message cannot be moved to the dead letters because a dead letter with its message id exists
 * already and holds a different record (topic, key, value, header blob or partition): moving it
 * would lose one of the two. Thrown by {@link DeadLetters#moveToDeadLetters}; nothing changed, the
 * message is still pending in its bucket. The relay then keeps the bucket waiting behind it, as
 * under {@code poison.policy=block}, until an operator replays or purges the existing dead letter
 * (rule R12). Not retriable by waiting alone.
 */
public class DeadLetterConflictException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    private final int bucket;
    private final transient UUID messageId;

    /**
     * Creates the exception.
     *
     * @param bucket the pending message's bucket
     * @param messageId the message id both share; not null
     * @param where names the dead letters (a table, collection or items); not null
     */
    public DeadLetterConflictException(int bucket, UUID messageId, String where) {
        super("a dead letter with message id " + Objects.requireNonNull(messageId, "messageId must not be null")
                + " exists already in " + where + " with a different record; the pending message stays in bucket "
                + bucket + ": replay or purge the existing dead letter (outbox-relay dead-letters show " + messageId
                + ")");
        this.bucket = bucket;
        this.messageId = messageId;
    }

    /**
     * The pending message's bucket.
     *
     * @return the bucket
     */
    public int bucket() {
        return bucket;
    }

    /**
     * The message id the pending message and the dead letter share.
     *
     * @return the id; null only after deserialization
     */
    public UUID messageId() {
        return messageId;
    }
}
