package io.outbox.spring.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.OutboxMessage;
import io.outbox.embedded.EmbeddedKafkaBroker;
import io.outbox.spring.Outbox;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Rule R9 through the starter: closing the application context while the relay publishes loses
 * nothing (every message is on Kafka or still in the table) and releases the leases and the
 * heartbeat (C3), so a new instance takes over at once and delivers the rest.
 */
class GracefulShutdownTest {

    static final String SUFFIX = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    static final EmbeddedKafkaBroker BROKER = EmbeddedKafkaBroker.start();
    static final int TRANSACTIONS = 40;
    static final int PER_TRANSACTION = 500;

    @AfterAll
    static void stopBroker() {
        BROKER.close();
    }

    private static ConfigurableApplicationContext start() {
        Map<String, Object> props = new HashMap<>();
        props.put("spring.datasource.url", SampleDatabase.URL);
        props.put("spring.datasource.username", SampleDatabase.USER);
        props.put("spring.kafka.bootstrap-servers", BROKER.bootstrapServers());
        props.put("sample.orders-table", "sb_orders_" + SUFFIX);
        props.put("outbox.jdbc.table-prefix", "sb_" + SUFFIX + "_");
        props.put("outbox.create-schema", "true");
        props.put("outbox.bucket-count", "4");
        props.put("outbox.relay.batch-size", "20");
        props.put("outbox.relay.poll-interval", "200ms");
        props.put("spring.main.web-application-type", "none"); // a web server on the test class path: no port here
        return new SpringApplicationBuilder(OrderServiceApplication.class).properties(props).run();
    }

    @Test
    void r9_closingTheContextWithPublishesInFlight_losesNothing_releasesLeases() {
        BROKER.createTopic("shutdown", 4);
        Set<String> all = new HashSet<>();
        String messages = "sb_" + SUFFIX + "_messages";
        String leases = "sb_" + SUFFIX + "_leases";
        String relays = "sb_" + SUFFIX + "_relays";
        JdbcTemplate jdbc;
        ConfigurableApplicationContext first = start();
        try {
            jdbc = new JdbcTemplate(first.getBean(javax.sql.DataSource.class));
            Outbox outbox = first.getBean(Outbox.class);
            TransactionTemplate tx = first.getBean(TransactionTemplate.class);
            for (int t = 0; t < TRANSACTIONS; t++) {
                int base = t * PER_TRANSACTION;
                tx.executeWithoutResult(status -> {
                    for (int i = 0; i < PER_TRANSACTION; i++) {
                        OutboxMessage m = outbox.enqueue("shutdown", "key-" + ((base + i) % 16), "m" + (base + i));
                        all.add(m.messageId().toString());
                    }
                });
            }
            JdbcTemplate db = jdbc;
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(5))
                    .until(() -> count(db, messages) < all.size());
        } finally {
            first.close();
        }
        // The DataSource of the first context is closed; read with a fresh one of the second.
        ConfigurableApplicationContext second = null;
        try {
            JdbcTemplate probe = new JdbcTemplate(new org.springframework.jdbc.datasource.DriverManagerDataSource(
                    SampleDatabase.URL, SampleDatabase.USER, ""));
            Set<String> pending = new HashSet<>(probe.queryForList("SELECT message_id::text FROM " + messages,
                    String.class));
            assertThat(probe.queryForObject("SELECT COUNT(*) FROM " + leases + " WHERE owner IS NOT NULL",
                    Integer.class)).as("leases released on close").isZero();
            assertThat(probe.queryForObject("SELECT COUNT(*) FROM " + relays, Integer.class))
                    .as("heartbeat removed on close").isZero();

            List<TopicRecords.Received> published = TopicRecords.read(BROKER.bootstrapServers(), "shutdown",
                    all.size() - pending.size(), Duration.ofSeconds(30), Duration.ofSeconds(1));
            Set<String> onKafka = new HashSet<>();
            published.forEach(r -> onKafka.add(r.messageId()));
            Set<String> accounted = new HashSet<>(onKafka);
            accounted.addAll(pending);
            assertThat(accounted).as("every message on Kafka or still pending").containsAll(all);
            assertThat(pending).as("the context closed while messages were still to publish").isNotEmpty();
            System.out.printf("graceful shutdown: %d of %d published before close, %d pending after it%n",
                    onKafka.size(), all.size(), pending.size());

            second = start();
            await().atMost(Duration.ofSeconds(60)).until(() -> count(probe, messages) == 0);
            Set<String> finallyOnKafka = new HashSet<>();
            TopicRecords.read(BROKER.bootstrapServers(), "shutdown", all.size(), Duration.ofSeconds(30),
                    Duration.ofSeconds(1)).forEach(r -> finallyOnKafka.add(r.messageId()));
            assertThat(finallyOnKafka).containsExactlyInAnyOrderElementsOf(all);
        } finally {
            if (second != null) {
                second.close();
            }
        }
    }

    private static int count(JdbcTemplate jdbc, String table) {
        Integer n = jdbc.queryForObject("SELECT COUNT(*) FROM " + table, Integer.class);
        return n == null ? 0 : n;
    }
}
