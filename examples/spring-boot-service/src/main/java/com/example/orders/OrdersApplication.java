package com.example.orders;

import io.outbox.embedded.EmbeddedKafkaBroker;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

@SpringBootApplication
public class OrdersApplication {
    public static void main(String[] args) throws Exception {
        try (EmbeddedKafkaBroker kafka = EmbeddedKafkaBroker.start();
             ConfigurableApplicationContext app = new SpringApplicationBuilder(OrdersApplication.class)
                     .properties("spring.kafka.bootstrap-servers=" + kafka.bootstrapServers())
                     .run(args);                                                // the starter's relay starts with it
             KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(
                     "bootstrap.servers", kafka.bootstrapServers(), "group.id", "spring-boot-service",
                     "auto.offset.reset", "earliest"), new StringDeserializer(), new StringDeserializer())) {
            app.getBean(OrderService.class).placeOrder("order-1", 42);          // commits; the relay publishes
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
