package io.outbox.relay;

import io.outbox.OutboxHeader;
import io.outbox.OutboxMessage;
import io.outbox.spi.OutboxMisconfigurationException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes outbox messages with a Kafka producer (rules K1-K4).
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
 *       {@value #DEFAULT_MESSAGE_ID_HEADER}, see {@link Builder#messageIdHeader(String)}) holding the message id as a UUID string
 *       in UTF-8. A header of the message with that same name is left out (and counted in a WARN
 *       line), so a record never carries two ids and a consumer cannot pick the wrong one.</li>
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
 * publisher on a producer of yours has no Admin client: it refuses by the producer's metadata.) The returned future completes within
 * {@code delivery.timeout.ms} (Kafka's default: 2 minutes) after that; a batch that opens
 * partitions (K8) blocks besides until their opening records' acknowledgements, a round trip to
 * the broker each, at most {@code max.block.ms} in all. A store
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
 * {@link #transactional}, the publisher keeps one producer per bucket its relay owns, with
 * {@code transactional.id} {@code <prefix>-<bucket>}. It creates it when the relay reports the
 * bucket acquired ({@link #bucketsAcquired}); its {@code initTransactions()} fences every older
 * producer of the bucket, so a relay that lost the lease but still publishes gets
 * {@link BucketFencedException} instead of landing its batch. It closes it when the bucket is
 * released. Each batch is one transaction: a failed send aborts it; a commit acknowledges the
 * whole batch. A message that fails for a reason of its own at position k (a topic or partition
 * problem, found before the transaction begins, or a record the producer refuses) leaves the k
 * messages before it committed in a transaction without it: the result acknowledges k.
 * {@link #publish} then blocks its caller (a relay store thread) until the commit or abort. A consumer with {@code isolation.level=read_committed}
 * then sees each key's first deliveries in enqueue order across partial failures and takeovers,
 * with repeats only as whole batches. One relay per transactional publisher; at most
 * {@link KafkaTransactions#maxBuckets()} buckets.
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
 * Thread-safe.
 */
public final class KafkaOutboxPublisher implements OutboxPublisher {

    /** How long {@link #close()} waits for the producer to send what it buffered: 30 s. */
    public static final Duration DEFAULT_CLOSE_TIMEOUT = Duration.ofSeconds(30);
    /** Key of {@link Builder#messageIdHeader(String)} among the publisher's options ({@link #configDef()}). */
    public static final String MESSAGE_ID_HEADER_CONFIG = "message.id.header";
    /** Default message-id header (K2): {@value}. */
    public static final String DEFAULT_MESSAGE_ID_HEADER = "x-outbox-message-id";

    private static final Logger LOG = LoggerFactory.getLogger(KafkaOutboxPublisher.class);
    private static final ConfigDef CONFIG_DEF = new ConfigDef()
            .define(MESSAGE_ID_HEADER_CONFIG, ConfigDef.Type.STRING, DEFAULT_MESSAGE_ID_HEADER,
                    ConfigDef.LambdaValidator.with((name, value) -> {
                        if (value == null || ((String) value).isBlank()) {
                            throw new ConfigException(name, value, "must not be blank");
                        }
                    }, () -> "not blank"), ConfigDef.Importance.LOW,
                    "The record header that carries each message's id (a UUID string in UTF-8).");

    private final Map<String, Object> producerConfig;
    private final String messageIdHeader;
    private final boolean ownsProducer;
    private final long maxBlockNanos;
    private final Map<String, MetadataFailure> metadataFailures = new ConcurrentHashMap<>();
    private final Object producerLock = new Object();
    /** The transactional mode (K5-K7); null in the default mode. */
    private final TransactionalPublishing transactional;
    private final TopicWatch topicWatch = new TopicWatch();
    /** K8, for the producer this publisher created; null on a producer of the caller's. */
    private final PartitionOpenings openings;
    /** R12: a topic's partition count as the cluster answers now; null when there is no way to ask. */
    private final Function<String, Integer> partitionRefresh;
    private volatile TopicDiagnosis diagnosis;
    private Producer<byte[], byte[]> producer;
    private boolean closed;

    /** Package-private for tests, which wrap the producers (to pause a send, for one). */
    KafkaOutboxPublisher(Map<String, ?> producerConfig, String messageIdHeader, KafkaTransactions transactions,
                         TransactionalPublishing.ProducerFactory factory) {
        this(builder(producerConfig).messageIdHeader(messageIdHeader), transactions, factory);
    }

    private KafkaOutboxPublisher(Builder b, KafkaTransactions transactions,
                                 TransactionalPublishing.ProducerFactory factory) {
        this.messageIdHeader = requireHeader(b.messageIdHeader);
        if (b.producer != null) {
            if (transactions != null) {
                throw new OutboxMisconfigurationException("the transactional mode (K5) needs producer settings, not a"
                        + " producer: it creates one producer per owned bucket");
            }
            this.producer = b.producer;
            this.partitionRefresh = b.partitionRefresh;
            this.producerConfig = null;
            this.ownsProducer = false;
            this.maxBlockNanos = TimeUnit.MILLISECONDS.toNanos(ProducerSettings.DEFAULT_MAX_BLOCK_MS);
            this.transactional = null;
            this.openings = null;
            return;
        }
        Map<String, Object> config = KafkaTransactions.withoutOwnKeys(b.producerConfig);
        if (transactions != null) {
            KafkaTransactions.refuseTransactionalId(config);
        }
        ProducerSettings settings = ProducerSettings.enforce(config);
        settings.overrides().forEach(o -> LOG.warn("Kafka producer setting overridden: {} (rule K1)", o));
        this.producerConfig = settings.config();
        this.ownsProducer = true;
        this.maxBlockNanos = TimeUnit.MILLISECONDS.toNanos(maxBlockMillis(this.producerConfig));
        this.diagnosis = new TopicDiagnosis(this.producerConfig);
        this.partitionRefresh = b.partitionRefresh != null ? b.partitionRefresh : this.diagnosis::partitionCount;
        if (transactions != null) { // K5-K7: the transactional mode has a producer per owned bucket instead
            this.openings = null;
            validate(this.producerConfig);
            this.transactional = new TransactionalPublishing(this.producerConfig, transactions, factory, this::record,
                    this::refusal);
            LOG.info("Kafka outbox publisher in transactional mode transactionalIdPrefix={} maxBuckets={}",
                    transactions.transactionalIdPrefix(), transactions.maxBuckets());
            return;
        }
        this.transactional = null;
        this.openings = new PartitionOpenings();
        try {
            this.producer = factory.create(this.producerConfig);
        } catch (KafkaException e) {
            validate(this.producerConfig);
            LOG.warn("Kafka producer not created yet, retrying at the first publish: {}", e.toString());
        }
    }

    /**
     * A builder for a publisher with its own producer, made from these settings (K1 enforced on
     * them) and closed by {@link #close()}.
     *
     * @param producerConfig Kafka producer settings, at least {@code bootstrap.servers}; not null;
     *     null values are ignored; copied
     * @return a new builder
     * @throws NullPointerException if {@code producerConfig} is null
     */
    public static Builder builder(Map<String, ?> producerConfig) {
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
    public static Builder builder(Properties producerConfig) {
        return new Builder(toMap(producerConfig), null);
    }

    /**
     * A builder for a publisher on an existing producer, which it neither configures nor closes.
     * The caller is responsible for the guarantees of K1 ({@code acks=all}, idempotence, at most 5
     * requests in flight, key-respecting placement); without them the relay may delete messages
     * the broker did not durably store, or publish a key out of order.
     *
     * @param producer the producer, with byte-array serializers; not null
     * @return a new builder
     * @throws NullPointerException if {@code producer} is null
     */
    public static Builder builder(Producer<byte[], byte[]> producer) {
        return new Builder(null, Objects.requireNonNull(producer, "producer must not be null"));
    }

    /**
     * The publisher's own options (today {@value #MESSAGE_ID_HEADER_CONFIG}), with type, default,
     * valid values and documentation, for a {@code --help} text. Producer settings are Kafka's
     * ({@link ProducerConfig#configDef()}).
     *
     * @return a new copy of the definition
     */
    public static ConfigDef configDef() {
        return new ConfigDef(CONFIG_DEF);
    }

    /**
     * The settings a publisher built from {@code producerConfig} gives its producer: the caller's
     * settings with K1 enforced and the default {@code max.block.ms} applied.
     *
     * @param producerConfig Kafka producer settings; not null
     * @return the effective settings; immutable
     */
    public static Map<String, Object> effectiveConfig(Map<String, ?> producerConfig) {
        Optional<KafkaTransactions> transactions = KafkaTransactions.fromProducerConfig(producerConfig);
        Map<String, Object> config = ProducerSettings.enforce(KafkaTransactions.withoutOwnKeys(producerConfig)).config();
        if (transactions.isEmpty()) {
            return config;
        }
        Map<String, Object> withId = new LinkedHashMap<>(config);
        withId.put("transactional.id", transactions.get().transactionalIdPrefix() + "-<bucket>");
        return Map.copyOf(withId);
    }

    /**
     * Whether this publisher runs in the transactional mode (rules K5-K7).
     *
     * @return true when each owned bucket has its own transactional producer
     */
    public boolean isTransactional() {
        return transactional != null;
    }

    // ---- transactional mode (K5-K7): the relay's bucket hooks reach the per-bucket producers ----

    /**
     * In the transactional mode, refuses a relay of more buckets than
     * {@link KafkaTransactions#maxBuckets()}, or a second relay; otherwise does nothing.
     */
    @Override
    public void checkBucketCount(int bucketCount) {
        if (transactional != null) {
            transactional.checkBucketCount(bucketCount);
        }
    }

    /** In the transactional mode, creates and initializes each bucket's producer (K5). */
    @Override
    public void bucketsAcquired(Set<Integer> buckets) {
        if (transactional != null) {
            transactional.acquired(buckets);
        }
    }

    /** In the transactional mode, closes each bucket's producer, after its transaction in flight. */
    @Override
    public void bucketsReleased(Set<Integer> buckets) {
        if (transactional != null) {
            transactional.released(buckets);
        }
    }

    /**
     * The header this publisher stamps with the message id.
     *
     * @return the header name
     */
    public String messageIdHeader() {
        return messageIdHeader;
    }

    @Override
    public CompletableFuture<PublishResult> publish(List<OutboxMessage> batch) {
        Objects.requireNonNull(batch, "batch must not be null");
        if (transactional != null) {
            return transactional.publish(batch); // K6: one batch, one transaction
        }
        Producer<byte[], byte[]> p;
        try {
            p = producer();
        } catch (RuntimeException e) {
            return CompletableFuture.completedFuture(PublishResult.failure(0, e));
        }
        // K3: metadata is fetched topic by topic in batch order, so a topic problem of message k
        // fails message k and never the records before it, which are already sent.
        Map<String, TopicMetadata> topics = new HashMap<>();
        BatchOutcome outcome = new BatchOutcome(batch.size());
        int replacedIdHeaders = 0;
        long openingDeadline = System.nanoTime() + maxBlockNanos; // K8: the batch's openings wait until then
        for (int i = 0; i < batch.size(); i++) {
            int index = i;
            OutboxMessage m = batch.get(i);
            RuntimeException refused = refusal(p, m, topics);
            if (refused != null) {
                outcome.complete(index, refused);
                continue;
            }
            if (carriesIdHeader(m)) {
                replacedIdHeaders++;
            }
            try {
                TopicPartition target = openings == null ? null
                        : PartitionOpenings.target(m, topics.get(m.topic()).partitions());
                Callback callback = (metadata, error) -> outcome.complete(index, error);
                if (target == null || openings.isOpen(target)) {
                    p.send(record(m), callback);
                } else {
                    RuntimeException stop = openings.send(p, target, record(m), callback, openingDeadline); // K8
                    if (stop != null) {
                        for (int j = index; j < batch.size(); j++) {
                            outcome.complete(j, stop);
                        }
                        break;
                    }
                }
            } catch (RuntimeException e) {
                outcome.complete(index, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                outcome.complete(index, e);
            }
        }
        if (replacedIdHeaders > 0) {
            LOG.warn("dropped the messages' own {} headers, which the relay stamps itself (rule K2) count={}",
                    messageIdHeader, replacedIdHeaders);
        }
        return outcome.future();
    }

    /**
     * R12: null when the message names no partition or one its topic has; else why it is not sent.
     * A partition the producer's cached metadata lacks is counted against the message only when
     * a metadata refresh confirms it (KafkaProducer.send would block max.block.ms waiting for a
     * partition that does not exist); a refresh that fails is retriable.
     */
    RuntimeException partitionRefusal(OutboxMessage m, Integer cachedPartitions) {
        if (m.partition() == null || cachedPartitions == null || m.partition() < cachedPartitions) {
            return null;
        }
        String names = "outbox message " + m.messageId() + " names partition " + m.partition() + " of topic '"
                + m.topic() + "', which has ";
        if (partitionRefresh == null) {
            return new PartitionNotInTopicException(names + cachedPartitions + " partitions by the producer's metadata");
        }
        int fresh;
        try {
            fresh = partitionRefresh.apply(m.topic());
        } catch (RuntimeException e) {
            return new org.apache.kafka.common.errors.TimeoutException(names + cachedPartitions
                    + " partitions by the producer's cached metadata, and refreshing it failed: "
                    + LogText.oneLine(e.toString()), e);
        }
        if (m.partition() < fresh) {
            LOG.info("partition missing from the producer's cached metadata exists; sending topic='{}' partition={} "
                    + "cached={} now={}", m.topic(), m.partition(), cachedPartitions, fresh);
            return null;
        }
        return new PartitionNotInTopicException(names + fresh + " partitions after a metadata refresh");
    }

    /**
     * Why {@code m} cannot be sent now, or null: its topic's metadata wait failed (explained by the
     * {@link TopicDiagnosis}: a topic the cluster refuses is an {@link
     * org.apache.kafka.common.errors.InvalidTopicException}, R12) or its partition is refused
     * ({@link #partitionRefusal}). Both modes ask this of every message in batch order before
     * sending it (K3); {@code topics} keeps one metadata answer per topic for the batch.
     */
    RuntimeException refusal(Producer<byte[], byte[]> producer, OutboxMessage m, Map<String, TopicMetadata> topics) {
        TopicMetadata topic = topics.computeIfAbsent(m.topic(), t -> topicMetadata(producer, t));
        return topic.error() != null ? topic.error() : partitionRefusal(m, topic.partitions());
    }

    /** One topic's partition count (null when unknown) or the error of its metadata wait. */
    record TopicMetadata(Integer partitions, RuntimeException error) {
    }

    private TopicMetadata topicMetadata(Producer<byte[], byte[]> producer, String topic) {
        try {
            return new TopicMetadata(watchedMetadata(producer, topic), null);
        } catch (RuntimeException e) {
            return new TopicMetadata(null, diagnosis == null ? e : diagnosis.explain(topic, e));
        }
    }

    /** The topic's partition count as {@link #awaitMetadata(Producer, String)} finds it, told to the watch. */
    private Integer watchedMetadata(Producer<byte[], byte[]> producer, String topic) {
        try {
            Integer partitions = awaitMetadata(producer, topic);
            topicWatch.observed(topic, partitions);
            return partitions;
        } catch (RuntimeException e) {
            topicWatch.missing(topic);
            throw e;
        }
    }

    /**
     * The topic's partition count, or null when the producer does not report one. Asked once per
     * topic of a batch, so a broker that is down costs one max.block.ms per batch, not one per
     * record. After a failed wait, batches for that topic fail at once for the next max.block.ms,
     * so a sweep over many buckets does not wait once per bucket.
     */
    private Integer awaitMetadata(Producer<byte[], byte[]> producer, String topic) {
        MetadataFailure recent = metadataFailures.get(topic);
        if (recent != null && System.nanoTime() - recent.untilNanos() < 0) {
            throw recent.error();
        }
        try {
            List<PartitionInfo> partitions = producer.partitionsFor(topic);
            metadataFailures.remove(topic);
            return partitions == null || partitions.isEmpty() ? null : partitions.size();
        } catch (RuntimeException e) {
            metadataFailures.put(topic, new MetadataFailure(e, System.nanoTime() + maxBlockNanos));
            throw e;
        }
    }

    /** A failed metadata wait for a topic, repeated to callers until {@code untilNanos}. */
    private record MetadataFailure(RuntimeException error, long untilNanos) {
    }

    /** Whether the message has a header of its own named like the id header (K2); a loop, as for every record. */
    private boolean carriesIdHeader(OutboxMessage m) {
        for (OutboxHeader h : m.headers()) {
            if (h.key().equals(messageIdHeader)) {
                return true;
            }
        }
        return false;
    }

    private ProducerRecord<byte[], byte[]> record(OutboxMessage m) {
        RecordHeaders headers = new RecordHeaders();
        for (OutboxHeader h : m.headers()) {
            if (!h.key().equals(messageIdHeader)) { // exactly one id header per record, the relay's (K2)
                headers.add(h);
            }
        }
        headers.add(messageIdHeader, m.messageId().toString().getBytes(StandardCharsets.UTF_8));
        return new ProducerRecord<>(m.topic(), m.partition(), null, m.key(), m.value(), headers);
    }

    private Producer<byte[], byte[]> producer() {
        synchronized (producerLock) {
            if (closed) {
                throw new IllegalStateException("the Kafka outbox publisher is closed");
            }
            if (producer == null) {
                producer = new KafkaProducer<>(producerConfig);
                LOG.info("Kafka producer created");
            }
            return producer;
        }
    }

    /** Closes the producer if this publisher created it, waiting up to {@link #DEFAULT_CLOSE_TIMEOUT}. */
    @Override
    public void close() {
        close(DEFAULT_CLOSE_TIMEOUT);
    }

    /**
     * Closes the producer if this publisher created it; a given producer is left open.
     * Idempotent; later publishes fail.
     *
     * @param timeout how long to wait for buffered records to be sent; not null, not negative
     */
    public void close(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout must not be null");
        if (transactional != null) {
            transactional.close(timeout);
        }
        Producer<byte[], byte[]> toClose;
        synchronized (producerLock) {
            if (closed) {
                return;
            }
            closed = true;
            toClose = ownsProducer ? producer : null;
        }
        if (toClose != null) {
            toClose.close(timeout);
        }
        if (diagnosis != null) {
            diagnosis.close();
        }
    }

    private static void validate(Map<String, Object> config) {
        try {
            new ProducerConfig(config);
        } catch (ConfigException e) {
            throw new OutboxMisconfigurationException("invalid Kafka producer setting: " + e.getMessage(), e);
        }
    }

    private static long maxBlockMillis(Map<String, Object> config) {
        try {
            return Long.parseLong(String.valueOf(config.get(ProducerConfig.MAX_BLOCK_MS_CONFIG)).trim());
        } catch (NumberFormatException e) {
            return ProducerSettings.DEFAULT_MAX_BLOCK_MS;
        }
    }

    private static String requireHeader(String header) {
        if (header == null || header.isBlank()) {
            throw new OutboxMisconfigurationException("publisher option " + MESSAGE_ID_HEADER_CONFIG
                    + " must not be blank but was " + (header == null ? null : "'" + header + "'"));
        }
        return header;
    }

    private static Map<String, Object> toMap(Properties properties) {
        Objects.requireNonNull(properties, "producerConfig must not be null");
        Map<String, Object> map = new HashMap<>();
        properties.stringPropertyNames().forEach(k -> map.put(k, properties.getProperty(k)));
        return map;
    }

    /**
     * Collects the publisher's options; {@link #build()} validates them. Not thread-safe.
     */
    public static final class Builder {

        private final Map<String, ?> producerConfig;
        private final Producer<byte[], byte[]> producer;
        private String messageIdHeader = DEFAULT_MESSAGE_ID_HEADER;
        private KafkaTransactions transactions;
        private Function<String, Integer> partitionRefresh;

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

        /** For tests: how a topic's partition count is refreshed (default: an Admin client's answer). */
        Builder partitionRefresh(Function<String, Integer> refresh) {
            this.partitionRefresh = refresh;
            return this;
        }

        /**
         * Validates the options and builds the publisher; one built from settings creates its
         * producer now, or at the first publish when the bootstrap servers cannot be resolved yet.
         *
         * @return the publisher
         * @throws OutboxMisconfigurationException naming the option or producer setting and the bad value
         */
        public KafkaOutboxPublisher build() {
            KafkaTransactions mode = transactions;
            if (mode == null && producer == null) {
                mode = KafkaTransactions.fromProducerConfig(producerConfig).orElse(null);
            }
            return new KafkaOutboxPublisher(this, mode, KafkaProducer::new);
        }
    }
}
