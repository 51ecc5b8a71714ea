package io.outbox.relay.kafka;

import io.outbox.OutboxMessage;
import io.outbox.relay.internal.LogText;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What both modes ask before sending a message (rules K3, R12): whether its topic's metadata came,
 * and whether its partition exists. Metadata is asked once per topic of a batch ({@link Batch}),
 * in batch order, so a topic problem of message k fails message k and never the records before it,
 * and a broker that is down costs one {@code max.block.ms} per batch, not one per record. After a
 * failed wait, batches for that topic fail at once for the next {@code max.block.ms}, so a sweep
 * over many buckets does not wait once per bucket; a wait that timed out is explained by a
 * {@link TopicDiagnosis} (a topic the cluster refuses becomes an {@link InvalidTopicException},
 * R12). Every answer goes to a {@link TopicWatch}, which logs a changed partition count. A message
 * naming a partition the producer's cached metadata lacks is checked against the cluster's answer
 * now; it fails with a {@link PartitionNotInTopicException} (R12) only when the topic still lacks
 * the partition, and with a retriable {@link TimeoutException} when the cluster does not answer.
 * A publish still waiting for acknowledgements {@link #RECHECK_MILLIS} after it began has its
 * topics' partition counts asked of the cluster again ({@link #recheckWhilePending}), so a topic
 * that lost partitions while every batch waited is found without a new batch.
 *
 * <p>Thread-safe: the publishes of several buckets use it at once; a {@link Batch} belongs to one
 * publish and its thread.
 */
final class TopicChecks implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(KafkaOutboxPublisher.class);

    /**
     * How long a publish waits for its acknowledgements before its topics' partition counts are
     * asked of the cluster, and how often after that: at most once per topic per this interval,
     * across all publishes. Milliseconds.
     */
    static final long RECHECK_MILLIS = 1_000;

    private final long maxBlockNanos;
    private final Map<String, MetadataFailure> metadataFailures = new ConcurrentHashMap<>();
    private final TopicWatch watch = new TopicWatch();
    /** Null on a producer of the caller's: there are no connection settings to ask the cluster with. */
    private final TopicDiagnosis diagnosis;
    /** When the cluster last answered; null on a producer of the caller's. */
    private final BrokerContact contact;
    /** Told when a topic lost partitions; the publisher replaces its producer. */
    private volatile Runnable onPartitionsLost = () -> { };
    /** A topic's partition count as the cluster answers now; null when there is no way to ask. */
    private final Function<String, Integer> partitionRefresh;
    /** When each topic was last rechecked ({@link System#nanoTime()}). */
    private final Map<String, Long> rechecked = new ConcurrentHashMap<>();
    private final Object rechecksLock = new Object();
    /** Runs the rechecks of waiting publishes; made at the first one, guarded by {@link #rechecksLock}. */
    private ScheduledThreadPoolExecutor rechecks;
    /** Guarded by {@link #rechecksLock}. */
    private boolean closed;

    private TopicChecks(long maxBlockMillis, TopicDiagnosis diagnosis, BrokerContact contact,
                        Function<String, Integer> partitionRefresh) {
        this.maxBlockNanos = TimeUnit.MILLISECONDS.toNanos(maxBlockMillis);
        this.diagnosis = diagnosis;
        this.contact = contact;
        this.partitionRefresh = partitionRefresh;
    }

    /**
     * Checks for a publisher that made its producer from these settings: it asks the cluster with
     * an Admin client of the same connection settings.
     *
     * @param producerConfig the producer's effective settings
     * @param partitionRefresh for tests, how a partition count is refreshed; null for the Admin client's answer
     */
    static TopicChecks withAdmin(Map<String, Object> producerConfig, Function<String, Integer> partitionRefresh) {
        BrokerContact contact = new BrokerContact(producerConfig.get("bootstrap.servers"));
        TopicDiagnosis diagnosis = new TopicDiagnosis(producerConfig, contact);
        return new TopicChecks(ProducerSettings.maxBlockMillis(producerConfig), diagnosis, contact,
                partitionRefresh != null ? partitionRefresh : diagnosis::partitionCount);
    }

    /**
     * Checks for a publisher on a producer of the caller's, whose settings it does not know: no
     * diagnosis, and a partition is refused by the producer's metadata alone.
     *
     * @param partitionRefresh for tests, how a partition count is refreshed; usually null
     */
    static TopicChecks withoutAdmin(Function<String, Integer> partitionRefresh) {
        return new TopicChecks(ProducerSettings.DEFAULT_MAX_BLOCK_MS, null, null, partitionRefresh);
    }

    /** How long a producer blocks for metadata ({@code max.block.ms}), in nanoseconds. */
    long maxBlockNanos() {
        return maxBlockNanos;
    }

    /** The checks of one batch on {@code producer}, which keep one metadata answer per topic. */
    Batch batch(Producer<byte[], byte[]> producer) {
        return new Batch(producer);
    }

    /** One topic's partition count (null when unknown) or the error of its metadata wait. */
    private record TopicMetadata(Integer partitions, RuntimeException error) {
    }

    /** A failed metadata wait for a topic, repeated to callers until {@code untilNanos}. */
    private record MetadataFailure(RuntimeException error, long untilNanos) {
    }

    /** The checks of one batch; not thread-safe. */
    final class Batch {

        private final Producer<byte[], byte[]> producer;
        private final Map<String, TopicMetadata> topics = new HashMap<>();

        private Batch(Producer<byte[], byte[]> producer) {
            this.producer = producer;
        }

        /**
         * Why {@code m} cannot be sent now, or null: its topic's metadata wait failed (as
         * explained by the diagnosis) or its partition is refused.
         */
        RuntimeException refusal(OutboxMessage m) {
            TopicMetadata topic = metadata(m.topic());
            return topic.error() != null ? topic.error() : partitionRefusal(m, topic.partitions());
        }

        /** The topic's partition count by this batch's answer; null when unknown or failed. */
        Integer partitions(String topic) {
            return metadata(topic).partitions();
        }

        private TopicMetadata metadata(String topic) {
            return topics.computeIfAbsent(topic, this::ask);
        }

        private TopicMetadata ask(String topic) {
            try {
                return new TopicMetadata(watchedMetadata(producer, topic), null);
            } catch (RuntimeException e) {
                return new TopicMetadata(null, diagnosis == null ? e : diagnosis.explain(topic, e));
            }
        }
    }

    /**
     * Null when the message names no partition or one its topic has; else why it is not sent. A
     * partition the producer's cached metadata lacks is counted against the message only when a
     * metadata refresh confirms it (KafkaProducer.send would block max.block.ms waiting for a
     * partition that does not exist); a refresh that fails is retriable.
     */
    private RuntimeException partitionRefusal(OutboxMessage m, Integer cachedPartitions) {
        if (m.partition() == null || cachedPartitions == null || m.partition() < cachedPartitions) {
            return null;
        }
        String names = "outbox message " + m.messageId() + " names partition " + m.partition() + " of topic '"
                + m.topic() + "', which has ";
        if (partitionRefresh == null) {
            return new PartitionNotInTopicException(names + cachedPartitions
                    + " partitions by the producer's metadata");
        }
        int fresh;
        try {
            fresh = partitionRefresh.apply(m.topic());
        } catch (RuntimeException e) {
            return new TimeoutException(names + cachedPartitions + " partitions by the producer's cached metadata, and "
                    + "refreshing it failed: " + LogText.oneLine(e.toString()), e);
        }
        if (m.partition() < fresh) {
            LOG.info("partition missing from the producer's cached metadata exists; sending topic='{}' partition={} "
                    + "cached={} now={}", LogText.visible(m.topic()), m.partition(), cachedPartitions, fresh);
            return null;
        }
        return new PartitionNotInTopicException(names + fresh + " partitions after a metadata refresh");
    }

    /** The topic's partition count as {@link #awaitMetadata} finds it, told to the watch. */
    private Integer watchedMetadata(Producer<byte[], byte[]> producer, String topic) {
        try {
            Integer partitions = awaitMetadata(producer, topic);
            if (watch.observed(topic, partitions)) {
                onPartitionsLost.run();
            }
            return partitions;
        } catch (RuntimeException e) {
            watch.missing(topic);
            throw e;
        }
    }

    /** The topic's partition count, or null when the producer does not report one. */
    private Integer awaitMetadata(Producer<byte[], byte[]> producer, String topic) {
        MetadataFailure recent = metadataFailures.get(topic);
        if (recent != null && System.nanoTime() - recent.untilNanos() < 0) {
            throw recent.error();
        }
        try {
            List<PartitionInfo> partitions = producer.partitionsFor(topic);
            metadataFailures.remove(topic);
            acknowledged();
            return partitions == null || partitions.isEmpty() ? null : partitions.size();
        } catch (RuntimeException e) {
            metadataFailures.put(topic, new MetadataFailure(e, System.nanoTime() + maxBlockNanos));
            throw e;
        }
    }

    /**
     * What to run when a topic's metadata shows fewer partitions than before (a topic deleted and
     * re-created, by hand or by the broker's auto-creation with {@code num.partitions}).
     */
    void onPartitionsLost(Runnable action) {
        onPartitionsLost = action;
    }

    /** The cluster answered: metadata came or a record was acknowledged. Any thread. */
    void acknowledged() {
        if (contact != null) {
            contact.succeeded();
        }
    }

    /**
     * K3: while {@code pending} (a publish of {@code batch}) is not done, asks the cluster every
     * {@link #RECHECK_MILLIS} for the partition count of the batch's topics, and a topic that has
     * fewer than the publisher last saw is told to the watch and to {@link #onPartitionsLost}: the
     * publisher replaces its producers, which fails the waiting publish at once. Without this, when
     * every batch waits on records to a lost partition no batch begins that would see the new
     * count, and each waits until {@code delivery.timeout.ms}. A count that grew is left to the
     * producer's own metadata, and a refresh that fails (a broker outage, a topic not yet re-created)
     * changes nothing. Does nothing where there is no way to ask the cluster. Any thread; the asks run
     * on one daemon thread of these checks, which {@link #close()} stops.
     */
    void recheckWhilePending(CompletableFuture<?> pending, List<OutboxMessage> batch) {
        if (partitionRefresh == null || pending.isDone()) {
            return;
        }
        ScheduledFuture<?> task;
        synchronized (rechecksLock) {
            if (closed) {
                return;
            }
            if (rechecks == null) {
                rechecks = new ScheduledThreadPoolExecutor(1, r -> {
                    Thread t = new Thread(r, "outbox-topic-recheck");
                    t.setDaemon(true);
                    return t;
                });
                rechecks.setRemoveOnCancelPolicy(true);
            }
            try {
                task = rechecks.scheduleWithFixedDelay(() -> recheck(pending, batch), RECHECK_MILLIS, RECHECK_MILLIS,
                        TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException e) {
                return;
            }
        }
        pending.whenComplete((result, error) -> task.cancel(false));
    }

    private void recheck(CompletableFuture<?> pending, List<OutboxMessage> batch) {
        Set<String> topics = new LinkedHashSet<>();
        batch.forEach(m -> topics.add(m.topic()));
        for (String topic : topics) {
            long now = System.nanoTime();
            Long last = rechecked.get(topic);
            if (pending.isDone() || last != null && now - last < TimeUnit.MILLISECONDS.toNanos(RECHECK_MILLIS)) {
                continue;
            }
            rechecked.put(topic, now);
            int fresh;
            try {
                fresh = partitionRefresh.apply(topic);
            } catch (RuntimeException e) {
                continue;
            }
            Integer known = watch.known(topic);
            if (known != null && fresh < known && watch.observed(topic, fresh)) {
                onPartitionsLost.run();
            }
        }
    }

    /** Closes the diagnosis' Admin client, if one was made, and stops the rechecks. */
    @Override
    public void close() {
        synchronized (rechecksLock) {
            closed = true;
            if (rechecks != null) {
                rechecks.shutdownNow();
            }
        }
        if (diagnosis != null) {
            diagnosis.close();
        }
    }
}
