package io.outbox.relay.kafka;

import io.outbox.OutboxMessage;
import io.outbox.OutboxTracing;
import io.outbox.relay.BucketFencedException;
import io.outbox.relay.FailureKind;
import io.outbox.relay.OutboxPublisher;
import io.outbox.relay.RelayOptions;
import io.outbox.spi.OutboxMisconfigurationException;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.function.Function;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An {@link OutboxPublisher} on Kafka (rules K1-K8), in one of two modes: idempotent, the default
 * (one producer for every bucket: K1-K4, K8), or transactional (one producer per owned bucket, one
 * transaction per batch: K1-K7). Both build each record with {@link OutboxRecords} and check each
 * message's topic and partition before sending it; build either with {@link #builder(Map)}.
 *
 * <ul>
 *   <li>K1 After the caller's producer settings, it enforces {@code acks=all},
 *       {@code enable.idempotence=true}, {@link org.apache.kafka.common.serialization.ByteArraySerializer}
 *       for keys and values, {@code max.in.flight.requests.per.connection <= 5},
 *       {@code partitioner.ignore.keys=false}, and removes {@code partitioner.class} and
 *       {@code transactional.id}, so records are placed by Kafka's built-in key hashing, the
 *       same hash buckets are computed with. Each user setting it replaces or removes is logged
 *       at WARN, naming the setting and both values. Where the caller did not set
 *       {@code max.block.ms} it uses 10 s instead of Kafka's 60 s.</li>
 *   <li>K2 Every record carries the message's own headers, in order, then one header (default
 *       {@value #DEFAULT_MESSAGE_ID_HEADER}, see {@link Builder#messageIdHeader(String)}) holding the
 *       message id as a UUID string in UTF-8 ({@link OutboxRecords}). A header of the message with
 *       that same name is left out (and counted in a WARN line), so a record never carries two ids
 *       and a consumer cannot pick the wrong one.</li>
 *   <li>K3 {@link #publish} starts every send of the batch before waiting on any (but for K8's
 *       opening records); the result is the number of leading acknowledged records plus the first
 *       error.</li>
 *   <li>K4 An explicit partition is used as is; otherwise Kafka places the record by its key.
 *       The record timestamp is left to the producer (the send time), not taken from
 *       {@link OutboxMessage#createdAt()}.</li>
 *   <li>K8 The first record its producer sends to a partition goes alone: {@link #publish} sends
 *       the partition's next record only after that one's acknowledgement, once per partition for
 *       the producer's life (openings of different partitions overlap). A batch waits for
 *       openings {@code max.block.ms} in all (10 s unless set); a wait that runs out, or an
 *       opening that fails for a broker reason, leaves the batch's remaining records unsent, failed
 *       with a retriable error. A broker names
 *       itself leader of a new partition a moment before it acts as one, so a burst into a topic
 *       created just before could otherwise have its first request refused while the requests
 *       behind it land: their records would be acknowledged ahead of the refused ones, which
 *       then fail as out of order until {@code delivery.timeout.ms} and, sent again, land after
 *       them. An opening refused for its own record (too large, say) leaves the partition to the
 *       next record. The partition is the
 *       message's own or Kafka's keyed placement over the topic's partition count; a keyless
 *       message with no partition (placed by the producer's sticky partitioner) is sent at
 *       once: a burst of those into a topic created a moment before can still stall for
 *       {@code delivery.timeout.ms} and be sent again (no order is promised for them). Not in
 *       the transactional mode, whose batch commits or aborts whole (K6).</li>
 * </ul>
 *
 * <p>Bounds: {@link #publish} blocks at most {@code max.block.ms} per distinct topic of the batch
 * while it waits for the topic's metadata, at the topic's first message in batch order, after
 * the records before it were sent: a metadata failure fails that topic's messages and never the
 * records before them (K3). For a broker that is down the first message fails, nothing is
 * acknowledged (rule R7), and batches for that topic fail at once for the next
 * {@code max.block.ms}. After a wait that timed out, a validate-only topic creation asks the
 * cluster why: a topic it refuses (a name colliding with an existing one)
 * fails with an {@link org.apache.kafka.common.errors.InvalidTopicException}, a message-specific
 * failure (R12). A topic whose partition count changed since the last batch is logged once at
 * ERROR, naming the topic and both counts. A message naming a partition the producer's metadata
 * does not have (that metadata is cached for up to {@code metadata.max.age.ms}) is checked
 * against the cluster's answer now, with an Admin client of the producer's connection settings:
 * when the topic has the partition by then, the record is sent (the producer refreshes its
 * metadata for it); when it still lacks it, the message fails at once with a
 * {@link PartitionNotInTopicException} instead of blocking {@code max.block.ms}: a
 * message-specific failure (R12), counted against the message; it goes through if the topic gains
 * that partition before the relay gives up on it. When the cluster does not answer, the failure
 * is a retriable {@link org.apache.kafka.common.errors.TimeoutException}, never counted. (A
 * publisher on a producer of yours has no Admin client: it refuses by the producer's metadata.) The
 * returned future completes within {@code delivery.timeout.ms} (Kafka's default: 2 minutes) after
 * that; a batch that opens partitions (K8) blocks besides until their opening records'
 * acknowledgements, a round trip to the broker each, at most {@code max.block.ms} in all. A store
 * without lease renewal needs {@link RelayOptions#maxPublishDuration()} above the sum.
 *
 * <p>Records after a failed record of the same batch are still sent: with rows 1, 2, 3 of one key
 * where row 1 exceeds {@code max.request.size}, rows 2 and 3 reach the topic, the result
 * acknowledges nothing, and all three rows stay in the store. The relay classifies the error
 * ({@link FailureKind}, R12) and then sends row 1 alone until it succeeds or is dead-lettered, so
 * rows 2 and 3 are sent at most once more.
 * In the transactional mode the transaction of rows 2 and 3 is aborted: read_committed consumers
 * never see them before row 1. With rows 1, 2, 3 where row 2 is the bad one, the aborted
 * transaction is followed by one of row 1 alone, so the result acknowledges 1 and fails row 2, in
 * both modes.
 *
 * <p>Transactional mode (rules K5-K7, opt-in): with {@code transactions=true} and
 * {@code transactional.id.prefix} among the settings (standalone relay:
 * {@code kafka.transactions}, {@code kafka.transactional.id.prefix}), or built with
 * {@link Builder#transactions(KafkaTransactions)}, the publisher keeps one producer per bucket its relay owns, with
 * {@code transactional.id} {@code <prefix>-<bucket>}. It creates it when the relay reports the
 * bucket acquired ({@link #bucketsAcquired}); its {@code initTransactions()} fences every older
 * producer of the bucket, so a relay that lost the lease but still publishes gets
 * {@link BucketFencedException} instead of landing its batch. It closes it when the bucket is
 * released. Each batch is one transaction: a failed send aborts it; a commit acknowledges the
 * whole batch. A message that fails for a reason of its own at position k (a topic or partition
 * problem, found before the transaction begins, or a record the producer refuses) leaves the k
 * messages before it committed in a transaction without it: the result acknowledges k.
 * {@link #publish} then blocks its caller (a relay store thread) until the commit or abort. A
 * consumer with {@code isolation.level=read_committed} then sees each key's first deliveries in
 * enqueue order across partial failures and takeovers, with repeats only as whole batches. One
 * relay per transactional publisher; at most {@link KafkaTransactions#maxBuckets()} buckets.
 *
 * <p>Build one with {@link #builder(Map)} (its own producer, from settings) or
 * {@link #builder(Producer)} (a producer of yours):
 * <pre>{@code
 * KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(Map.of("bootstrap.servers", "kafka:9092"))
 *         .messageIdHeader("x-outbox-message-id")   // the default
 *         .build();
 * }</pre>
 *
 * <p>Ownership: a publisher built from settings creates its own {@link KafkaProducer} (at
 * construction, or at the first publish when the bootstrap servers cannot be resolved yet) and
 * closes it in {@link #close()}. A publisher given a {@link Producer} uses it as is, enforces
 * nothing, sends every record at once (no K8 opening: the producer may have written to the
 * partition before), and never closes it; the caller is then responsible for K1 and K8.
 * Thread-safe; {@link #publish} is called from the relay's store threads.
 */
public sealed interface KafkaOutboxPublisher extends OutboxPublisher
        permits IdempotentPublisher, TransactionalPublisher {

    /** How long {@link #close()} waits for the producers to send what they buffered: 30 s. */
    Duration DEFAULT_CLOSE_TIMEOUT = Duration.ofSeconds(30);
    /** Key of {@link Builder#messageIdHeader(String)} among the publisher's options ({@link #configDef()}). */
    String MESSAGE_ID_HEADER_CONFIG = "message.id.header";
    /** Default message-id header (K2): {@value}. */
    String DEFAULT_MESSAGE_ID_HEADER = "x-outbox-message-id";
    /** Key of {@link Builder#tracingTimeInOutboxSpan(boolean)} among the publisher's options ({@link #configDef()}). */
    String TIME_IN_OUTBOX_SPAN_CONFIG = "tracing.time.in.outbox.span";
    /** Default of {@value #TIME_IN_OUTBOX_SPAN_CONFIG}: off. */
    boolean DEFAULT_TIME_IN_OUTBOX_SPAN = false;

    /**
     * A builder for a publisher with its own producer, made from these settings (K1 enforced on
     * them) and closed by {@link #close()}; {@code transactions=true} among them selects the
     * transactional mode ({@link KafkaTransactions#fromProducerConfig(Map)}).
     *
     * @param producerConfig Kafka producer settings, at least {@code bootstrap.servers}; not null;
     *     null values are ignored; copied
     * @return a new builder
     * @throws NullPointerException if {@code producerConfig} is null
     */
    static Builder builder(Map<String, ?> producerConfig) {
        Objects.requireNonNull(producerConfig, "producerConfig must not be null");
        return new Builder(new HashMap<>(producerConfig), null);
    }

    /**
     * A builder for a publisher with its own producer, made from these settings.
     *
     * @param producerConfig Kafka producer settings, at least {@code bootstrap.servers}; not null; copied
     * @return a new builder
     * @throws NullPointerException if {@code producerConfig} is null
     */
    static Builder builder(Properties producerConfig) {
        Objects.requireNonNull(producerConfig, "producerConfig must not be null");
        Map<String, Object> map = new HashMap<>();
        producerConfig.stringPropertyNames().forEach(k -> map.put(k, producerConfig.getProperty(k)));
        return new Builder(map, null);
    }

    /**
     * A builder for an idempotent publisher on an existing producer, which it neither configures
     * nor closes. The caller is responsible for the guarantees of K1 ({@code acks=all},
     * idempotence, at most 5 requests in flight, key-respecting placement); without them the relay
     * may delete messages the broker did not durably store, or publish a key out of order.
     *
     * @param producer the producer, with byte-array serializers; not null
     * @return a new builder
     * @throws NullPointerException if {@code producer} is null
     */
    static Builder builder(Producer<byte[], byte[]> producer) {
        return new Builder(null, Objects.requireNonNull(producer, "producer must not be null"));
    }

    /**
     * The publisher's own options ({@value #MESSAGE_ID_HEADER_CONFIG},
     * {@value #TIME_IN_OUTBOX_SPAN_CONFIG}), with type, default,
     * valid values and documentation, for a {@code --help} text. Producer settings are Kafka's
     * ({@link ProducerConfig#configDef()}).
     *
     * @return a new definition
     */
    static ConfigDef configDef() {
        return new ConfigDef().define(MESSAGE_ID_HEADER_CONFIG, ConfigDef.Type.STRING, DEFAULT_MESSAGE_ID_HEADER,
                ConfigDef.LambdaValidator.with((name, value) -> {
                    if (value == null || ((String) value).isBlank()) {
                        throw new ConfigException(name, value, "must not be blank");
                    }
                }, () -> "not blank"), ConfigDef.Importance.LOW,
                "The record header that carries each message's id (a UUID string in UTF-8).")
                .define(TIME_IN_OUTBOX_SPAN_CONFIG, ConfigDef.Type.BOOLEAN, DEFAULT_TIME_IN_OUTBOX_SPAN,
                        ConfigDef.LambdaValidator.with((name, value) -> { }, () -> "true or false"),
                        ConfigDef.Importance.LOW,
                        "Whether each acknowledged message also gets a span for its time in the outbox (rule O2): "
                                + "'outbox <topic>', a child of the context the message was enqueued in, started at "
                                + "the message's creation time and ended at the broker's acknowledgement, linked to "
                                + "its batch's 'send' span. Needs an OpenTelemetry SDK, like every span of the "
                                + "relay; one more span per message.");
    }

    /**
     * The settings a publisher built from {@code producerConfig} gives its producer: the caller's
     * settings with K1 enforced and the default {@code max.block.ms} applied (in the
     * transactional mode, {@code transactional.id} reads {@code <prefix>-<bucket>}).
     *
     * @param producerConfig Kafka producer settings; not null
     * @return the effective settings; immutable
     */
    static Map<String, Object> effectiveConfig(Map<String, ?> producerConfig) {
        Optional<KafkaTransactions> transactions = KafkaTransactions.fromProducerConfig(producerConfig);
        Map<String, Object> config =
                ProducerSettings.enforce(KafkaTransactions.withoutOwnKeys(producerConfig)).config();
        if (transactions.isEmpty()) {
            return config;
        }
        Map<String, Object> withId = new LinkedHashMap<>(config);
        withId.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactions.get().transactionalIdPrefix() + "-<bucket>");
        return Map.copyOf(withId);
    }

    /**
     * Whether this publisher runs in the transactional mode (rules K5-K7).
     *
     * @return true when each owned bucket has its own transactional producer
     */
    boolean isTransactional();

    /**
     * The header this publisher stamps with the message id (K2).
     *
     * @return the header name
     */
    String messageIdHeader();

    /**
     * Whether each acknowledged message gets a time-in-outbox span ({@value #TIME_IN_OUTBOX_SPAN_CONFIG}).
     *
     * @return true when on
     */
    boolean tracingTimeInOutboxSpan();

    /**
     * Closes the producers this publisher created, waiting up to {@code timeout} for what they
     * buffered; a producer of the caller's is left open. Idempotent; later publishes fail.
     *
     * @param timeout how long to wait for buffered records to be sent; not null, not negative
     */
    void close(Duration timeout);

    /** Closes the producers this publisher created, waiting up to {@link #DEFAULT_CLOSE_TIMEOUT}. */
    @Override
    default void close() {
        close(DEFAULT_CLOSE_TIMEOUT);
    }

    /**
     * Collects the publisher's options; {@link #build()} validates them and chooses the mode. Not
     * thread-safe.
     */
    final class Builder {

        private static final Logger LOG = LoggerFactory.getLogger(KafkaOutboxPublisher.class);

        private final Map<String, ?> producerConfig;
        private final Producer<byte[], byte[]> producer;
        private String messageIdHeader = DEFAULT_MESSAGE_ID_HEADER;
        private KafkaTransactions transactions;
        private OutboxTracing tracing = OutboxTracing.global();
        private boolean tracingTimeInOutboxSpan = DEFAULT_TIME_IN_OUTBOX_SPAN;
        private Function<String, Integer> partitionRefresh;
        private Function<Map<String, Object>, Producer<byte[], byte[]>> producers = KafkaProducer::new;

        private Builder(Map<String, ?> producerConfig, Producer<byte[], byte[]> producer) {
            this.producerConfig = producerConfig;
            this.producer = producer;
        }

        /**
         * Sets {@value #MESSAGE_ID_HEADER_CONFIG}: the header stamped on every record with the
         * message id (K2). Consumers read it to drop repeats.
         *
         * @param messageIdHeader not blank; default {@value #DEFAULT_MESSAGE_ID_HEADER}
         * @return this builder
         */
        public Builder messageIdHeader(String messageIdHeader) {
            this.messageIdHeader = messageIdHeader;
            return this;
        }

        /**
         * Turns on the transactional mode (rules K5-K7) whatever the
         * {@value KafkaTransactions#TRANSACTIONS_CONFIG} setting says: one producer per owned
         * bucket with {@code transactional.id} {@code <prefix>-<bucket>}, one transaction per
         * batch. Without this call the mode follows the producer settings
         * ({@link KafkaTransactions#fromProducerConfig(Map)}).
         *
         * @param transactions the transactional.id prefix and bucket bound; null to follow the settings
         * @return this builder
         */
        public Builder transactions(KafkaTransactions transactions) {
            this.transactions = transactions;
            return this;
        }

        /**
         * Sets where the publish spans come from (rule O2): one PRODUCER span per batch, linked to
         * each message's creation context; see {@link OutboxRecords#traced}.
         *
         * @param tracing the setting; {@link OutboxTracing#disabled()} starts no span; default
         *     {@link OutboxTracing#global()}
         * @return this builder
         * @throws NullPointerException if {@code tracing} is null
         */
        public Builder tracing(OutboxTracing tracing) {
            this.tracing = Objects.requireNonNull(tracing, "tracing must not be null");
            return this;
        }

        /**
         * Sets {@value #TIME_IN_OUTBOX_SPAN_CONFIG}: a span per acknowledged message for its time
         * in the outbox, back-dated to its creation (rule O2); see
         * {@link OutboxRecords#withTimeInOutboxSpans(boolean)}.
         *
         * @param on true to record them; default {@value #DEFAULT_TIME_IN_OUTBOX_SPAN}
         * @return this builder
         */
        public Builder tracingTimeInOutboxSpan(boolean on) {
            this.tracingTimeInOutboxSpan = on;
            return this;
        }

        /** For tests: how a topic's partition count is refreshed (default: an Admin client's answer). */
        Builder partitionRefresh(Function<String, Integer> refresh) {
            this.partitionRefresh = refresh;
            return this;
        }

        /** For tests: how the publisher makes its producers from their settings (default: {@link KafkaProducer}). */
        Builder producers(Function<Map<String, Object>, Producer<byte[], byte[]>> factory) {
            this.producers = Objects.requireNonNull(factory, "factory must not be null");
            return this;
        }

        /**
         * Validates the options and builds the publisher of the mode they select; one built from
         * settings creates its producer now (idempotent mode), or at the first publish when the
         * bootstrap servers cannot be resolved yet, or one per bucket as its relay acquires them
         * (transactional mode).
         *
         * @return the publisher
         * @throws OutboxMisconfigurationException naming the option or producer setting and the bad value
         */
        public KafkaOutboxPublisher build() {
            OutboxRecords records = OutboxRecords.withMessageIdHeader(messageIdHeader).withTracing(tracing)
                    .withTimeInOutboxSpans(tracingTimeInOutboxSpan);
            if (producer != null) {
                if (transactions != null) {
                    throw new OutboxMisconfigurationException("the transactional mode (K5) needs producer settings, "
                            + "not a producer: it creates one producer per owned bucket");
                }
                return IdempotentPublisher.onProducer(producer, records, partitionRefresh);
            }
            KafkaTransactions mode = transactions != null ? transactions
                    : KafkaTransactions.fromProducerConfig(producerConfig).orElse(null);
            Map<String, Object> config = KafkaTransactions.withoutOwnKeys(producerConfig);
            if (mode != null) {
                KafkaTransactions.refuseTransactionalId(config);
            }
            ProducerSettings settings = ProducerSettings.enforce(config);
            settings.overrides().forEach(o -> LOG.warn("Kafka producer setting overridden: {} (rule K1)", o));
            TopicChecks checks = TopicChecks.withAdmin(settings.config(), partitionRefresh);
            return mode == null ? IdempotentPublisher.ownProducer(settings.config(), records, checks, producers)
                    : new TransactionalPublisher(settings.config(), mode, records, checks, producers);
        }
    }
}
