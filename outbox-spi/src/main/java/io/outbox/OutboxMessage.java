package io.outbox;

import io.outbox.spi.OutboxPayloadTooLargeException;
import io.outbox.spi.OutboxStore;
import io.outbox.spi.support.OutboxHeaderCodec;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
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
 * <p>The class is not final so that a store can subclass it to carry its native identifier (a
 * row id, a document id, a sort key) from {@link OutboxStore#nextBatch} to
 * {@link OutboxStore#markPublished} (rule S2); subclasses must stay immutable. Instances are
 * immutable and thread-safe: byte arrays are copied on the way in and on the way out. Equality is
 * identity, as S2 passes the very instances back; compare content with {@link #sameContent}.
 * {@link #toString()} never shows key, value or header values.
 */
public class OutboxMessage {

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
     * Reconstructs a message from stored fields; stores call this when they read a batch.
     *
     * @param messageId the stable message id; not null
     * @param bucket the bucket, {@code >= 0}
     * @param topic the Kafka topic; a legal topic name (E3)
     * @param key the serialized key; null for a keyless record (an empty array is a key); copied
     * @param value the serialized value; null for a tombstone (an empty array is a value); copied
     * @param headers the headers in order; not null (use an empty list), no null elements; copied
     * @param partition the explicit partition, {@code >= 0}, or null to let the key decide
     * @param createdAt when the message was created; not null; truncated to milliseconds (S10)
     * @throws NullPointerException if a non-nullable argument is null
     * @throws IllegalArgumentException if {@code bucket} or {@code partition} is negative, or the
     *     topic is not a legal Kafka topic name; the message names the argument and the value
     */
    public OutboxMessage(UUID messageId, int bucket, String topic, byte[] key, byte[] value,
                         Iterable<? extends Header> headers, Integer partition, Instant createdAt) {
        this.messageId = Objects.requireNonNull(messageId, "messageId must not be null");
        if (bucket < 0) {
            throw new IllegalArgumentException("bucket must be >= 0 but was " + bucket);
        }
        this.bucket = bucket;
        this.topic = validateTopic(topic);
        this.key = key == null ? null : key.clone();
        this.value = value == null ? null : value.clone();
        this.headers = copyHeaders(headers);
        this.partition = validatePartition(partition);
        this.createdAt = Instant.ofEpochMilli(Objects.requireNonNull(createdAt, "createdAt must not be null")
                .toEpochMilli());
    }

    /**
     * Copies another message, for subclasses that add a store-native identifier. The copy shares
     * the source's immutable state; nothing is re-validated.
     *
     * @param source the message to copy; not null
     * @throws NullPointerException if {@code source} is null
     */
    protected OutboxMessage(OutboxMessage source) {
        Objects.requireNonNull(source, "source must not be null");
        this.messageId = source.messageId;
        this.bucket = source.bucket;
        this.topic = source.topic;
        this.key = source.key;
        this.value = source.value;
        this.headers = source.headers;
        this.partition = source.partition;
        this.createdAt = source.createdAt;
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
        byte[] keyBytes = keySerializer.serialize(topic, recordHeaders, key);
        byte[] valueBytes = valueSerializer.serialize(topic, recordHeaders, value);
        UUID messageId = UUID.randomUUID();
        int bucket = OutboxBucket.of(keyBytes, partition, messageId, bucketCount);
        return new OutboxMessage(messageId, bucket, topic, keyBytes, valueBytes, recordHeaders, partition,
                Instant.ofEpochMilli(clock.millis()));
    }

    /**
     * The stable message id; the relay stamps it on the Kafka record as a header (K2) so consumers
     * can drop repeats.
     *
     * @return the message id; never null
     */
    public final UUID messageId() {
        return messageId;
    }

    /**
     * The ordering bucket, computed once at creation (E2).
     *
     * @return the bucket, {@code >= 0}
     */
    public final int bucket() {
        return bucket;
    }

    /**
     * The Kafka topic.
     *
     * @return the topic; never null
     */
    public final String topic() {
        return topic;
    }

    /**
     * A copy of the serialized key.
     *
     * @return the key bytes, a fresh copy; null for a keyless record
     */
    public final byte[] key() {
        return key == null ? null : key.clone();
    }

    /**
     * A copy of the serialized value.
     *
     * @return the value bytes, a fresh copy; null for a tombstone
     */
    public final byte[] value() {
        return value == null ? null : value.clone();
    }

    /**
     * The key's length.
     *
     * @return the key length in bytes, or -1 when the key is null
     */
    public final int keyLength() {
        return key == null ? -1 : key.length;
    }

    /**
     * The value's length.
     *
     * @return the value length in bytes, or -1 when the value is null
     */
    public final int valueLength() {
        return value == null ? -1 : value.length;
    }

    /**
     * The record headers, in order, repeats and null values kept.
     *
     * @return an immutable list; never null, empty when there are none
     */
    public final List<OutboxHeader> headers() {
        return headers;
    }

    /**
     * The headers encoded with {@link OutboxHeaderCodec}, as stores that keep them in one binary
     * field store them.
     *
     * @return the encoded headers; never null
     */
    public final byte[] encodedHeaders() {
        return OutboxHeaderCodec.encode(headers);
    }

    /**
     * The explicit Kafka partition.
     *
     * @return the partition ({@code >= 0}), or null when the producer's partitioner decides by key
     */
    public final Integer partition() {
        return partition;
    }

    /**
     * When the message was created, in millisecond precision (S10).
     *
     * @return the creation instant; never null
     */
    public final Instant createdAt() {
        return createdAt;
    }

    /**
     * The size of the message's content as a store must hold it: serialized key plus serialized
     * value plus encoded headers ({@link OutboxHeaderCodec#encodedSize}), which are
     * {@value OutboxHeaderCodec#EMPTY_ENCODED_SIZE} bytes for a message without headers. Stores state
     * their largest payload in these units and refuse larger messages at enqueue (S10): a message
     * without headers fits when its key and value hold at most
     * {@code maxPayloadBytes - }{@value OutboxHeaderCodec#EMPTY_ENCODED_SIZE} bytes together.
     *
     * @return the payload size in bytes
     */
    public final long payloadSize() {
        return (long) Math.max(0, keyLength()) + Math.max(0, valueLength())
                + OutboxHeaderCodec.encodedSize(headers);
    }

    /**
     * Checks that the payload fits a store's limit; store enqueue helpers call this before they
     * write anything.
     *
     * @param maxPayloadBytes the store's largest payload in bytes
     * @return this message
     * @throws OutboxPayloadTooLargeException if {@link #payloadSize()} exceeds {@code maxPayloadBytes}
     */
    public final OutboxMessage requirePayloadAtMost(long maxPayloadBytes) {
        long size = payloadSize();
        if (size > maxPayloadBytes) {
            throw new OutboxPayloadTooLargeException(messageId, topic, Math.max(0, keyLength()),
                    Math.max(0, valueLength()), OutboxHeaderCodec.encodedSize(headers), maxPayloadBytes);
        }
        return this;
    }

    /**
     * Whether another message has the same content: message id, bucket, topic, key, value,
     * headers, partition and creation time. Store-specific fields of subclasses are ignored.
     *
     * @param other the other message; may be null
     * @return true when every field above is equal (arrays by content)
     */
    public final boolean sameContent(OutboxMessage other) {
        return other != null
                && messageId.equals(other.messageId)
                && bucket == other.bucket
                && topic.equals(other.topic)
                && java.util.Arrays.equals(key, other.key)
                && java.util.Arrays.equals(value, other.value)
                && headers.equals(other.headers)
                && Objects.equals(partition, other.partition)
                && createdAt.equals(other.createdAt);
    }

    /** Describes the message without key, value or header values, which may be sensitive. */
    @Override
    public String toString() {
        return getClass().getSimpleName() + "[messageId=" + messageId + ", topic=" + topic + ", bucket=" + bucket
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

    private static List<OutboxHeader> copyHeaders(Iterable<? extends Header> headers) {
        Objects.requireNonNull(headers, "headers must not be null");
        List<OutboxHeader> copy = new ArrayList<>();
        for (Header header : headers) {
            OutboxHeader h = OutboxHeader.copyOf(header);
            OutboxHeaderCodec.requireWellFormedName(h.key()); // refuse names that cannot be stored exactly
            copy.add(h);
        }
        return copy.isEmpty() ? List.of() : Collections.unmodifiableList(copy);
    }
}
