package io.outbox.relay;

import io.outbox.relay.kafka.KafkaOutboxPublisher;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/** Reads a whole topic from the beginning up to its end offsets at the time of the call. */
final class TopicReader {

    private TopicReader() {
    }

    static List<ConsumerRecord<byte[], byte[]>> readAll(String bootstrapServers, String topic) {
        return readAll(bootstrapServers, topic, "read_uncommitted");
    }

    /**
     * Reads with the given {@code isolation.level}; with {@code read_committed} up to the last
     * stable offset, so a transaction still open stops the read there.
     */
    static List<ConsumerRecord<byte[], byte[]>> readAll(String bootstrapServers, String topic, String isolation) {
        return readAll(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers), topic, isolation);
    }

    /** Reads uncommitted with these client settings (bootstrap servers, a login) added to the reader's own. */
    static List<ConsumerRecord<byte[], byte[]>> readAll(Map<String, Object> client, String topic) {
        return readAll(client, topic, "read_uncommitted");
    }

    private static List<ConsumerRecord<byte[], byte[]>> readAll(Map<String, Object> client, String topic,
                                                                String isolation) {
        Map<String, Object> config = new HashMap<>(client);
        config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5000);
        config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        try (KafkaConsumer<byte[], byte[]> consumer =
                     new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic, Duration.ofSeconds(30)).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions, Duration.ofSeconds(30));
            List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
            while (partitions.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("could not read " + topic + " up to " + end);
                }
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
            }
            return records;
        }
    }

    /** The message ids of the records {@link #readAll(String, String, String)} returns, in their order. */
    static List<UUID> messageIds(String bootstrapServers, String topic, String isolation) {
        return readAll(bootstrapServers, topic, isolation).stream().map(TopicReader::messageId).toList();
    }

    /** The message id a record carries in its last header of that name. */
    static UUID messageId(ConsumerRecord<byte[], byte[]> record, String header) {
        Header h = record.headers().lastHeader(header);
        return UUID.fromString(new String(h.value(), StandardCharsets.UTF_8));
    }

    static UUID messageId(ConsumerRecord<byte[], byte[]> record) {
        return messageId(record, KafkaOutboxPublisher.DEFAULT_MESSAGE_ID_HEADER);
    }
}
