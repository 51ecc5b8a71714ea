package io.outbox.spi;

import java.util.Objects;
import java.util.UUID;

/**
 * The recorded failures of a bucket's head message (capability C4, rule R12): which message
 * stalls the bucket, how many message-specific failures were counted against it, since when,
 * the last cause and which relay counted it. Written by the relay that holds the bucket's lease
 * through {@link DeadLetters#recordHeadFailure}, read back by {@link DeadLetters#headFailures}
 * (by a relay that took the bucket over, so its count goes on, and by the operator command
 * {@code outbox-relay pending}).
 *
 * @param bucket the bucket, {@code >= 0}
 * @param messageId the failing head's message id; not null
 * @param failure the counted failures; not null
 */
public record HeadFailure(int bucket, UUID messageId, DeadLetterFailure failure) {

    /**
     * Validates the fields.
     *
     * @param bucket see the record component
     * @param messageId see the record component
     * @param failure see the record component
     * @throws NullPointerException if {@code messageId} or {@code failure} is null
     * @throws IllegalArgumentException if {@code bucket < 0}
     */
    public HeadFailure {
        if (bucket < 0) {
            throw new IllegalArgumentException("bucket must be >= 0 but was " + bucket);
        }
        Objects.requireNonNull(messageId, "messageId must not be null");
        Objects.requireNonNull(failure, "failure must not be null");
    }
}
