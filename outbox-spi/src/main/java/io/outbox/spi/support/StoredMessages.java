package io.outbox.spi.support;

import io.outbox.OutboxHeader;
import io.outbox.OutboxMessage;
import io.outbox.OutboxPayloadTooLargeException;
import io.outbox.internal.MessageAccess;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * A message in the form a store keeps it, for store authors and the relay's publisher: rebuild a
 * message from the bytes a driver returned, and hand its bytes to a driver or to Kafka, without
 * copying them. {@link OutboxMessage} itself copies on the way in and out, as an application's
 * value must; each message's bytes are copied at most once between enqueue and broker: when
 * {@code OutboxMessage.create} takes them from the serializers.
 *
 * <p>Without copies the arrays are shared, so the rules are on the caller: an array passed to
 * {@link #rebuild} belongs to the message from then on, and an array from {@link #key} or
 * {@link #value} is the message's own. Neither may ever be modified (a driver writes them out or
 * sends them, and that is all). Also the payload arithmetic of rule S10: a store's largest
 * payload counts key, value and headers as encoded by {@link OutboxHeaderCodec}.
 *
 * <p>Stateless and thread-safe.
 */
public final class StoredMessages {

    private static final MessageAccess.Accessor ACCESS = MessageAccess.accessor();

    private StoredMessages() {
    }

    /**
     * Rebuilds a message from stored fields, taking ownership of {@code key} and {@code value}:
     * they are not copied, and the caller must not modify them afterwards (a driver's freshly
     * read arrays qualify). Everything else is validated as {@code OutboxMessage.create}
     * validates it.
     *
     * @param messageId the stable message id; not null
     * @param bucket the bucket, {@code >= 0}
     * @param topic the Kafka topic; a legal topic name (E3)
     * @param key the serialized key; null for a keyless record (an empty array is a key)
     * @param value the serialized value; null for a tombstone (an empty array is a value)
     * @param headers the headers in order, as {@link OutboxHeaderCodec#decode} returns them; not
     *     null, no null elements
     * @param partition the explicit partition, {@code >= 0}, or null to let the key decide
     * @param createdAt when the message was created; not null; truncated to milliseconds (S10)
     * @return the message, equal to the one that was stored
     * @throws NullPointerException if a non-nullable argument is null
     * @throws IllegalArgumentException if {@code bucket} or {@code partition} is negative, or the
     *     topic is not a legal Kafka topic name; the message names the argument and the value.
     *     A store reading a batch reports it as a {@code CorruptMessageException}.
     */
    public static OutboxMessage rebuild(UUID messageId, int bucket, String topic, byte[] key, byte[] value,
                                        List<OutboxHeader> headers, Integer partition, Instant createdAt) {
        return ACCESS.newMessage(messageId, bucket, topic, key, value, headers, partition, createdAt);
    }

    /**
     * The message's serialized key itself, not a copy, to write to a database or send to Kafka.
     *
     * @param message the message; not null
     * @return the key array, or null for a keyless message; must not be modified
     * @throws NullPointerException if {@code message} is null
     */
    public static byte[] key(OutboxMessage message) {
        return ACCESS.key(message);
    }

    /**
     * The message's serialized value itself, not a copy, to write to a database or send to Kafka.
     *
     * @param message the message; not null
     * @return the value array, or null for a tombstone; must not be modified
     * @throws NullPointerException if {@code message} is null
     */
    public static byte[] value(OutboxMessage message) {
        return ACCESS.value(message);
    }

    /**
     * The message's headers encoded with {@link OutboxHeaderCodec}, as stores that keep them in
     * one binary field store them.
     *
     * @param message the message; not null
     * @return the encoded headers, a new array; never null
     * @throws NullPointerException if {@code message} is null
     */
    public static byte[] encodedHeaders(OutboxMessage message) {
        return OutboxHeaderCodec.encode(message.headers());
    }

    /**
     * The size of the message's content as a store must hold it (S10): serialized key plus
     * serialized value plus encoded headers ({@link OutboxHeaderCodec#encodedSize}), which are
     * {@value OutboxHeaderCodec#EMPTY_ENCODED_SIZE} bytes for a message without headers. Stores state
     * their largest payload in these units: a message without headers fits when its key and value
     * hold at most {@code maxPayloadBytes - }{@value OutboxHeaderCodec#EMPTY_ENCODED_SIZE} bytes
     * together.
     *
     * @param message the message; not null
     * @return the payload size in bytes
     * @throws NullPointerException if {@code message} is null
     */
    public static long payloadSize(OutboxMessage message) {
        return (long) Math.max(0, message.keyLength()) + Math.max(0, message.valueLength())
                + OutboxHeaderCodec.encodedSize(message.headers());
    }

    /**
     * Checks that a message fits a store's limit (S10); a store's enqueue helper calls this for
     * every message before it writes anything.
     *
     * @param message the message; not null
     * @param maxPayloadBytes the store's largest payload in bytes
     * @return {@code message}
     * @throws NullPointerException if {@code message} is null
     * @throws OutboxPayloadTooLargeException if {@link #payloadSize} exceeds {@code maxPayloadBytes};
     *     its message names the key's, the value's and the headers' share
     */
    public static OutboxMessage requirePayloadAtMost(OutboxMessage message, long maxPayloadBytes) {
        long keyBytes = Math.max(0, message.keyLength());
        long valueBytes = Math.max(0, message.valueLength());
        long headerBytes = OutboxHeaderCodec.encodedSize(message.headers());
        long size = keyBytes + valueBytes + headerBytes;
        if (size > maxPayloadBytes) {
            int none = OutboxHeaderCodec.EMPTY_ENCODED_SIZE;
            throw new OutboxPayloadTooLargeException("outbox message " + message.messageId() + " for topic '"
                    + message.topic() + "' has a payload of " + size + " bytes (key " + keyBytes + " + value "
                    + valueBytes + " + headers " + headerBytes + " as stored, " + none + " for none), more than "
                    + "this store's limit of " + maxPayloadBytes + " bytes; without headers, key and value may hold "
                    + Math.max(0, maxPayloadBytes - none) + " bytes together (rule S10); nothing was written",
                    message.messageId(), size, maxPayloadBytes);
        }
        return message;
    }
}
