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
     * Creates the exception with the parts of the payload, which its message names: key, value
     * and headers as stored ({@link io.outbox.spi.support.OutboxHeaderCodec}, which stores
     * {@value io.outbox.spi.support.OutboxHeaderCodec#EMPTY_ENCODED_SIZE} bytes for no headers).
     *
     * @param messageId the refused message's id; not null
     * @param topic the refused message's topic; not null
     * @param keyBytes the serialized key's length (0 for a null key)
     * @param valueBytes the serialized value's length (0 for a null value)
     * @param headerBytes the encoded headers' length
     * @param maxPayloadBytes the store's largest payload in bytes
     */
    public OutboxPayloadTooLargeException(UUID messageId, String topic, long keyBytes, long valueBytes,
                                          long headerBytes, long maxPayloadBytes) {
        super("outbox message " + messageId + " for topic '" + topic + "' has a payload of "
                + (keyBytes + valueBytes + headerBytes) + " bytes (key " + keyBytes + " + value " + valueBytes
                + " + headers " + headerBytes + " as stored, " + io.outbox.spi.support.OutboxHeaderCodec.EMPTY_ENCODED_SIZE
                + " for none), more than this store's limit of " + maxPayloadBytes + " bytes; without headers, key "
                + "and value may hold " + Math.max(0, maxPayloadBytes - io.outbox.spi.support.OutboxHeaderCodec.EMPTY_ENCODED_SIZE)
                + " bytes together (rule S10); nothing was written");
        this.messageId = messageId;
        this.payloadBytes = keyBytes + valueBytes + headerBytes;
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
