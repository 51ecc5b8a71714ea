package io.outbox.spring.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.embedded.EmbeddedKafkaBroker;
import io.outbox.spring.Outbox;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.IllegalTransactionStateException;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The sample order service against the real PostgreSQL and the in-process Kafka broker: exactly
 * the committed orders' events reach Kafka, each once after dedup by message id, in order per
 * customer (rules E4, N1, R2, K2).
 */
@SpringBootTest(classes = OrderServiceApplication.class)
class OrderServiceSampleTest {

    static final String SUFFIX = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    static final EmbeddedKafkaBroker BROKER = EmbeddedKafkaBroker.start();

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        BROKER.createTopic(OrderService.TOPIC, 4);
        SampleDatabase.register(registry, SUFFIX, BROKER, "1s");
    }

    @AfterAll
    static void stopBroker() {
        BROKER.close();
    }

    @Autowired
    OrderService orders;
    @Autowired
    Outbox outbox;
    @Autowired
    TransactionTemplate transactions;
    @Autowired
    JdbcTemplate jdbc;

    @Test
    void e4_onlyCommittedOrdersReachKafka_oncePerMessageId_inOrderPerCustomer() {
        orders.createTable();
        List<String> committed = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            String customer = "customer-" + (i % 4);
            String orderId = "order-" + i;
            orders.placeOrder(orderId, customer, 100);
            committed.add(orderId);
            if (i == 10) {
                // Rolled back by the caller: the order and its event never exist.
                transactions.executeWithoutResult(status -> {
                    orders.placeOrder("order-rolled-back", customer, 100);
                    status.setRollbackOnly();
                });
            }
            if (i == 20) {
                // Throws after enqueue (over the credit limit): rolled back, nothing published.
                assertThatThrownBy(() -> orders.placeOrder("order-over-limit", customer, 10_000_000))
                        .isInstanceOf(OrderService.CreditLimitExceededException.class);
            }
        }
        assertThat(orders.orderCount()).isEqualTo(committed.size());

        List<TopicRecords.Received> received = TopicRecords.read(BROKER.bootstrapServers(), OrderService.TOPIC,
                committed.size(), Duration.ofSeconds(30), Duration.ofSeconds(2));

        Map<String, TopicRecords.Received> byMessageId = new LinkedHashMap<>();
        received.forEach(r -> byMessageId.putIfAbsent(r.messageId(), r));
        assertThat(byMessageId.keySet()).doesNotContainNull();
        List<String> publishedOrders = byMessageId.values().stream().map(r -> orderId(r.value())).toList();
        assertThat(publishedOrders).containsExactlyInAnyOrderElementsOf(committed);
        assertThat(publishedOrders).doesNotContain("order-rolled-back", "order-over-limit");

        Map<String, List<Integer>> perCustomer = new LinkedHashMap<>();
        byMessageId.values().stream()
                .sorted((a, b) -> a.partition() != b.partition() ? Integer.compare(a.partition(), b.partition())
                        : Long.compare(a.offset(), b.offset()))
                .forEach(r -> perCustomer.computeIfAbsent(r.key(), k -> new ArrayList<>())
                        .add(Integer.parseInt(orderId(r.value()).substring("order-".length()))));
        assertThat(perCustomer).hasSize(4);
        perCustomer.forEach((customer, ids) -> assertThat(ids).as(customer).isSorted());

        Integer pending = jdbc.queryForObject("SELECT COUNT(*) FROM sb_" + SUFFIX + "_messages", Integer.class);
        assertThat(pending).isZero();
    }

    @Test
    void e4_enqueueOutsideATransactionFails() {
        assertThatThrownBy(() -> outbox.enqueue(OrderService.TOPIC, "customer-x", "{}"))
                .isInstanceOf(IllegalTransactionStateException.class)
                .hasMessageContaining("@Transactional")
                .hasMessageContaining("never writes in auto-commit");
    }

    private static final Pattern ORDER_ID = Pattern.compile("\"orderId\":\"([^\"]+)\"");

    static String orderId(String json) {
        Matcher m = ORDER_ID.matcher(json);
        assertThat(m.find()).as(json).isTrue();
        return m.group(1);
    }
}
