package io.outbox.relay.kafka;

import io.outbox.OutboxMessage;
import io.outbox.relay.BucketFencedException;
import io.outbox.relay.PublishResult;
import io.outbox.spi.OutboxMisconfigurationException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Function;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The transactional mode of {@link KafkaOutboxPublisher} (rules K5-K7): a {@link BucketProducer}
 * per bucket its relay owns, following the relay's leases ({@link #bucketsAcquired},
 * {@link #bucketsReleased}); each batch is one transaction of its bucket's producer. One relay per
 * publisher, of at most {@link KafkaTransactions#maxBuckets()} buckets.
 *
 * <p>Thread-safe: the relay's loop thread reports buckets acquired, its loop or renewal thread
 * buckets released, and its store threads publish; the producers map is concurrent.
 */
final class TransactionalPublisher implements KafkaOutboxPublisher {

    private static final Logger LOG = LoggerFactory.getLogger(KafkaOutboxPublisher.class);
    private static final int INIT_THREADS = 8;

    private final Map<String, Object> baseConfig;
    private final KafkaTransactions options;
    private final OutboxRecords records;
    private final TopicChecks checks;
    private final Function<Map<String, Object>, Producer<byte[], byte[]>> factory;
    private final Map<Integer, BucketProducer> producers = new ConcurrentHashMap<>();
    private final Object lifecycle = new Object();
    /** Guarded by {@link #lifecycle}. */
    private boolean relayAttached;
    private volatile boolean closed;

    /**
     * @param baseConfig the effective producer settings (K1 enforced, no {@code transactional.id})
     * @throws OutboxMisconfigurationException if the settings are invalid, naming the setting
     */
    TransactionalPublisher(Map<String, Object> baseConfig, KafkaTransactions options, OutboxRecords records,
                           TopicChecks checks, Function<Map<String, Object>, Producer<byte[], byte[]>> factory) {
        ProducerSettings.validate(baseConfig);
        this.baseConfig = Map.copyOf(baseConfig);
        this.options = options;
        this.records = records;
        this.checks = checks;
        this.factory = factory;
        checks.onPartitionsLost(this::replaceProducers);
        LOG.info("Kafka outbox publisher in transactional mode transactionalIdPrefix={} maxBuckets={}",
                options.transactionalIdPrefix(), options.maxBuckets());
    }

    @Override
    public boolean isTransactional() {
        return true;
    }

    @Override
    public String messageIdHeader() {
        return records.messageIdHeader();
    }

    @Override
    public boolean tracingTimeInOutboxSpan() {
        return records.tracingTimeInOutboxSpan();
    }

    /** The settings of bucket {@code bucket}'s producer. */
    Map<String, Object> producerConfig(int bucket) {
        Map<String, Object> config = new LinkedHashMap<>(baseConfig);
        String id = options.transactionalId(bucket);
        config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, id);
        Object clientId = config.get(ProducerConfig.CLIENT_ID_CONFIG);
        // One client.id per producer keeps their metrics apart.
        config.put(ProducerConfig.CLIENT_ID_CONFIG, clientId == null ? "outbox-" + id : clientId + "-" + bucket);
        return config;
    }

    /**
     * K5 bound: refuses a relay of more buckets than {@link KafkaTransactions#maxBuckets()}, or a
     * second relay (the producers follow one relay's leases).
     */
    @Override
    public void checkBucketCount(int bucketCount) {
        if (bucketCount > options.maxBuckets()) {
            throw new OutboxMisconfigurationException("relay option bucket.count=" + bucketCount + " is above "
                    + KafkaTransactions.MAX_BUCKETS_CONFIG + "=" + options.maxBuckets() + ": in transactional mode a "
                    + "relay may come to own every bucket and runs one Kafka producer (a thread and its connections) "
                    + "per owned bucket; lower bucket.count or raise " + KafkaTransactions.MAX_BUCKETS_CONFIG);
        }
        synchronized (lifecycle) {
            if (relayAttached) {
                throw new OutboxMisconfigurationException("a transactional Kafka outbox publisher ("
                        + KafkaTransactions.TRANSACTIONAL_ID_PREFIX_CONFIG + "=" + options.transactionalIdPrefix()
                        + ") serves one relay: its producers follow that relay's bucket leases; give each relay its "
                        + "own publisher");
            }
            relayAttached = true;
        }
    }

    /**
     * K5: a producer per gained bucket, initialized now so older producers are fenced at once.
     * Initializations run in parallel (up to {@value #INIT_THREADS} at a time): each takes a few
     * broker round trips plus {@code retry.backoff.ms} while the coordinator loads the id.
     */
    @Override
    public void bucketsAcquired(Set<Integer> buckets) {
        List<BucketProducer> fresh = new ArrayList<>();
        for (int bucket : buckets) {
            if (closed) {
                return;
            }
            BucketProducer p = new BucketProducer(bucket, options, producerConfig(bucket), factory, records, checks);
            BucketProducer old = producers.put(bucket, p);
            if (old != null) {
                old.release();
            }
            fresh.add(p);
        }
        if (fresh.size() == 1) {
            fresh.get(0).initEagerly();
            return;
        }
        ExecutorService pool = Executors.newFixedThreadPool(Math.min(fresh.size(), INIT_THREADS), body -> {
            Thread t = new Thread(body, "outbox-transactional-init");
            t.setDaemon(true);
            return t;
        });
        try {
            CompletableFuture.allOf(fresh.stream().map(p -> CompletableFuture.runAsync(p::initEagerly, pool))
                    .toArray(CompletableFuture[]::new)).join();
        } finally {
            pool.shutdown();
        }
    }

    /** Closes each bucket's producer, after its transaction in flight. */
    @Override
    public void bucketsReleased(Set<Integer> buckets) {
        for (int bucket : buckets) {
            BucketProducer old = producers.remove(bucket);
            if (old != null) {
                old.release();
            }
        }
    }

    /** K6: one batch, one transaction of its bucket's producer; blocks the caller until the commit or abort. */
    @Override
    public CompletableFuture<PublishResult> publish(List<OutboxMessage> batch) {
        Objects.requireNonNull(batch, "batch must not be null");
        return records.traced(batch, () -> send(batch)); // O2
    }

    private CompletableFuture<PublishResult> send(List<OutboxMessage> batch) {
        if (batch.isEmpty()) {
            return CompletableFuture.completedFuture(PublishResult.success(0));
        }
        int bucket = batch.get(0).bucket();
        for (OutboxMessage m : batch) {
            if (m.bucket() != bucket) {
                return CompletableFuture.completedFuture(PublishResult.failure(0, new IllegalArgumentException(
                        "a transactional batch holds one bucket's messages, but message " + m.messageId()
                                + " is of bucket " + m.bucket() + " and the first of bucket " + bucket)));
            }
        }
        BucketProducer producer = producers.get(bucket);
        if (closed) {
            return CompletableFuture.completedFuture(PublishResult.failure(0,
                    new IllegalStateException("the Kafka outbox publisher is closed")));
        }
        if (producer == null) {
            return CompletableFuture.completedFuture(PublishResult.failure(0, new BucketFencedException(bucket,
                    "bucket " + bucket + " has no transactional producer: the relay did not report acquiring it, or "
                            + "released it (a publisher wrapping this one must forward bucketsAcquired and "
                            + "bucketsReleased)", null)));
        }
        return CompletableFuture.completedFuture(producer.publish(batch));
    }

    /**
     * A topic lost partitions (deleted and re-created with fewer, often by the broker's
     * auto-creation): every bucket's producer is replaced, those with a transaction in flight at
     * once, so no transaction waits until {@code delivery.timeout.ms} for a partition that is gone
     * and no key is placed by metadata that still counts it ({@link BucketProducer#replace()}).
     * Any thread.
     */
    private void replaceProducers() {
        if (closed) {
            return;
        }
        LOG.warn("replacing the transactional producers: a topic lost partitions, and transactions with records in "
                + "flight to them would wait until delivery.timeout.ms; their buckets retry on new producers "
                + "buckets={}", producers.size());
        for (BucketProducer p : List.copyOf(producers.values())) {
            p.replace();
        }
    }

    /** Closes every bucket's producer, waiting up to {@code timeout} each for what it buffered. Idempotent. */
    @Override
    public void close(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout must not be null");
        boolean first;
        synchronized (lifecycle) {
            first = !closed;
            closed = true;
        }
        for (BucketProducer p : List.copyOf(producers.values())) {
            p.close(timeout);
        }
        producers.clear();
        if (first) {
            checks.close();
        }
    }

    @Override
    public String toString() {
        return "KafkaOutboxPublisher[transactional, " + options + ", messageIdHeader=" + records.messageIdHeader()
                + "]";
    }
}
