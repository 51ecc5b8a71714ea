package io.outbox.relay.kafka;

import io.outbox.OutboxMessage;
import io.outbox.relay.PublishResult;
import io.outbox.relay.internal.LogText;
import io.outbox.spi.OutboxMisconfigurationException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The default mode of {@link KafkaOutboxPublisher} (rules K1-K4, K8): one idempotent producer for
 * every bucket. A batch's records are checked ({@link TopicChecks}), prepared
 * ({@link OutboxRecords}) and sent in batch order, every send started before any is awaited but
 * for a partition's opening record (K8, {@link PartitionOpenings}); a {@link BatchOutcome}
 * completes the result once every record has its outcome (K3).
 *
 * <p>Its own producer (made from settings with K1 enforced) is created at construction, or at the
 * first publish when the bootstrap servers cannot be resolved yet, replaced when a topic loses
 * partitions ({@link #replaceProducer()}), and closed by {@link #close(Duration)}. A producer of the caller's is used as is, with every record sent at
 * once (no K8 openings), and never closed.
 *
 * <p>Thread-safe: the relay's store threads publish batches of several buckets at once; the
 * producer's I/O thread completes them.
 */
final class IdempotentPublisher implements KafkaOutboxPublisher {

    private static final Logger LOG = LoggerFactory.getLogger(KafkaOutboxPublisher.class);

    private final OutboxRecords records;
    private final TopicChecks checks;
    private final PartitionOpenings openings;
    /** Makes the own producer; null on a producer of the caller's. */
    private final Function<Map<String, Object>, Producer<byte[], byte[]>> factory;
    private final Map<String, Object> producerConfig;
    private final Object producerLock = new Object();
    /** Guarded by {@link #producerLock}. */
    private Producer<byte[], byte[]> producer;
    private boolean closed;

    private IdempotentPublisher(OutboxRecords records, TopicChecks checks, PartitionOpenings openings,
                                Function<Map<String, Object>, Producer<byte[], byte[]>> factory,
                                Map<String, Object> producerConfig, Producer<byte[], byte[]> producer) {
        this.records = records;
        this.checks = checks;
        this.openings = openings;
        this.factory = factory;
        this.producerConfig = producerConfig;
        this.producer = producer;
    }

    /**
     * A publisher on a producer of the caller's, which it neither configures nor closes.
     *
     * @param partitionRefresh for tests, how a partition count is refreshed; usually null
     */
    static IdempotentPublisher onProducer(Producer<byte[], byte[]> producer, OutboxRecords records,
                                          Function<String, Integer> partitionRefresh) {
        return new IdempotentPublisher(records, TopicChecks.withoutAdmin(partitionRefresh), PartitionOpenings.none(),
                null, null, producer);
    }

    /**
     * A publisher with its own producer, made now from {@code producerConfig} (the effective
     * settings, K1 enforced) or, if the bootstrap servers cannot be resolved yet, at the first
     * publish.
     *
     * @throws OutboxMisconfigurationException if the settings are invalid, naming the setting
     */
    static IdempotentPublisher ownProducer(Map<String, Object> producerConfig, OutboxRecords records,
                                           TopicChecks checks,
                                           Function<Map<String, Object>, Producer<byte[], byte[]>> factory) {
        IdempotentPublisher publisher = new IdempotentPublisher(records, checks, new PartitionOpenings(), factory,
                Map.copyOf(producerConfig), null);
        checks.onPartitionsLost(publisher::replaceProducer);
        try {
            publisher.producer = factory.apply(publisher.producerConfig);
        } catch (KafkaException e) {
            ProducerSettings.validate(publisher.producerConfig);
            LOG.warn("Kafka producer not created yet, retrying at the first publish: {}",
                    LogText.oneLine(e.toString()));
        }
        return publisher;
    }

    @Override
    public boolean isTransactional() {
        return false;
    }

    @Override
    public String messageIdHeader() {
        return records.messageIdHeader();
    }

    @Override
    public boolean tracingTimeInOutboxSpan() {
        return records.tracingTimeInOutboxSpan();
    }

    /**
     * K3: the records go out in batch order, each after its check; a refused record fails at its
     * position and the others are still sent. K8: a record to a partition this producer has not
     * opened waits, with the rest of the batch, for the opening record's acknowledgement, until
     * {@code max.block.ms} after the batch began; a wait that runs out, or an opening that failed
     * for a broker reason, fails the records not sent yet.
     */
    @Override
    public CompletableFuture<PublishResult> publish(List<OutboxMessage> batch) {
        Objects.requireNonNull(batch, "batch must not be null");
        return records.traced(batch, () -> send(batch)); // O2
    }

    private CompletableFuture<PublishResult> send(List<OutboxMessage> batch) {
        Producer<byte[], byte[]> p;
        try {
            p = producer();
        } catch (RuntimeException e) {
            return CompletableFuture.completedFuture(PublishResult.failure(0, e));
        }
        TopicChecks.Batch topics = checks.batch(p);
        BatchOutcome outcome = new BatchOutcome(batch.size());
        int replacedIdHeaders = 0;
        long openingDeadline = System.nanoTime() + checks.maxBlockNanos(); // K8: the batch's openings wait until then
        for (int i = 0; i < batch.size(); i++) {
            int index = i;
            OutboxMessage m = batch.get(i);
            RuntimeException refused = topics.refusal(m);
            if (refused != null) {
                outcome.complete(index, refused);
                continue;
            }
            if (records.carriesIdHeader(m)) {
                replacedIdHeaders++;
            }
            try {
                TopicPartition target = PartitionOpenings.target(m, topics.partitions(m.topic()));
                Callback callback = (metadata, error) -> {
                    if (error == null) {
                        checks.acknowledged();
                    }
                    outcome.complete(index, error);
                };
                RuntimeException stop = openings.send(p, target, records.record(m), callback, openingDeadline);
                if (stop != null) {
                    for (int j = index; j < batch.size(); j++) {
                        outcome.complete(j, stop);
                    }
                    break;
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
                    records.messageIdHeader(), replacedIdHeaders);
        }
        checks.recheckWhilePending(outcome.future(), batch); // K3: a partition lost while it waits
        return outcome.future();
    }

    private Producer<byte[], byte[]> producer() {
        synchronized (producerLock) {
            if (closed) {
                throw new IllegalStateException("the Kafka outbox publisher is closed");
            }
            if (producer == null) {
                producer = factory.apply(producerConfig);
                LOG.info("Kafka producer created");
            }
            return producer;
        }
    }

    /**
     * A topic lost partitions (deleted and re-created with fewer, often by the
     * broker's auto-creation). Records in flight to the lost ones would wait in the producer until
     * {@code delivery.timeout.ms} (120 s by default), holding their buckets' publishes; closing the
     * producer at once fails them, so their buckets retry from their first unacknowledged message
     * on a new producer (R3), which opens every partition again (K8).
     */
    private void replaceProducer() {
        Producer<byte[], byte[]> old;
        synchronized (producerLock) {
            if (closed || producer == null) {
                return;
            }
            old = producer;
            producer = null;
            openings.clear();
        }
        LOG.warn("replacing the Kafka producer: a topic lost partitions, and records in flight to them would wait "
                + "until delivery.timeout.ms; their buckets retry on the new producer");
        old.close(Duration.ZERO);
    }

    /** Closes the own producer, waiting up to {@code timeout} for what it buffered; a given one stays open. */
    @Override
    public void close(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout must not be null");
        Producer<byte[], byte[]> toClose;
        synchronized (producerLock) {
            if (closed) {
                return;
            }
            closed = true;
            toClose = factory != null ? producer : null;
        }
        if (toClose != null) {
            toClose.close(timeout);
        }
        checks.close();
    }

    @Override
    public String toString() {
        return "KafkaOutboxPublisher[idempotent, messageIdHeader=" + records.messageIdHeader() + "]";
    }
}
