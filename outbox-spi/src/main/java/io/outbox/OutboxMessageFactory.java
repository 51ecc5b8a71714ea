package io.outbox;

import java.time.Clock;
import java.util.List;
import java.util.Objects;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.Serializer;

/**
 * Creates {@link OutboxMessage}s with settings bound once: the bucket count, the key and value
 * serializers and the clock. An enqueue then passes only what changes per message: topic, key,
 * value and, optionally, headers and an explicit partition.
 *
 * <pre>{@code
 * OutboxMessageFactory<String, String> messages = OutboxMessageFactory.builder(16)
 *         .keySerializer(new StringSerializer())
 *         .valueSerializer(new StringSerializer())
 *         .build();
 * store.writer().enqueue(connection, messages.create("orders", order.id(), json));
 * }</pre>
 *
 * <p>Every {@code create} delegates to
 * {@link OutboxMessage#create(String, Object, Object, Serializer, Serializer, Iterable, int, Integer, Clock)}:
 * key and value are serialized exactly once (rule E1), the bucket follows E2 and the arguments are
 * validated as E3 says, with the same errors.
 *
 * <p>Instances are immutable and thread-safe provided the serializers are (Kafka's own
 * serializers are): create one per bucket count and serializer pair and share it between threads.
 * The factory never configures or closes its serializers.
 *
 * @param <K> the key type
 * @param <V> the value type
 */
public final class OutboxMessageFactory<K, V> {

    private final int bucketCount;
    private final Serializer<K> keySerializer;
    private final Serializer<V> valueSerializer;
    private final Clock clock;
    private final OutboxTracing tracing;

    private OutboxMessageFactory(Builder<K, V> builder) {
        this.bucketCount = builder.bucketCount;
        this.keySerializer = builder.keySerializer;
        this.valueSerializer = builder.valueSerializer;
        this.clock = builder.clock;
        this.tracing = builder.tracing;
    }

    /**
     * Starts a factory for a bucket count. Set both serializers, then {@link Builder#build()}.
     *
     * @param bucketCount the number of buckets, {@code >= 1}; must equal the relay's (checked by
     *     {@link Builder#build()})
     * @return a builder with the system UTC clock, global tracing and no serializers
     */
    public static Builder<Object, Object> builder(int bucketCount) {
        return new Builder<>(bucketCount, null, null, Clock.systemUTC(), OutboxTracing.global());
    }

    /**
     * Creates a message with no headers, bucketed by its key (or, for a null key, by its message
     * id).
     *
     * @param topic the Kafka topic; a legal topic name (E3)
     * @param key the key; may be null
     * @param value the value; may be null (a tombstone)
     * @return the new message, with a random message id and {@code createdAt} from the clock
     * @throws NullPointerException if {@code topic} is null
     * @throws IllegalArgumentException if the topic is not a legal Kafka topic name
     */
    public OutboxMessage create(String topic, K key, V value) {
        return create(topic, key, value, List.of(), null);
    }

    /**
     * Creates a message with headers, bucketed by its key.
     *
     * @param topic the Kafka topic; a legal topic name (E3)
     * @param key the key; may be null
     * @param value the value; may be null
     * @param headers the record headers in order; not null, no null elements; copied
     * @return the new message
     * @throws NullPointerException if {@code topic}, {@code headers} or a header is null
     * @throws IllegalArgumentException if the topic is not a legal Kafka topic name, or a header
     *     key is not well-formed Unicode
     */
    public OutboxMessage create(String topic, K key, V value, Iterable<? extends Header> headers) {
        return create(topic, key, value, headers, null);
    }

    /**
     * Creates a message with headers and an optional explicit partition; with a partition the
     * bucket is {@code partition % bucketCount} (E2).
     *
     * @param topic the Kafka topic; a legal topic name (E3)
     * @param key the key; may be null
     * @param value the value; may be null
     * @param headers the record headers in order; not null, no null elements; copied
     * @param partition the Kafka partition, {@code >= 0}, or null to let the key decide
     * @return the new message
     * @throws NullPointerException if {@code topic}, {@code headers} or a header is null
     * @throws IllegalArgumentException if the topic is illegal, the partition is negative, or a
     *     header key is not well-formed Unicode; the message names the bad value
     */
    public OutboxMessage create(String topic, K key, V value, Iterable<? extends Header> headers,
                                Integer partition) {
        return OutboxMessage.create(topic, key, value, keySerializer, valueSerializer, headers, bucketCount,
                partition, clock, tracing);
    }

    /**
     * The bucket count every message is placed with.
     *
     * @return the bucket count, {@code >= 1}
     */
    public int bucketCount() {
        return bucketCount;
    }

    /**
     * The key serializer.
     *
     * @return the serializer; never null
     */
    public Serializer<K> keySerializer() {
        return keySerializer;
    }

    /**
     * The value serializer.
     *
     * @return the serializer; never null
     */
    public Serializer<V> valueSerializer() {
        return valueSerializer;
    }

    /**
     * The tracing setting: where the trace context stored with each message comes from (rule O1).
     *
     * @return the setting; never null
     */
    public OutboxTracing tracing() {
        return tracing;
    }

    /**
     * The clock {@code createdAt} comes from.
     *
     * @return the clock; never null
     */
    public Clock clock() {
        return clock;
    }

    @Override
    public String toString() {
        return "OutboxMessageFactory[bucketCount=" + bucketCount + ", keySerializer="
                + keySerializer.getClass().getName() + ", valueSerializer=" + valueSerializer.getClass().getName()
                + ", clock=" + clock + ", tracing=" + tracing + "]";
    }

    /**
     * Builds an {@link OutboxMessageFactory}. Each setter returns a new builder (the serializer
     * setters change its type parameters), so a builder is immutable and can be shared; validation
     * happens in {@link #build()}.
     *
     * @param <K> the key type, fixed by {@link #keySerializer(Serializer)}
     * @param <V> the value type, fixed by {@link #valueSerializer(Serializer)}
     */
    public static final class Builder<K, V> {

        private final int bucketCount;
        private final Serializer<K> keySerializer;
        private final Serializer<V> valueSerializer;
        private final Clock clock;
        private final OutboxTracing tracing;

        private Builder(int bucketCount, Serializer<K> keySerializer, Serializer<V> valueSerializer, Clock clock,
                        OutboxTracing tracing) {
            this.bucketCount = bucketCount;
            this.keySerializer = keySerializer;
            this.valueSerializer = valueSerializer;
            this.clock = clock;
            this.tracing = tracing;
        }

        /**
         * Sets the key serializer.
         *
         * @param <K2> the key type
         * @param serializer serializes keys; not null (checked by {@link #build()}); called for
         *     null keys too, as Kafka does
         * @return a builder with this serializer
         */
        public <K2> Builder<K2, V> keySerializer(Serializer<K2> serializer) {
            return new Builder<>(bucketCount, serializer, valueSerializer, clock, tracing);
        }

        /**
         * Sets the value serializer.
         *
         * @param <V2> the value type
         * @param serializer serializes values; not null (checked by {@link #build()})
         * @return a builder with this serializer
         */
        public <V2> Builder<K, V2> valueSerializer(Serializer<V2> serializer) {
            return new Builder<>(bucketCount, keySerializer, serializer, clock, tracing);
        }

        /**
         * Sets the clock {@code createdAt} is stamped from.
         *
         * @param clock the clock; not null (checked by {@link #build()}); default
         *     {@link Clock#systemUTC()}
         * @return a builder with this clock
         */
        public Builder<K, V> clock(Clock clock) {
            return new Builder<>(bucketCount, keySerializer, valueSerializer, clock, tracing);
        }

        /**
         * Sets where each message's trace context comes from (rule O1): inside a valid span the
         * context is stored as headers ({@code traceparent}, {@code tracestate}) written by the
         * setting's propagator. {@link OutboxTracing#disabled()} turns this off.
         *
         * @param tracing the setting; not null (checked by {@link #build()}); default
         *     {@link OutboxTracing#global()}
         * @return a builder with this setting
         */
        public Builder<K, V> tracing(OutboxTracing tracing) {
            return new Builder<>(bucketCount, keySerializer, valueSerializer, clock, tracing);
        }

        /**
         * Validates and builds the factory.
         *
         * @return the factory; immutable and thread-safe
         * @throws IllegalArgumentException if the bucket count is below 1, naming the value (E3)
         * @throws NullPointerException if a serializer, the clock or the tracing setting is not set, naming which
         */
        public OutboxMessageFactory<K, V> build() {
            OutboxBucket.requireBucketCount(bucketCount);
            Objects.requireNonNull(keySerializer, "keySerializer must be set (OutboxMessageFactory.Builder"
                    + ".keySerializer)");
            Objects.requireNonNull(valueSerializer, "valueSerializer must be set (OutboxMessageFactory.Builder"
                    + ".valueSerializer)");
            Objects.requireNonNull(clock, "clock must not be null");
            Objects.requireNonNull(tracing, "tracing must not be null");
            return new OutboxMessageFactory<>(this);
        }
    }
}
