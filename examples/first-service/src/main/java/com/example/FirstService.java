package com.example;

import io.outbox.OutboxMessage;
import io.outbox.embedded.EmbeddedKafkaBroker;
import io.outbox.relay.OutboxRelay;
import io.outbox.relay.RelayOptions;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.store.jdbc.JdbcOutboxStore;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.h2.jdbcx.JdbcDataSource;

public class FirstService {
    public static void main(String[] args) throws Exception {
        JdbcDataSource db = new JdbcDataSource();
        db.setURL("jdbc:h2:mem:shop;DB_CLOSE_DELAY=-1");
        RelayOptions options = RelayOptions.builder().bucketCount(8).build();
        try (EmbeddedKafkaBroker kafka = EmbeddedKafkaBroker.start();
             JdbcOutboxStore store = JdbcOutboxStore.builder(db).build()) {
            store.createSchema();
            try (Connection c = db.getConnection(); Statement sql = c.createStatement()) {
                sql.execute("CREATE TABLE orders (id VARCHAR(20) PRIMARY KEY, total INT)");
                c.setAutoCommit(false);
                sql.execute("INSERT INTO orders VALUES ('order-1', 42)");          // the business row
                store.writer().enqueue(c, OutboxMessage.create("orders", "order-1", "{\"total\":42}",
                        new StringSerializer(), new StringSerializer(), options.bucketCount()));
                c.commit();                                                       // both, or neither
            }
            Map<String, Object> kafkaConfig = Map.of("bootstrap.servers", kafka.bootstrapServers());
            try (KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(kafkaConfig).build();
                 OutboxRelay relay = new OutboxRelay(store, publisher, options);
                 KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(
                         "bootstrap.servers", kafka.bootstrapServers(), "group.id", "first-service",
                         "auto.offset.reset", "earliest"), new StringDeserializer(), new StringDeserializer())) {
                relay.start();                                                    // publishes, then deletes
                consumer.subscribe(List.of("orders"));
                for (int polls = 0; polls < 60; polls++) {
                    for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofSeconds(1))) {
                        byte[] id = record.headers().lastHeader(KafkaOutboxPublisher.DEFAULT_MESSAGE_ID_HEADER).value();
                        System.out.printf("received %s=%s %s=%s%n", record.key(), record.value(),
                                KafkaOutboxPublisher.DEFAULT_MESSAGE_ID_HEADER, new String(id, StandardCharsets.UTF_8));
                        return;
                    }
                }
                throw new IllegalStateException("no record arrived within 60 s");
            }
        }
    }
}
