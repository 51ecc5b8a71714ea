package io.outbox.demo;

import io.outbox.MessageIds;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Reads the whole topic from the beginning on its own thread and hands every record to the
 * {@link DeliveryChecker}. It assigns itself every partition (no consumer group, nothing
 * committed), so it reads what is there whoever else consumes the topic.
 */
final class OrderConsumer implements AutoCloseable {

    private final KafkaConsumer<byte[], byte[]> consumer;
    private final String messageIdHeader;
    private final DeliveryChecker checker;
    private final Thread thread;
    private volatile boolean stopped;
    private volatile Throwable error;

    private OrderConsumer(KafkaConsumer<byte[], byte[]> consumer, String messageIdHeader, DeliveryChecker checker) {
        this.consumer = consumer;
        this.messageIdHeader = messageIdHeader;
        this.checker = checker;
        this.thread = new Thread(this::run, "demo-consumer");
        this.thread.setDaemon(true);
    }

    /** Assigns the topic's partitions, seeks to their beginning and starts reading. */
    static OrderConsumer start(String bootstrapServers, String topic, String messageIdHeader,
                               DeliveryChecker checker) {
        return start(bootstrapServers, topic, messageIdHeader, checker, false);
    }

    /**
     * Starts the reader; with {@code readCommitted} it reads with
     * {@code isolation.level=read_committed}, so it sees only committed transactions (K7).
     */
    static OrderConsumer start(String bootstrapServers, String topic, String messageIdHeader,
                               DeliveryChecker checker, boolean readCommitted) {
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ConsumerConfig.CLIENT_ID_CONFIG, "outbox-demo-checker",
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, readCommitted ? "read_committed" : "read_uncommitted",
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
                ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5_000), new ByteArrayDeserializer(), new ByteArrayDeserializer());
        try {
            List<TopicPartition> partitions = partitions(consumer, topic);
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
        } catch (RuntimeException e) {
            consumer.close();
            throw e;
        }
        OrderConsumer reader = new OrderConsumer(consumer, messageIdHeader, checker);
        reader.thread.start();
        return reader;
    }

    /**
     * The topic's partitions. A topic created a moment ago may not be in the metadata the broker
     * answers with yet ({@code partitionsFor} then returns an empty list), so ask again for up to
     * 30 s rather than assign nothing.
     */
    static List<TopicPartition> partitions(KafkaConsumer<byte[], byte[]> consumer, String topic) {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic, Duration.ofSeconds(30)).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            if (!partitions.isEmpty()) {
                return partitions;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("topic '" + topic + "' has no partitions in the broker's metadata"
                        + " after 30 s");
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for topic '" + topic + "'", e);
            }
        }
    }

    private void run() {
        try {
            while (!stopped) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
                long now = Order.nowMicros();
                for (ConsumerRecord<byte[], byte[]> record : records) {
                    checker.accept(messageId(record), record.value(), now);
                }
            }
        } catch (WakeupException e) {
            // closing
        } catch (RuntimeException e) {
            error = e;
        } finally {
            consumer.close(CloseOptions.timeout(Duration.ofSeconds(5)));
        }
    }

    private UUID messageId(ConsumerRecord<byte[], byte[]> record) {
        Header header = record.headers().lastHeader(messageIdHeader);
        if (header == null || header.value() == null) {
            return null;
        }
        return MessageIds.parseOrNull(new String(header.value(), StandardCharsets.UTF_8));
    }

    /**
     * Throws if the consumer stopped on an error.
     *
     * @throws IllegalStateException with the error as its cause
     */
    void failIfStopped() {
        Throwable e = error;
        if (e != null) {
            throw new IllegalStateException("the checking consumer stopped: " + e, e);
        }
    }

    @Override
    public void close() {
        stopped = true;
        try {
            consumer.wakeup();
        } catch (IllegalStateException alreadyClosed) {
            // the thread has ended
        }
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
