package io.outbox.spring.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.embedded.EmbeddedKafkaBroker;
import io.outbox.notify.NotificationTransport;
import io.outbox.notify.OutboxNotifier;
import io.outbox.notify.redis.RedisNotificationTransport;
import io.outbox.relay.OutboxRelay;
import io.outbox.spring.Outbox;
import io.outbox.spring.OutboxAutoConfiguration;
import io.outbox.spring.OutboxJdbcStoreAutoConfiguration;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Rules N3-N5 through the starter, across application contexts as across processes: a writer
 * application (its relay off) commits an outbox message; a relay application, whose poll interval
 * is ten minutes, publishes it at once because the transport named by {@code outbox.notify.transport}
 * carried the commit's bucket from one context to the other. Each context opens its own transport,
 * as two processes would. Runs against the real PostgreSQL and Redis of this machine
 * ({@code OUTBOX_TEST_POSTGRES_URL}, {@code OUTBOX_TEST_REDIS_URI}, set by {@code scripts/test.sh}).
 */
class CrossContextWakeUpTest {

    static final EmbeddedKafkaBroker BROKER = EmbeddedKafkaBroker.start();
    static final String REDIS_URI = env("OUTBOX_TEST_REDIS_URI", "redis://127.0.0.1:6379");
    /** Longer than the test: a message the relay publishes was announced by the transport, not polled. */
    static final String POLL_INTERVAL = "10m";

    @AfterAll
    static void stopBroker() {
        BROKER.close();
    }

    @Test
    void n5_redis_aCommitInTheWriterContextWakesTheRelayContext() {
        String suffix = suffix();
        crossContextRoundTrip(suffix, "redis",
                transport -> ((RedisNotificationTransport) transport).isListening(),
                "outbox.notify.settings.uri=" + REDIS_URI, "outbox.notify.settings.channel=sb-" + suffix);
    }

    @Test
    void n5_postgres_aCommitInTheWriterContextWakesTheRelayContextThroughListenNotify() {
        String suffix = suffix();
        String channel = "sb_" + suffix;
        crossContextRoundTrip(suffix, "postgres", transport -> listening(channel),
                "outbox.notify.settings.url=" + SampleDatabase.URL,
                "outbox.notify.settings.user=" + SampleDatabase.USER, "outbox.notify.settings.channel=" + channel);
    }

    /**
     * Runs a relay context, then a writer context beside it, commits one message in the writer and
     * waits for the relay to publish it.
     *
     * @param listening whether the relay context's transport has its subscription up: a hint sent
     *     earlier would be lost (N2) and the message left to the ten-minute poll
     */
    private static void crossContextRoundTrip(String suffix, String transport, Predicate<NotificationTransport> listening,
                                              String... transportSettings) {
        String topic = "sb-wake-" + suffix;
        BROKER.createTopic(topic, 4);
        ApplicationContextRunner application = new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                        DataSourceTransactionManagerAutoConfiguration.class, OutboxJdbcStoreAutoConfiguration.class,
                        OutboxAutoConfiguration.class))
                .withPropertyValues("spring.datasource.url=" + SampleDatabase.URL,
                        "spring.datasource.username=" + SampleDatabase.USER,
                        "outbox.jdbc.table-prefix=sbx_" + suffix + "_", "outbox.create-schema=true",
                        "outbox.bucket-count=4", "outbox.notify.transport=" + transport)
                .withPropertyValues(transportSettings);
        ApplicationContextRunner relayApplication = application.withPropertyValues(
                "outbox.relay.poll-interval=" + POLL_INTERVAL, "outbox.relay.relay-id=relay-" + suffix,
                "outbox.relay.producer.bootstrap.servers=" + BROKER.bootstrapServers());
        ApplicationContextRunner writerApplication = application.withPropertyValues("outbox.relay.enabled=false");

        relayApplication.run(relayContext -> {
            assertThat(relayContext).hasNotFailed();
            assertThat(relayContext).hasSingleBean(NotificationTransport.class);
            OutboxRelay relay = relayContext.getBean(OutboxRelay.class);
            await().atMost(Duration.ofSeconds(30)).until(() -> relay.ownedBuckets().size() == 4);
            writerApplication.run(writerContext -> {
                assertThat(writerContext).hasNotFailed();
                assertThat(writerContext).doesNotHaveBean(OutboxRelay.class);
                assertThat(writerContext.getBean(NotificationTransport.class).name()).isEqualTo(transport);
                Outbox outbox = writerContext.getBean(Outbox.class);
                TransactionTemplate tx = new TransactionTemplate(writerContext.getBean(PlatformTransactionManager.class));
                NotificationTransport relaySide = relayContext.getBean(NotificationTransport.class);
                await().atMost(Duration.ofSeconds(20)).until(() -> listening.test(relaySide));

                tx.executeWithoutResult(status -> outbox.enqueue(topic, "customer-x", "{\"order\":\"x-1\"}"));

                List<TopicRecords.Received> received = TopicRecords.read(BROKER.bootstrapServers(), topic, 1,
                        Duration.ofSeconds(60), Duration.ZERO);
                assertThat(received).as("published at once, though the relay polls every " + POLL_INTERVAL)
                        .extracting(TopicRecords.Received::value).containsExactly("{\"order\":\"x-1\"}");
                assertThat(relayContext.getBean(OutboxNotifier.class).stats().received()).as("hints the relay context received")
                        .isGreaterThanOrEqualTo(1);
            });
        });
    }

    /** Whether a session of the test database waits on {@code LISTEN} for the channel. */
    private static boolean listening(String channel) {
        try (Connection c = DriverManager.getConnection(SampleDatabase.URL, SampleDatabase.USER,
                System.getenv("OUTBOX_TEST_POSTGRES_PASSWORD"));
             PreparedStatement query = c.prepareStatement(
                     "SELECT count(*) FROM pg_stat_activity WHERE query = ? AND state = 'idle'")) {
            query.setString(1, "LISTEN \"" + channel + "\"");
            try (ResultSet rows = query.executeQuery()) {
                rows.next();
                return rows.getInt(1) == 1;
            }
        } catch (SQLException e) {
            throw new IllegalStateException("reading pg_stat_activity failed: " + e, e);
        }
    }

    private static String suffix() {
        return UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }
}
