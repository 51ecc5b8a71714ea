package io.outbox.relay.kafka;

import io.outbox.spi.OutboxMisconfigurationException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Settings of the transactional mode of {@link KafkaOutboxPublisher} (rules K5-K7): the
 * {@code transactional.id} prefix and the bound on the buckets a relay may own in that mode.
 * Immutable; build with {@link #builder(String)} or read from producer settings with
 * {@link #fromProducerConfig(Map)}.
 *
 * <p>Each bucket {@code b} is published by its own producer with {@code transactional.id}
 * {@code <prefix>-<b>}, so every relay of one outbox must use the same prefix, and two outboxes
 * sharing a Kafka cluster must use different ones. Each producer costs a network thread, its own
 * connections to the brokers (the partition leaders and the bucket's transaction coordinator)
 * and its buffers; {@link #maxBuckets()} bounds the producers of one relay (see
 * {@link #DEFAULT_MAX_BUCKETS} for the measured cost).
 */
public final class KafkaTransactions {

    /** Producer-settings key that turns the mode on: {@code transactions=true}. */
    public static final String TRANSACTIONS_CONFIG = "transactions";

    /** Producer-settings key of {@link #transactionalIdPrefix()}. */
    public static final String TRANSACTIONAL_ID_PREFIX_CONFIG = "transactional.id.prefix";

    /** Producer-settings key of {@link #maxBuckets()}. */
    public static final String MAX_BUCKETS_CONFIG = "transactions.max.buckets";

    /**
     * Default {@link #maxBuckets()}: 64. Measured here (2 cores, kafka-clients 4.4.0 with the
     * publisher's settings, in-process single-node broker; TransactionalProducerCostBenchmark):
     * each transactional producer runs one network thread and holds two broker connections on one
     * node (the bootstrap connection and the leader/coordinator; on a cluster one per broker it
     * writes to, plus its coordinator); it retains about 0.2 MiB of heap idle and about 0.7 MiB
     * after a transaction of 500 records of 1 KiB (its pooled batch buffers; {@code buffer.memory},
     * 32 MiB by default, caps it); creating and initializing one takes about 120-150 ms with the
     * default {@code retry.backoff.ms} of 100 ms (about 30 ms with 10 ms), and the publisher
     * initializes up to 8 at once. So 64 owned buckets cost about 64 threads, 128 connections
     * on a single-node cluster (more on a larger one) and 15-45 MiB of heap.
     */
    public static final int DEFAULT_MAX_BUCKETS = 64;

    /** Largest {@link #maxBuckets()}: 1024. */
    public static final int MAX_MAX_BUCKETS = 1024;

    /** Longest {@link #transactionalIdPrefix()}: 200 characters. */
    public static final int MAX_PREFIX_LENGTH = 200;

    private final String transactionalIdPrefix;
    private final int maxBuckets;

    private KafkaTransactions(Builder b) {
        this.transactionalIdPrefix = b.transactionalIdPrefix;
        this.maxBuckets = b.maxBuckets;
    }

    /**
     * A builder with the given prefix and {@link #DEFAULT_MAX_BUCKETS}.
     *
     * @param transactionalIdPrefix the prefix of every bucket's {@code transactional.id}; see
     *     {@link Builder#transactionalIdPrefix}
     * @return a new builder
     */
    public static Builder builder(String transactionalIdPrefix) {
        return new Builder().transactionalIdPrefix(transactionalIdPrefix);
    }

    /**
     * Reads the mode from producer settings: {@value #TRANSACTIONS_CONFIG} ({@code true} or
     * {@code false}), {@value #TRANSACTIONAL_ID_PREFIX_CONFIG} and {@value #MAX_BUCKETS_CONFIG}
     * (the standalone relay's {@code kafka.transactions}, {@code kafka.transactional.id.prefix},
     * {@code kafka.transactions.max.buckets}).
     *
     * @param producerConfig producer settings; not null; not modified
     * @return the settings when {@value #TRANSACTIONS_CONFIG} is {@code true}; empty when it is
     *     absent or {@code false}
     * @throws OutboxMisconfigurationException when a value is invalid, a prefix or bound is set
     *     without {@code transactions=true}, the prefix is missing, or {@code transactional.id} is
     *     set (each bucket gets its own), naming the key and the value
     */
    public static Optional<KafkaTransactions> fromProducerConfig(Map<String, ?> producerConfig) {
        Objects.requireNonNull(producerConfig, "producerConfig must not be null");
        Object on = producerConfig.get(TRANSACTIONS_CONFIG);
        Object prefix = producerConfig.get(TRANSACTIONAL_ID_PREFIX_CONFIG);
        Object max = producerConfig.get(MAX_BUCKETS_CONFIG);
        String flag = on == null ? "false" : String.valueOf(on).trim();
        if (!flag.equalsIgnoreCase("true") && !flag.equalsIgnoreCase("false")) {
            throw new OutboxMisconfigurationException("invalid Kafka publisher setting " + TRANSACTIONS_CONFIG + "='"
                    + on + "': expected true or false");
        }
        if (flag.equalsIgnoreCase("false")) {
            if (prefix != null || max != null) {
                throw new OutboxMisconfigurationException("Kafka publisher setting "
                        + (prefix != null ? TRANSACTIONAL_ID_PREFIX_CONFIG + "='" + prefix + "'"
                        : MAX_BUCKETS_CONFIG + "='" + max + "'")
                        + " has no effect without " + TRANSACTIONS_CONFIG + "=true (" + TRANSACTIONS_CONFIG + "="
                        + (on == null ? "not set" : "'" + on + "'") + ")");
            }
            return Optional.empty();
        }
        refuseTransactionalId(producerConfig);
        if (prefix == null) {
            throw new OutboxMisconfigurationException("Kafka publisher setting " + TRANSACTIONAL_ID_PREFIX_CONFIG
                    + " is required with " + TRANSACTIONS_CONFIG + "=true: every relay of one outbox must use the "
                    + "same prefix, and every outbox its own");
        }
        Builder b = builder(String.valueOf(prefix));
        if (max != null) {
            try {
                b.maxBuckets(Integer.parseInt(String.valueOf(max).trim()));
            } catch (NumberFormatException e) {
                throw new OutboxMisconfigurationException("invalid Kafka publisher setting " + MAX_BUCKETS_CONFIG
                        + "='" + max + "': expected an integer in [1, " + MAX_MAX_BUCKETS + "]", e);
            }
        }
        return Optional.of(b.build());
    }

    /** The mode gives each bucket its own id: a user's {@code transactional.id} is refused. */
    static void refuseTransactionalId(Map<String, ?> producerConfig) {
        Object transactionalId = producerConfig.get("transactional.id");
        if (transactionalId != null) {
            throw new OutboxMisconfigurationException("Kafka producer setting transactional.id='" + transactionalId
                    + "' cannot be used with " + TRANSACTIONS_CONFIG + "=true: each bucket gets its own id, "
                    + "<prefix>-<bucket>; set " + TRANSACTIONAL_ID_PREFIX_CONFIG + " instead");
        }
    }

    /**
     * The producer settings without this mode's own keys, for the Kafka producer.
     *
     * @param producerConfig producer settings; not null; not modified
     * @return a copy without {@value #TRANSACTIONS_CONFIG}, {@value #TRANSACTIONAL_ID_PREFIX_CONFIG}
     *     and {@value #MAX_BUCKETS_CONFIG}
     */
    static Map<String, Object> withoutOwnKeys(Map<String, ?> producerConfig) {
        Map<String, Object> copy = new LinkedHashMap<>(producerConfig);
        copy.remove(TRANSACTIONS_CONFIG);
        copy.remove(TRANSACTIONAL_ID_PREFIX_CONFIG);
        copy.remove(MAX_BUCKETS_CONFIG);
        return copy;
    }

    /**
     * The prefix of every bucket's {@code transactional.id}.
     *
     * @return the prefix, not blank
     */
    public String transactionalIdPrefix() {
        return transactionalIdPrefix;
    }

    /**
     * The largest bucket count a relay on this publisher may have: a relay may come to own every
     * bucket, and each owned bucket has its own producer.
     *
     * @return the bound, in [1, {@value #MAX_MAX_BUCKETS}]
     */
    public int maxBuckets() {
        return maxBuckets;
    }

    /**
     * The {@code transactional.id} of a bucket: {@code <prefix>-<bucket>}.
     *
     * @param bucket the bucket, {@code >= 0}
     * @return the id
     */
    public String transactionalId(int bucket) {
        if (bucket < 0) {
            throw new IllegalArgumentException("bucket must be >= 0 but was " + bucket);
        }
        return transactionalIdPrefix + "-" + bucket;
    }

    @Override
    public String toString() {
        return "KafkaTransactions[transactionalIdPrefix=" + transactionalIdPrefix + ", maxBuckets=" + maxBuckets + "]";
    }

    /** A builder of {@link KafkaTransactions}; not thread-safe. */
    public static final class Builder {
        private String transactionalIdPrefix;
        private int maxBuckets = DEFAULT_MAX_BUCKETS;

        private Builder() {
        }

        /**
         * @param prefix the prefix of every bucket's {@code transactional.id}: 1 to
         *     {@value #MAX_PREFIX_LENGTH} characters, no whitespace or control characters
         * @return this builder
         * @throws OutboxMisconfigurationException if the prefix is null, blank, too long or holds
         *     whitespace or a control character, naming it
         */
        public Builder transactionalIdPrefix(String prefix) {
            if (prefix == null || prefix.isBlank() || prefix.length() > MAX_PREFIX_LENGTH
                    || prefix.chars().anyMatch(c -> Character.isWhitespace(c) || Character.isISOControl(c))) {
                throw new OutboxMisconfigurationException("invalid Kafka publisher setting " + TRANSACTIONAL_ID_PREFIX_CONFIG
                        + "=" + (prefix == null ? "null" : "'" + prefix + "'") + ": expected 1 to " + MAX_PREFIX_LENGTH
                        + " characters without whitespace or control characters");
            }
            this.transactionalIdPrefix = prefix;
            return this;
        }

        /**
         * @param maxBuckets the largest bucket count of a relay on this publisher, in
         *     [1, {@value #MAX_MAX_BUCKETS}]; default {@value #DEFAULT_MAX_BUCKETS}
         * @return this builder
         * @throws OutboxMisconfigurationException if out of range, naming the value
         */
        public Builder maxBuckets(int maxBuckets) {
            if (maxBuckets < 1 || maxBuckets > MAX_MAX_BUCKETS) {
                throw new OutboxMisconfigurationException("invalid Kafka publisher setting " + MAX_BUCKETS_CONFIG + "="
                        + maxBuckets + ": expected 1 to " + MAX_MAX_BUCKETS + " (one producer per bucket)");
            }
            this.maxBuckets = maxBuckets;
            return this;
        }

        /**
         * @return the settings
         */
        public KafkaTransactions build() {
            return new KafkaTransactions(this);
        }
    }
}
