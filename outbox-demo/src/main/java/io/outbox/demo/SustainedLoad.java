package io.outbox.demo;

import io.outbox.MessageIds;
import io.outbox.OutboxMessage;
import io.outbox.OutboxMessageFactory;
import io.outbox.relay.RelayOptions;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * A steady load on one run's store: writer threads commit messages at a fixed rate (each writer
 * its own transaction size, one message or a batch), relays publish them to Kafka, and a consumer
 * reads the topic and records each message's commit-to-consume latency. Counters are cumulative;
 * the caller samples them ({@link #committed()}, {@link #published()}, {@link #intervalLatencies()})
 * and turns samples into intervals.
 *
 * <p>Every committed message is remembered until the consumer reads it, so {@link #inFlight()}
 * after the writers stop and the relays drain is the number of messages lost. Thread-safe: the
 * writers, the consumer and the relays run on their own threads; the sampling methods may be
 * called from any thread.
 */
final class SustainedLoad implements AutoCloseable {

    /** A writer that falls this far behind its schedule gives up on the missed transactions. */
    static final Duration MAX_WRITER_LAG = Duration.ofSeconds(5);

    /** Latencies above this (in microseconds) are recorded as this value. */
    private static final long MAX_LATENCY_MICROS = Duration.ofHours(1).toNanos() / 1_000;

    /**
     * What to run.
     *
     * @param rate messages committed per second, all writers together
     * @param transactionSizes the writers' messages per transaction, writer i taking the size at
     *     {@code i % size()}; the rate is split evenly over the sizes
     * @param writers writer threads, at least {@code transactionSizes.size()}
     * @param keys distinct message keys
     * @param valueBytes bytes per value
     * @param relays relays
     * @param buckets buckets
     * @param batchSize the relays' batch size
     * @param storeConcurrency each relay's store threads
     * @param wakeUp whether the writers tell the relays about each commit (as a notifier would, rule
     *     N1) instead of leaving them to their poll interval
     */
    record Settings(int rate, List<Integer> transactionSizes, int writers, int keys, int valueBytes, int relays,
                    int buckets, int batchSize, int storeConcurrency, boolean wakeUp) {
        Settings {
            transactionSizes = List.copyOf(transactionSizes);
        }

        /** The offered rate of writer {@code writer}, in messages per second. */
        double writerRate(int writer) {
            int sizes = transactionSizes.size();
            int sameSize = (writers - writer % sizes + sizes - 1) / sizes; // writers w with w % sizes == writer % sizes
            return (double) rate / sizes / sameSize;
        }
    }

    private final Settings settings;
    private final DemoDatabase database;
    private final String topic;
    private final String bootstrapServers;
    private final String runId;
    private final Map<UUID, Long> inFlight = new ConcurrentHashMap<>();
    private final Recorder latencies = new Recorder(MAX_LATENCY_MICROS, 3);
    private final LongAdder committed = new LongAdder();
    private final LongAdder consumed = new LongAdder();
    private final LongAdder duplicates = new LongAdder();
    private final LongAdder skipped = new LongAdder();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final List<Thread> writers = new ArrayList<>();
    private volatile boolean writing;
    private volatile boolean consuming;
    private RelayFleet fleet;
    private Thread consumerThread;
    private KafkaConsumer<byte[], byte[]> consumer;

    /**
     * @param settings what to run
     * @param database the run's database, its schema created
     * @param topic the run's topic, created
     * @param bootstrapServers the cluster
     * @param runId the run id, part of the relays' ids
     */
    SustainedLoad(Settings settings, DemoDatabase database, String topic, String bootstrapServers, String runId) {
        this.settings = settings;
        this.database = database;
        this.topic = topic;
        this.bootstrapServers = bootstrapServers;
        this.runId = runId;
    }

    /** Starts the consumer, then the relays, then the writers. */
    void start() {
        startConsumer();
        RelayOptions options = RelayFleet.options(settings.buckets(), settings.batchSize(),
                settings.storeConcurrency());
        fleet = RelayFleet.create(settings.relays(), "sustained-" + runId,
                () -> database.openRelayStore(settings.storeConcurrency()), bootstrapServers, options);
        fleet.start();
        writing = true;
        for (int w = 0; w < settings.writers(); w++) {
            int size = settings.transactionSizes().get(w % settings.transactionSizes().size());
            double rate = settings.writerRate(w);
            Thread writer = new Thread(() -> write(size, rate), "sustained-writer-" + (w + 1));
            writer.setDaemon(true);
            writers.add(writer);
        }
        writers.forEach(Thread::start);
    }

    private void startConsumer() {
        consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ConsumerConfig.CLIENT_ID_CONFIG, "outbox-sustained-consumer",
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
                ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5_000), new ByteArrayDeserializer(), new ByteArrayDeserializer());
        List<TopicPartition> partitions = OrderConsumer.partitions(consumer, topic);
        consumer.assign(partitions);
        consumer.seekToBeginning(partitions);
        consuming = true;
        consumerThread = new Thread(this::consume, "sustained-consumer");
        consumerThread.setDaemon(true);
        consumerThread.start();
    }

    /** One writer: commits {@code size} messages per transaction, {@code rate} messages per second. */
    private void write(int size, double rate) {
        OutboxMessageFactory<byte[], byte[]> factory = OutboxMessageFactory.builder(settings.buckets())
                .keySerializer(new ByteArraySerializer()).valueSerializer(new ByteArraySerializer()).build();
        long every = (long) (size * 1e9 / rate);
        long next = System.nanoTime();
        ThreadLocalRandom random = ThreadLocalRandom.current();
        try {
            while (writing) {
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait);
                    continue; // woken early, or stopped: look again
                }
                List<OutboxMessage> batch = new ArrayList<>(size);
                for (int i = 0; i < size; i++) {
                    byte[] value = new byte[settings.valueBytes()];
                    random.nextBytes(value);
                    byte[] key = Order.key(random.nextInt(settings.keys())).getBytes(StandardCharsets.UTF_8);
                    batch.add(factory.create(topic, key, value));
                }
                long begin = System.nanoTime();
                for (OutboxMessage m : batch) {
                    inFlight.put(m.messageId(), begin);
                }
                try {
                    database.enqueue(batch);
                } catch (Exception e) {
                    batch.forEach(m -> inFlight.remove(m.messageId()));
                    throw e;
                }
                long commit = System.nanoTime();
                for (OutboxMessage m : batch) {
                    inFlight.replace(m.messageId(), begin, commit); // unless already consumed
                }
                committed.add(size);
                if (settings.wakeUp()) {
                    batch.stream().mapToInt(OutboxMessage::bucket).distinct().forEach(fleet::wakeUp);
                }
                next += every;
                long behind = System.nanoTime() - next;
                if (behind > MAX_WRITER_LAG.toNanos()) {
                    long missed = behind / every;
                    skipped.add(missed * size);
                    next += missed * every;
                }
            }
        } catch (Exception | Error e) {
            failure.compareAndSet(null, e);
        }
    }

    private void consume() {
        try {
            while (consuming) {
                var records = consumer.poll(Duration.ofMillis(100));
                long now = System.nanoTime();
                for (ConsumerRecord<byte[], byte[]> record : records) {
                    Header header = record.headers().lastHeader(KafkaOutboxPublisher.DEFAULT_MESSAGE_ID_HEADER);
                    UUID id = header == null ? null
                            : MessageIds.parseOrNull(new String(header.value(), StandardCharsets.UTF_8));
                    Long since = id == null ? null : inFlight.remove(id);
                    if (since == null) {
                        duplicates.increment();
                    } else {
                        consumed.increment();
                        latencies.recordValue(Math.min(MAX_LATENCY_MICROS, Math.max(0, (now - since) / 1_000)));
                    }
                }
            }
        } catch (WakeupException e) {
            // closing
        } catch (RuntimeException | Error e) {
            failure.compareAndSet(null, e);
        } finally {
            consumer.close(CloseOptions.timeout(Duration.ofSeconds(5)));
        }
    }

    /**
     * Throws if a writer, the consumer or a relay stopped on an error.
     *
     * @throws IllegalStateException with the error as its cause
     */
    void failIfStopped() {
        Throwable e = failure.get();
        if (e != null) {
            throw new IllegalStateException("the sustained load stopped: " + e, e);
        }
        if (fleet != null) {
            fleet.failIfStopped();
        }
    }

    /** Messages committed so far. */
    long committed() {
        return committed.sum();
    }

    /** Messages the relays published (acknowledged and deleted) so far. */
    long published() {
        return fleet == null ? 0 : fleet.published();
    }

    /** Distinct committed messages the consumer read so far. */
    long consumed() {
        return consumed.sum();
    }

    /** Records read that were not, or no longer, awaited: repeats (at-least-once) or strangers. */
    long duplicates() {
        return duplicates.sum();
    }

    /** Messages the writers did not commit because they fell more than {@link #MAX_WRITER_LAG} behind. */
    long skipped() {
        return skipped.sum();
    }

    /** Committed (or being committed) messages the consumer has not read yet. */
    int inFlight() {
        return inFlight.size();
    }

    /** The commit-to-consume latencies in microseconds since the previous call (or the start). */
    Histogram intervalLatencies() {
        return latencies.getIntervalHistogram();
    }

    /** Stops the writers and waits for them; the relays and the consumer go on. */
    void stopWriters() throws InterruptedException {
        writing = false;
        for (Thread writer : writers) {
            LockSupport.unpark(writer);
            writer.join(30_000);
        }
    }

    /**
     * Waits until the consumer has read every committed message, or the timeout passed.
     *
     * @return whether nothing is in flight any more
     */
    boolean awaitDrained(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!inFlight.isEmpty()) {
            failIfStopped();
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            Thread.sleep(50);
        }
        return true;
    }

    /** Stops the writers, the relays and the consumer. */
    @Override
    public void close() {
        writing = false;
        try {
            stopWriters();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (fleet != null) {
            fleet.close();
        }
        consuming = false;
        if (consumer != null) {
            try {
                consumer.wakeup();
            } catch (IllegalStateException alreadyClosed) {
                // the thread has ended
            }
        }
        if (consumerThread != null) {
            try {
                consumerThread.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
