package io.outbox.spi;

import io.outbox.OutboxMessage;
import java.util.UUID;

/**
 * Thrown by a store's enqueue helper when a message's {@link OutboxMessage#payloadSize()} exceeds
 * the largest payload the store accepts (rule S10). Nothing has been written when it is thrown.
 */
public class OutboxPayloadTooLargeException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    private final transient UUID messageId;
    private final long payloadBytes;
    private final long maxPayloadBytes;

    /**
     * Creates the exception.
     *
     * @param messageId the refused message's id; not null
     * @param topic the refused message's topic; not null
     * @param payloadBytes the message's payload size in bytes
     * @param maxPayloadBytes the store's largest payload in bytes
     */
    public OutboxPayloadTooLargeException(UUID messageId, String topic, long payloadBytes, long maxPayloadBytes) {
        super("outbox message " + messageId + " for topic '" + topic + "' has a payload of " + payloadBytes
                + " bytes (key + value + encoded headers), more than this store's limit of " + maxPayloadBytes
                + " bytes; nothing was written");
        this.messageId = messageId;
        this.payloadBytes = payloadBytes;
        this.maxPayloadBytes = maxPayloadBytes;
    }

    /**
     * The refused message's id.
     *
     * @return the message id
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
