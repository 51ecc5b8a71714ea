package io.outbox;

import java.util.Objects;
import java.util.UUID;

/**
 * Thrown by a store's enqueue helper when a message is larger than the store holds (rule S10):
 * its payload (serialized key, serialized value and headers as the store keeps them) exceeds the
 * store's largest payload. Nothing has been written when it is thrown, so the caller's
 * transaction can roll back or go on without the message. Retrying the same message cannot help.
 */
public class OutboxPayloadTooLargeException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    private final transient UUID messageId;
    private final long payloadBytes;
    private final long maxPayloadBytes;

    /**
     * Creates the exception; stores create it through
     * {@code io.outbox.spi.support.StoredMessages.requirePayloadAtMost}, which words the message.
     *
     * @param message what was refused and why, naming the sizes; not null
     * @param messageId the refused message's id; not null
     * @param payloadBytes the message's payload size in bytes
     * @param maxPayloadBytes the store's largest payload in bytes
     * @throws NullPointerException if {@code message} or {@code messageId} is null
     */
    public OutboxPayloadTooLargeException(String message, UUID messageId, long payloadBytes, long maxPayloadBytes) {
        super(Objects.requireNonNull(message, "message must not be null"));
        this.messageId = Objects.requireNonNull(messageId, "messageId must not be null");
        this.payloadBytes = payloadBytes;
        this.maxPayloadBytes = maxPayloadBytes;
    }

    /**
     * The refused message's id.
     *
     * @return the message id; null after deserialization
     */
    public UUID messageId() {
        return messageId;
    }

    /**
     * The refused message's payload size.
     *
     * @return the payload size in bytes
     */
    public long payloadBytes() {
        return payloadBytes;
    }

    /**
     * The store's limit.
     *
     * @return the largest payload the store accepts, in bytes
     */
    public long maxPayloadBytes() {
        return maxPayloadBytes;
    }
}
