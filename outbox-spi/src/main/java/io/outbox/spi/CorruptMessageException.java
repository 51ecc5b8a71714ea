package io.outbox.spi;

import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * A data error of one stored message (rule R12): a header blob, key, value or field the store
 * cannot decode. Retrying the read cannot help, but the error belongs to that one row, not to
 * the store: the relay counts it against the message, backs off its bucket alone and keeps its
 * other buckets running. With {@code poison.policy=dead-letter} and a store that has
 * {@link DeadLetters} (C4, {@link OutboxStore#deadLetters()}), the row is moved to the dead
 * letters by bucket and id, its stored bytes untouched.
 *
 * <p>{@link OutboxStore#nextBatch} throws it for the first row of the batch it cannot decode,
 * with the rows before it already decoded ({@link #messagesBefore()}), so the relay can still
 * publish them: a corrupt row never holds back the rows ahead of it.
 */
public class CorruptMessageException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final int bucket;
    private final UUID messageId;
    private final transient List<Pending> messagesBefore;

    /**
     * Creates the exception.
     *
     * @param bucket the bucket of the bad row, {@code >= 0}
     * @param messageId the message id of the bad row; not null (a row whose id itself cannot be
     *     read is a store error, not this)
     * @param messagesBefore the decoded entries ahead of it in the batch being read, oldest
     *     first, as {@code nextBatch} would have returned them; not null, may be empty; copied
     * @param message what is wrong and where; not null
     * @param cause the decoding error, for example a {@link CorruptHeadersException}; may be null
     * @throws IllegalArgumentException if {@code bucket < 0}
     */
    public CorruptMessageException(int bucket, UUID messageId, List<Pending> messagesBefore,
                                   String message, Throwable cause) {
        super(message, cause);
        if (bucket < 0) {
            throw new IllegalArgumentException("bucket must be >= 0 but was " + bucket);
        }
        this.bucket = bucket;
        this.messageId = Objects.requireNonNull(messageId, "messageId must not be null");
        this.messagesBefore = List.copyOf(Objects.requireNonNull(messagesBefore, "messagesBefore must not be null"));
    }

    /**
     * The bucket of the bad row.
     *
     * @return the bucket
     */
    public int bucket() {
        return bucket;
    }

    /**
     * The message id of the bad row.
     *
     * @return the id
     */
    public UUID messageId() {
        return messageId;
    }

    /**
     * The decoded entries ahead of the bad row in the batch that was being read, with their
     * handles, so the relay can publish and delete them.
     *
     * @return the entries, oldest first, immutable; empty when the bad row is the bucket's head
     *     (or after deserialization of the exception)
     */
    public List<Pending> messagesBefore() {
        return messagesBefore == null ? List.of() : messagesBefore;
    }
}
