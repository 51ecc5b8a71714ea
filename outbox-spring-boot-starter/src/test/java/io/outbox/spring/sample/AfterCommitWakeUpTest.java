package io.outbox.spring.sample;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.embedded.EmbeddedKafkaBroker;
import io.outbox.spring.OutboxRelayMonitor;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.awaitility.Awaitility.await;

/**
 * Rule N1/R8 through the starter: with a poll interval of ten minutes, an order's event still
 * reaches Kafka at once, because the commit hands its bucket to the relay.
 */
@SpringBootTest(classes = OrderServiceApplication.class)
class AfterCommitWakeUpTest {

    static final String SUFFIX = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    static final EmbeddedKafkaBroker BROKER = EmbeddedKafkaBroker.start();

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        BROKER.createTopic(OrderService.TOPIC, 4);
        SampleDatabase.register(registry, SUFFIX, BROKER, "10m");
    }

    @AfterAll
    static void stopBroker() {
        BROKER.close();
    }

    @Autowired
    OrderService orders;
    @Autowired
    OutboxRelayMonitor monitor;

    @Test
    void n1_commitWakesTheRelay_noPollNeeded() {
        orders.createTable();
        await().atMost(Duration.ofSeconds(30)).until(() -> monitor.ownedBuckets().size() == 4);
        orders.placeOrder("order-wake", "customer-w", 100);
        List<TopicRecords.Received> received = TopicRecords.read(BROKER.bootstrapServers(), OrderService.TOPIC, 1,
                Duration.ofSeconds(30), Duration.ZERO);
        assertThat(received).extracting(r -> OrderServiceSampleTest.orderId(r.value())).containsExactly("order-wake");
    }
}
