package io.outbox.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/** The outbox health indicator and the {@code outbox} endpoint on a real (H2) JDBC store. */
class OutboxActuatorTest {

    private static ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                        DataSourceTransactionManagerAutoConfiguration.class, OutboxJdbcStoreAutoConfiguration.class,
                        OutboxAutoConfiguration.class, OutboxActuatorAutoConfiguration.class))
                .withPropertyValues("outbox.relay.producer.bootstrap.servers=127.0.0.1:9", "outbox.create-schema=true",
                        "spring.datasource.url=jdbc:h2:mem:act" + UUID.randomUUID().toString().replace("-", "")
                                + ";DB_CLOSE_DELAY=-1");
    }

    private static void enqueue(ApplicationContext context, String key, int count) {
        Outbox outbox = context.getBean(Outbox.class);
        new TransactionTemplate(context.getBean(PlatformTransactionManager.class)).executeWithoutResult(s -> {
            for (int i = 0; i < count; i++) {
                outbox.enqueue("health", key, "v" + i);
            }
        });
    }

    @Test
    void health_upWhileTheRelayRunsAndOwnsBuckets_downOnceItStopped() {
        runner().run(context -> {
            OutboxHealthIndicator indicator = context.getBean(OutboxHealthIndicator.class);
            await().atMost(Duration.ofSeconds(20)).until(
                    () -> ((List<?>) indicator.health().getDetails().get("ownedBuckets")).size() == 8);
            Health up = indicator.health();
            assertThat(up.getStatus()).isEqualTo(Status.UP);
            assertThat(up.getDetails()).containsEntry("relayRunning", true).containsEntry("pending", 0L)
                    .containsKeys("relayId", "stalledBuckets", "oldestPendingAge");

            context.getBean(OutboxRelayLifecycle.class).stop();
            Health down = indicator.health();
            assertThat(down.getStatus()).isEqualTo(Status.DOWN);
            assertThat(down.getDetails()).containsEntry("relayRunning", false);
        });
    }

    @Test
    void health_downWhenTheOldestPendingMessageIsOlderThanTheThreshold() {
        runner().withPropertyValues("outbox.relay.enabled=false", "outbox.health.oldest-pending-threshold=200ms")
                .run(context -> {
                    OutboxHealthIndicator indicator = context.getBean(OutboxHealthIndicator.class);
                    assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);
                    enqueue(context, "k", 1);
                    assertThat(indicator.health().getDetails()).containsEntry("pending", 1L)
                            .containsEntry("relayEnabled", false);
                    await().atMost(Duration.ofSeconds(10))
                            .until(() -> indicator.health().getStatus().equals(Status.DOWN));
                    assertThat(indicator.health().getDetails()).containsEntry("oldestPendingThreshold", "PT0.2S");
                });
    }

    @Test
    void health_badThreshold_failsNamingPropertyAndValue() {
        runner().withPropertyValues("outbox.health.oldest-pending-threshold=0s").run(context ->
                assertThat(OutboxAutoConfigurationTest.allMessages(context.getStartupFailure()))
                        .contains("outbox.health.oldest-pending-threshold must be positive but was PT0S"));
    }

    @Test
    void c4_endpointListsAndReplaysDeadLetters() {
        runner().withPropertyValues("outbox.relay.enabled=false").run(context -> {
            Outbox outbox = context.getBean(Outbox.class);
            io.outbox.OutboxMessage m = new TransactionTemplate(context.getBean(PlatformTransactionManager.class))
                    .execute(s -> outbox.enqueue("health", "poison", "bad"));
            io.outbox.spi.DeadLetters store = context.getBean(io.outbox.spi.DeadLetters.class);
            java.time.Instant now = java.time.Instant.now().truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
            assertThat(store.moveToDeadLetters(m.bucket(), m.messageId(), new io.outbox.spi.DeadLetterFailure(
                    "record too large", "org.apache.kafka.common.errors.RecordTooLargeException", 5, now, now,
                    "relay-1"))).isTrue();
            OutboxEndpoint endpoint = context.getBean(OutboxEndpoint.class);
            assertThat(endpoint.outbox().pending()).isEmpty();
            assertThat(endpoint.deadLetters(OutboxEndpoint.DEAD_LETTERS)).singleElement().satisfies(d -> {
                assertThat(d.messageId()).isEqualTo(m.messageId());
                assertThat(d.reason()).isEqualTo("record too large");
                assertThat(d.attempts()).isEqualTo(5);
            });
            assertThat(endpoint.replay(m.messageId().toString())).containsEntry("replayed", true);
            assertThat(endpoint.deadLetters(OutboxEndpoint.DEAD_LETTERS)).isEmpty();
            assertThat(endpoint.outbox().pending()).containsEntry(m.bucket(), new OutboxEndpoint.BucketPending(1, false));
            assertThat(endpoint.replay(m.messageId().toString())).containsEntry("replayed", false);
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> endpoint.replay("not-a-uuid"))
                    .isInstanceOf(org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException.class)
                    .hasMessageContaining("not-a-uuid");
        });
    }

    @Test
    void endpoint_reportsPendingPerBucket() {
        runner().withPropertyValues("outbox.relay.enabled=false").run(context -> {
            enqueue(context, "customer-a", 3);
            Outbox outbox = context.getBean(Outbox.class);
            OutboxEndpoint.Report report = context.getBean(OutboxEndpoint.class).outbox();
            int bucket = io.outbox.OutboxMessage.create("health", "customer-a", "x",
                    new org.apache.kafka.common.serialization.StringSerializer(),
                    new org.apache.kafka.common.serialization.StringSerializer(), outbox.bucketCount()).bucket();
            assertThat(report.pending()).containsOnlyKeys(bucket);
            assertThat(report.pending().get(bucket)).isEqualTo(new OutboxEndpoint.BucketPending(3, false));
            assertThat(report.relayRunning()).isFalse();
            assertThat(report.bucketCount()).isEqualTo(8);

            enqueue(context, "customer-a", OutboxEndpoint.PENDING_COUNT_CAP);
            assertThat(context.getBean(OutboxEndpoint.class).outbox().pending().get(bucket))
                    .isEqualTo(new OutboxEndpoint.BucketPending(OutboxEndpoint.PENDING_COUNT_CAP, true));
        });
    }
}
