package io.outbox.internal;

import io.outbox.OutboxHeader;
import io.outbox.OutboxMessage;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * Unsupported: the one way past {@link OutboxMessage}'s copies, for the library's own store and
 * relay code. Not an API; it may change or go in any release. Stores use
 * {@code io.outbox.spi.support.StoredMessages}, which documents what its caller owes.
 *
 * <p>{@link OutboxMessage} registers its {@link Accessor} when its class is initialized, and
 * {@link #accessor()} initializes that class first, so the accessor is there whatever runs first
 * (the pattern of the JDK's shared secrets). Thread-safe.
 */
public final class MessageAccess {

    private static volatile Accessor accessor;

    private MessageAccess() {
    }

    /**
     * What {@link OutboxMessage} lets its own library do without copying a byte array.
     */
    public interface Accessor {

        /**
         * Builds a message that takes ownership of {@code key} and {@code value}: they are not
         * copied, and nobody may change them afterwards.
         *
         * @param messageId the message id; not null
         * @param bucket the bucket, {@code >= 0}
         * @param topic a legal Kafka topic name
         * @param key the serialized key, or null; owned by the message from now on
         * @param value the serialized value, or null; owned by the message from now on
         * @param headers the headers in order; not null, no null elements
         * @param partition the explicit partition, {@code >= 0}, or null
         * @param createdAt the creation time; not null; truncated to milliseconds
         * @return the message
         * @throws NullPointerException if a non-nullable argument is null
         * @throws IllegalArgumentException if the bucket or partition is negative or the topic is
         *     illegal, naming the bad value
         */
        OutboxMessage newMessage(UUID messageId, int bucket, String topic, byte[] key, byte[] value,
                                 List<OutboxHeader> headers, Integer partition, Instant createdAt);

        /**
         * The message's own key array, not a copy.
         *
         * @param message the message; not null
         * @return the key array, or null for a keyless message; must not be modified
         */
        byte[] key(OutboxMessage message);

        /**
         * The message's own value array, not a copy.
         *
         * @param message the message; not null
         * @return the value array, or null for a tombstone; must not be modified
         */
        byte[] value(OutboxMessage message);
    }

    /**
     * Called once, by {@link OutboxMessage}'s class initializer.
     *
     * @param messages the accessor; not null
     * @throws IllegalStateException if an accessor is registered already
     */
    public static synchronized void register(Accessor messages) {
        if (accessor != null) {
            throw new IllegalStateException("the OutboxMessage accessor is registered already");
        }
        accessor = Objects.requireNonNull(messages, "messages must not be null");
    }

    /**
     * The accessor {@link OutboxMessage} registered.
     *
     * @return the accessor; never null
     */
    public static Accessor accessor() {
        Accessor registered = accessor;
        if (registered == null) {
            initialize(OutboxMessage.class);
            registered = accessor;
        }
        return registered;
    }

    private static void initialize(Class<?> type) {
        try {
            Class.forName(type.getName(), true, type.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("cannot initialize " + type.getName(), e);
        }
    }
}
