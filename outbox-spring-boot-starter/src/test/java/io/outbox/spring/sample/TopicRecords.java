package io.outbox.spring.sample;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;

/** Reads every record of a topic from the beginning, for tests. */
final class TopicRecords {

    /** One record: its key, value and message-id header. */
    record Received(String key, String value, String messageId, int partition, long offset) {
    }

    private TopicRecords() {
    }

    /**
     * Reads until {@code expected} records arrived, then {@code quiet} longer to catch extras.
     */
    static List<Received> read(String bootstrap, String topic, int expected, Duration timeout, Duration quiet) {
        Map<String, Object> config = Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.GROUP_ID_CONFIG, "test-" + UUID.randomUUID(),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        List<Received> received = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer =
                     new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + timeout.toNanos();
            long quietEnd = Long.MAX_VALUE;
            while (System.nanoTime() < Math.min(deadline, quietEnd)) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    Header id = r.headers().lastHeader("x-outbox-message-id");
                    received.add(new Received(r.key(), r.value(),
                            id == null ? null : new String(id.value(), StandardCharsets.UTF_8),
                            r.partition(), r.offset()));
                }
                if (received.size() >= expected && quietEnd == Long.MAX_VALUE) {
                    quietEnd = System.nanoTime() + quiet.toNanos();
                }
            }
        }
        return received;
    }
}
