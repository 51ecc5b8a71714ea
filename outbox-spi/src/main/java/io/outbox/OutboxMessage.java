package io.outbox;

import io.opentelemetry.api.GlobalOpenTelemetry;
import io.outbox.internal.MessageAccess;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serializer;

/**
 * One outgoing Kafka record, serialized once at enqueue time and stored until a relay has
 * published it and the broker acknowledged it.
 *
 * <p>Build one with {@code create(...)} (rule E1) and persist it with a store's enqueue helper in
 * the same transaction as the business change (E4). The relay never re-serializes: key, value and
 * headers go to Kafka as the bytes held here.
 *
 * <p>Instances are immutable and thread-safe: the serialized key and value are copied once when a
 * message is created, and {@link #key()} and {@link #value()} return copies. Two messages are
 * equal when their content is: message id, bucket, topic, key and value bytes, headers, partition
 * and creation time. A message read back from a store equals the one enqueued (S10); what the
 * store needs to delete it travels beside it ({@code io.outbox.spi.Pending}).
 * {@link #toString()} never shows key, value or header values.
 */
public final class OutboxMessage {

    static {
        MessageAccess.register(new Access());
    }

    /** Longest legal Kafka topic name, in characters. */
    public static final int MAX_TOPIC_LENGTH = 249;

    private final UUID messageId;
    private final int bucket;
    private final String topic;
    private final byte[] key;
    private final byte[] value;
    private final List<OutboxHeader> headers;
    private final Integer partition;
    private final Instant createdAt;

    /**
     * The one constructor; takes ownership of {@code key} and {@code value}, which nobody may
     * change afterwards. Public construction goes through {@code create} (E1), which copies what
     * the serializers returned, and stores go through {@link MessageAccess}.
     */
    private OutboxMessage(UUID messageId, int bucket, String topic, byte[] key, byte[] value,
                          List<OutboxHeader> headers, Integer partition, Instant createdAt) {
        this.messageId = Objects.requireNonNull(messageId, "messageId must not be null");
        if (bucket < 0) {
            throw new IllegalArgumentException("bucket must be >= 0 but was " + bucket);
        }
        this.bucket = bucket;
        this.topic = validateTopic(topic);
        this.key = key;
        this.value = value;
        this.headers = copyHeaders(headers);
        this.partition = validatePartition(partition);
        this.createdAt = Instant.ofEpochMilli(Objects.requireNonNull(createdAt, "createdAt must not be null")
                .toEpochMilli());
    }

    /**
     * Creates a message with no headers, bucketed by its key, stamped with the system UTC clock.
     *
     * @param <K> the key type
     * @param <V> the value type
     * @param topic the Kafka topic; a legal topic name
     * @param key the key; may be null
     * @param value the value; may be null
     * @param keySerializer serializes the key; not null (called even for a null key, as Kafka does)
     * @param valueSerializer serializes the value; not null
     * @param bucketCount the number of buckets, {@code >= 1}; must equal the relay's
     * @return the new message, with a random message id
     * @throws IllegalArgumentException on an illegal topic or bucket count (E3)
     * @throws NullPointerException if a serializer is null
     * @see #create(String, Object, Object, Serializer, Serializer, Iterable, int, Integer, Clock)
     */
    public static <K, V> OutboxMessage create(String topic, K key, V value, Serializer<K> keySerializer,
                                              Serializer<V> valueSerializer, int bucketCount) {
        return create(topic, key, value, keySerializer, valueSerializer, List.of(), bucketCount, null,
                Clock.systemUTC());
    }

    /**
     * Creates a message with headers, bucketed by its key, stamped with the system UTC clock.
     *
     * @param <K> the key type
     * @param <V> the value type
     * @param topic the Kafka topic; a legal topic name
     * @param key the key; may be null
     * @param value the value; may be null
     * @param keySerializer serializes the key; not null
     * @param valueSerializer serializes the value; not null
     * @param headers the record headers in order; not null, no null elements
     * @param bucketCount the number of buckets, {@code >= 1}; must equal the relay's
     * @return the new message, with a random message id
     * @throws IllegalArgumentException on an illegal topic or bucket count (E3)
     * @throws NullPointerException if a serializer or the headers are null
     * @see #create(String, Object, Object, Serializer, Serializer, Iterable, int, Integer, Clock)
     */
    public static <K, V> OutboxMessage create(String topic, K key, V value, Serializer<K> keySerializer,
                                              Serializer<V> valueSerializer, Iterable<? extends Header> headers,
                                              int bucketCount) {
        return create(topic, key, value, keySerializer, valueSerializer, headers, bucketCount, null,
                Clock.systemUTC());
    }

    /**
     * Creates a message with headers and an optional explicit partition, stamped with the system
     * UTC clock.
     *
     * @param <K> the key type
     * @param <V> the value type
     * @param topic the Kafka topic; a legal topic name
     * @param key the key; may be null
     * @param value the value; may be null
     * @param keySerializer serializes the key; not null
     * @param valueSerializer serializes the value; not null
     * @param headers the record headers in order; not null, no null elements
     * @param bucketCount the number of buckets, {@code >= 1}; must equal the relay's
     * @param partition the Kafka partition to send to, {@code >= 0}, or null to let the key decide
     * @return the new message, with a random message id
     * @throws IllegalArgumentException on an illegal topic, bucket count or partition (E3)
     * @throws NullPointerException if a serializer or the headers are null
     * @see #create(String, Object, Object, Serializer, Serializer, Iterable, int, Integer, Clock)
     */
    public static <K, V> OutboxMessage create(String topic, K key, V value, Serializer<K> keySerializer,
                                              Serializer<V> valueSerializer, Iterable<? extends Header> headers,
                                              int bucketCount, Integer partition) {
        return create(topic, key, value, keySerializer, valueSerializer, headers, bucketCount, partition,
                Clock.systemUTC());
    }

    /**
     * Creates a message (rule E1): validates the arguments (E3), serializes key and value exactly
     * once with the given Kafka serializers, assigns a random message id, computes the bucket
     * (E2, see {@link OutboxBucket}) and stamps {@code createdAt} from {@code clock} in
     * milliseconds.
     *
     * <p>The serializers are called as a {@code KafkaProducer} would call them,
     * {@code serialize(topic, headers, data)}, with a mutable copy of {@code headers}; headers a
     * serializer adds (a schema id, say) are kept, after the caller's. The serializers are not
     * configured or closed here.
     *
     * <p>Rule O1: inside a valid span, the current trace context follows as headers written by
     * {@link GlobalOpenTelemetry}'s propagator ({@code traceparent}, {@code tracestate}), except
     * names the headers already hold; without an OpenTelemetry SDK nothing is added. An
     * {@link OutboxMessageFactory} chooses another setting ({@link OutboxTracing}).
     *
     * @param <K> the key type
     * @param <V> the value type
     * @param topic the Kafka topic: 1 to 249 characters of {@code [a-zA-Z0-9._-]}, not "." or ".."
     * @param key the key; may be null (the message is then bucketed by its message id)
     * @param value the value; may be null (a tombstone)
     * @param keySerializer serializes the key; not null (called even for a null key, as Kafka does)
     * @param valueSerializer serializes the value; not null
     * @param headers the record headers in order; not null, no null elements, keys not null
     * @param bucketCount the number of buckets, {@code >= 1}; must equal the relay's
     * @param partition the Kafka partition to send to, {@code >= 0}, or null to let the key decide
     * @param clock the clock for {@code createdAt}; not null
     * @return the new message
     * @throws IllegalArgumentException on an illegal topic, bucket count or partition, or a header
     *     key that is not well-formed Unicode; the message names the argument and the bad value
     * @throws NullPointerException if a serializer, the headers, a header, or the clock is null
     */
    public static <K, V> OutboxMessage create(String topic, K key, V value, Serializer<K> keySerializer,
                                              Serializer<V> valueSerializer, Iterable<? extends Header> headers,
                                              int bucketCount, Integer partition, Clock clock) {
        return create(topic, key, value, keySerializer, valueSerializer, headers, bucketCount, partition, clock,
                OutboxTracing.global());
    }

    /** {@link #create(String, Object, Object, Serializer, Serializer, Iterable, int, Integer, Clock)} with a tracing setting. */
    static <K, V> OutboxMessage create(String topic, K key, V value, Serializer<K> keySerializer,
                                       Serializer<V> valueSerializer, Iterable<? extends Header> headers,
                                       int bucketCount, Integer partition, Clock clock, OutboxTracing tracing) {
        validateTopic(topic);
        OutboxBucket.requireBucketCount(bucketCount);
        validatePartition(partition);
        Objects.requireNonNull(keySerializer, "keySerializer must not be null");
        Objects.requireNonNull(valueSerializer, "valueSerializer must not be null");
        Objects.requireNonNull(clock, "clock must not be null");
        RecordHeaders recordHeaders = new RecordHeaders();
        for (Header header : Objects.requireNonNull(headers, "headers must not be null")) {
            recordHeaders.add(OutboxHeader.copyOf(header));
        }
        // Copied: a serializer may hand back an array its caller still holds (ByteArraySerializer
        // returns its argument), and the message must stay what was enqueued.
        byte[] keyBytes = copy(keySerializer.serialize(topic, recordHeaders, key));
        byte[] valueBytes = copy(valueSerializer.serialize(topic, recordHeaders, value));
        UUID messageId = UUID.randomUUID();
        int bucket = OutboxBucket.of(keyBytes, partition, messageId, bucketCount);
        List<OutboxHeader> headerList = new ArrayList<>();
        for (Header header : recordHeaders) {
            headerList.add(OutboxHeader.copyOf(header));
        }
        headerList.addAll(tracing.currentContextHeaders(headerList)); // O1
        return new OutboxMessage(messageId, bucket, topic, keyBytes, valueBytes, headerList, partition,
                Instant.ofEpochMilli(clock.millis()));
    }

    /**
     * The stable message id; the relay stamps it on the Kafka record as a header (K2) so consumers
     * can drop repeats.
     *
     * @return the message id; never null
     */
    public UUID messageId() {
        return messageId;
    }

    /**
     * The ordering bucket, computed once at creation (E2).
     *
     * @return the bucket, {@code >= 0}
     */
    public int bucket() {
        return bucket;
    }

    /**
     * The Kafka topic.
     *
     * @return the topic; never null
     */
    public String topic() {
        return topic;
    }

    /**
     * A copy of the serialized key.
     *
     * @return the key bytes, a fresh copy; null for a keyless record
     */
    public byte[] key() {
        return key == null ? null : key.clone();
    }

    /**
     * A copy of the serialized value.
     *
     * @return the value bytes, a fresh copy; null for a tombstone
     */
    public byte[] value() {
        return value == null ? null : value.clone();
    }

    /**
     * The key's length.
     *
     * @return the key length in bytes, or -1 when the key is null
     */
    public int keyLength() {
        return key == null ? -1 : key.length;
    }

    /**
     * The value's length.
     *
     * @return the value length in bytes, or -1 when the value is null
     */
    public int valueLength() {
        return value == null ? -1 : value.length;
    }

    /**
     * The record headers, in order, repeats and null values kept.
     *
     * @return an immutable list; never null, empty when there are none
     */
    public List<OutboxHeader> headers() {
        return headers;
    }

    /**
     * The explicit Kafka partition.
     *
     * @return the partition ({@code >= 0}), or null when the producer's partitioner decides by key
     */
    public Integer partition() {
        return partition;
    }

    /**
     * When the message was created, in millisecond precision (S10).
     *
     * @return the creation instant; never null
     */
    public Instant createdAt() {
        return createdAt;
    }

    /**
     * Whether {@code o} is a message with the same content: message id, bucket, topic, key and
     * value (by their bytes), headers, partition and creation time.
     *
     * @param o the other object; may be null
     * @return true when every field above is equal
     */
    @Override
    public boolean equals(Object o) {
        return o == this || o instanceof OutboxMessage other
                && messageId.equals(other.messageId)
                && bucket == other.bucket
                && topic.equals(other.topic)
                && Arrays.equals(key, other.key)
                && Arrays.equals(value, other.value)
                && headers.equals(other.headers)
                && Objects.equals(partition, other.partition)
                && createdAt.equals(other.createdAt);
    }

    /**
     * The message id's hash: equal messages have equal ids, and a hash over the value's bytes
     * would cost as much as the value is long.
     *
     * @return the hash code
     */
    @Override
    public int hashCode() {
        return messageId.hashCode();
    }

    /** Describes the message without key, value or header values, which may be sensitive. */
    @Override
    public String toString() {
        return "OutboxMessage[messageId=" + messageId + ", topic=" + topic + ", bucket=" + bucket
                + ", partition=" + partition + ", key=" + describeLength(keyLength())
                + ", value=" + describeLength(valueLength()) + ", headers=" + headers.size()
                + ", createdAt=" + createdAt + "]";
    }

    private static String describeLength(int length) {
        return length < 0 ? "null" : length + " bytes";
    }

    /**
     * Checks a Kafka topic name (E3).
     *
     * @param topic the topic; must be 1 to 249 characters of {@code [a-zA-Z0-9._-]}, not "." or ".."
     * @return the topic
     * @throws NullPointerException if {@code topic} is null
     * @throws IllegalArgumentException naming the topic and the rule it breaks
     */
    public static String validateTopic(String topic) {
        Objects.requireNonNull(topic, "topic must not be null");
        if (topic.isEmpty()) {
            throw new IllegalArgumentException("topic must not be empty");
        }
        if (topic.length() > MAX_TOPIC_LENGTH) {
            throw new IllegalArgumentException("topic must be at most " + MAX_TOPIC_LENGTH + " characters but '"
                    + topic.substring(0, 40) + "...' has " + topic.length());
        }
        if (topic.equals(".") || topic.equals("..")) {
            throw new IllegalArgumentException("topic must not be '.' or '..' but was '" + topic + "'");
        }
        if (!isLegalTopicName(topic)) {
            throw new IllegalArgumentException("topic '" + topic
                    + "' is not a legal Kafka topic name: use only ASCII letters, digits, '.', '_' and '-'");
        }
        return topic;
    }

    /**
     * Whether every character is one of {@code [a-zA-Z0-9._-]}. A loop, not a regular expression:
     * stores validate the topic of every message they read.
     */
    private static boolean isLegalTopicName(String topic) {
        for (int i = 0; i < topic.length(); i++) {
            char c = topic.charAt(i);
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_'
                    || c == '-')) {
                return false;
            }
        }
        return true;
    }

    private static Integer validatePartition(Integer partition) {
        if (partition != null && partition < 0) {
            throw new IllegalArgumentException("partition must be >= 0 or null but was " + partition);
        }
        return partition;
    }

    private static List<OutboxHeader> copyHeaders(List<OutboxHeader> headers) {
        Objects.requireNonNull(headers, "headers must not be null");
        for (OutboxHeader header : headers) {
            Objects.requireNonNull(header, "headers must not contain null");
        }
        return List.copyOf(headers); // no copy of a list List.copyOf made, as a store's decoded headers are
    }

    private static byte[] copy(byte[] bytes) {
        return bytes == null ? null : bytes.clone();
    }

    /** The library's own access past the copies; see {@link MessageAccess}. */
    private static final class Access implements MessageAccess.Accessor {

        @Override
        public OutboxMessage newMessage(UUID messageId, int bucket, String topic, byte[] key, byte[] value,
                                        List<OutboxHeader> headers, Integer partition, Instant createdAt) {
            return new OutboxMessage(messageId, bucket, topic, key, value, headers, partition, createdAt);
        }

        @Override
        public byte[] key(OutboxMessage message) {
            return message.key;
        }

        @Override
        public byte[] value(OutboxMessage message) {
            return message.value;
        }
    }
}
