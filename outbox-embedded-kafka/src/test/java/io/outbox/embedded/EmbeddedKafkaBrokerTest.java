package io.outbox.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

class EmbeddedKafkaBrokerTest {

    @Test
    void saslPlainWithAclsRefusesASuperUserWithoutPasswordAndAQuoteInAPasswordNamingThem() {
        assertThatThrownBy(() -> EmbeddedKafkaBroker.builder().saslPlainWithAcls("root", Map.of("admin", "secret")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'root'")
                .hasMessageContaining("[admin]");
        assertThatThrownBy(() -> EmbeddedKafkaBroker.builder().saslPlainWithAcls("admin", Map.of("admin", "se\"cret")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("password of admin")
                .hasMessageContaining("'se\"cret'");
        assertThat(EmbeddedKafkaBroker.plainLogin("alice", "pw")).isEqualTo("org.apache.kafka.common.security.plain."
                + "PlainLoginModule required username=\"alice\" password=\"pw\";");
    }

    @Test
    void producesAndConsumesAcrossARestartOnTheSamePortsAndDeletesItsDirectoryOnClose() throws Exception {
        Path dir;
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start()) {
            dir = broker.logDir().getParent();
            int port = broker.port();
            broker.createTopic("embedded-test", 2);
            broker.createTopic("embedded-test", 2);
            send(broker, "before");

            broker.stop();
            assertThat(broker.isRunning()).isFalse();
            broker.restart();

            assertThat(broker.port()).isEqualTo(port);
            assertThat(broker.bootstrapServers()).isEqualTo("127.0.0.1:" + port);
            send(broker, "after");
            assertThat(consumeAll(broker, 2)).containsExactlyInAnyOrder("before", "after");
            assertThatThrownBy(() -> broker.createTopic("embedded-test", 3))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("2 partitions");
        }
        assertThat(Files.exists(dir)).isFalse();
    }

    private static void send(EmbeddedKafkaBroker broker, String value) throws Exception {
        Map<String, Object> config = broker.adminConfig();
        config.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<String, String> producer =
                     new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
            producer.send(new ProducerRecord<>("embedded-test", value, value)).get();
        }
    }

    private static List<String> consumeAll(EmbeddedKafkaBroker broker, int expected) {
        Map<String, Object> config = broker.adminConfig();
        config.put(ConsumerConfig.GROUP_ID_CONFIG, "embedded-test");
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer =
                     new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(List.of("embedded-test"));
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (values.size() < expected && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    values.add(r.value());
                }
            }
        }
        return values;
    }
}
