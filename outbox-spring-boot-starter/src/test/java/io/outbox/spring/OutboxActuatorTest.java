package io.outbox.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.outbox.OutboxMessage;
import io.outbox.notify.NotificationTransport;
import io.outbox.relay.testing.SwitchedTransport;
import io.outbox.spi.DeadLetterFailure;
import io.outbox.spi.DeadLetters;
import io.outbox.spi.OutboxStore;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
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
                // 127.0.0.1:9 answers nobody: the periodic broker check is off but where a test turns it on
                .withPropertyValues("outbox.relay.producer.bootstrap.servers=127.0.0.1:9", "outbox.create-schema=true",
                        "outbox.health.broker-check-enabled=false",
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

    /** 127.0.0.1:9 answers nobody, so the pending message's publish names the servers. */
    @Test
    void health_downWhileNoBrokerOfTheBootstrapServersAnswers() {
        runner().withPropertyValues("outbox.relay.producer.max.block.ms=300", "outbox.relay.error-backoff=100ms",
                "outbox.relay.max-error-backoff=300ms").run(context -> {
                    OutboxHealthIndicator indicator = context.getBean(OutboxHealthIndicator.class);
                    enqueue(context, "k", 1);
                    context.getBean(io.outbox.relay.OutboxRelay.class).wakeUp();
                    await().atMost(Duration.ofSeconds(60))
                            .until(() -> indicator.health().getDetails().containsKey("brokerUnreachable"));
                    Health down = indicator.health();
                    assertThat(down.getStatus()).isEqualTo(Status.DOWN);
                    assertThat((String) down.getDetails().get("brokerUnreachable"))
                            .contains("bootstrap.servers=127.0.0.1:9", "no successful contact");
                    assertThat(down.getDetails()).containsEntry("relayRunning", true);
                });
    }

    /**
     * The periodic broker check: a relay with nothing to publish never meets the missing broker, the
     * check does, so the health turns DOWN once no broker answered for the threshold.
     */
    @Test
    void health_downWhileIdleOnceNoBrokerAnsweredThePeriodicCheckForTheThreshold() {
        runner().withPropertyValues("outbox.health.broker-check-enabled=true",
                "outbox.health.broker-unreachable-threshold=600ms").run(context -> {
                    OutboxHealthIndicator indicator = context.getBean(OutboxHealthIndicator.class);
                    assertThat(context).hasSingleBean(OutboxBrokerCheck.class);
                    await().atMost(Duration.ofSeconds(30))
                            .until(() -> indicator.health().getDetails().containsKey("brokerUnreachable"));
                    Health down = indicator.health();
                    assertThat(down.getStatus()).isEqualTo(Status.DOWN);
                    assertThat((String) down.getDetails().get("brokerUnreachable"))
                            .contains("no broker of bootstrap.servers=127.0.0.1:9 answered the periodic check for",
                                    "(threshold 600 ms)");
                    assertThat(context.getBean(io.outbox.relay.OutboxRelay.class).brokerUnreachable())
                            .as("the relay had nothing to publish").isEmpty();
                });
    }

    @Test
    void health_brokerCheck_offByProperty_andOnlyWithARelay() {
        runner().run(context -> assertThat(context).doesNotHaveBean(OutboxBrokerCheck.class));
        runner().withPropertyValues("outbox.health.broker-check-enabled=true", "outbox.relay.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(OutboxBrokerCheck.class));
    }

    @Test
    void health_badBrokerThreshold_failsNamingPropertyAndValue() {
        runner().withPropertyValues("outbox.health.broker-check-enabled=true",
                "outbox.health.broker-unreachable-threshold=-1s").run(context ->
                assertThat(OutboxAutoConfigurationTest.allMessages(context.getStartupFailure()))
                        .contains("outbox.health.broker-unreachable-threshold must be positive but was PT-1S"));
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

    /**
     * N6: the state of the transport that wakes the relay is a health detail and a meter; a lost
     * listening connection leaves the health UP, since the relay polls meanwhile (N4).
     */
    @Test
    void n6_healthAndMetersShowTheNotificationTransportsConnection_downStaysUp() {
        SwitchedTransport transport = new SwitchedTransport();
        runner().withBean(NotificationTransport.class, () -> transport)
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .run(context -> {
                    OutboxHealthIndicator indicator = context.getBean(OutboxHealthIndicator.class);
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    transport.up();
                    Health up = indicator.health();
                    assertThat(up.getDetails().get("notifications")).isEqualTo(Map.of("transport",
                            SwitchedTransport.NAME, "connected", true, "since", transport.state().since().toString()));
                    assertThat(registry.get("outbox.notify.connected").tag("transport", SwitchedTransport.NAME).gauge()
                            .value()).isEqualTo(1);

                    transport.down();
                    Health down = indicator.health();
                    assertThat(down.getDetails().get("notifications")).isEqualTo(Map.of("transport",
                            SwitchedTransport.NAME, "connected", false, "since", transport.state().since().toString()));
                    assertThat(down.getStatus()).as("the relay polls meanwhile: latency, not health")
                            .isEqualTo(Status.UP);
                    assertThat(registry.get("outbox.notify.connected").gauge().value()).isZero();
                    assertThat(registry.get("outbox.notify.connection.losses").counter().count()).isEqualTo(1);
                });
    }

    @Test
    void health_badThreshold_failsNamingPropertyAndValue() {
        runner().withPropertyValues("outbox.health.oldest-pending-threshold=0s").run(context ->
                assertThat(OutboxAutoConfigurationTest.allMessages(context.getStartupFailure()))
                        .contains("outbox.health.oldest-pending-threshold must be positive but was PT0S"));
    }

    @Test
    void health_showsTheFatalErrorWithCredentialsHidden() {
        runner().run(context -> {
            context.getBean(OutboxRelayMonitor.class).onTerminated(new IllegalStateException(
                    "login to postgresql://app:pw-1@db/x failed; password=pw-2"));
            Health health = context.getBean(OutboxHealthIndicator.class).health();
            assertThat(String.valueOf(health.getDetails().get("fatalError"))).doesNotContain("pw-1", "pw-2")
                    .contains("postgresql://app:[hidden]@db/x", "password=[hidden]");
        });
    }

    @Test
    void c4_endpointListsAndReplaysDeadLetters() {
        runner().withPropertyValues("outbox.relay.enabled=false").run(context -> {
            Outbox outbox = context.getBean(Outbox.class);
            io.outbox.OutboxMessage m = new TransactionTemplate(context.getBean(PlatformTransactionManager.class))
                    .execute(s -> outbox.enqueue("health", "poison", "bad"));
            DeadLetters dead = context.getBean(OutboxStore.class).deadLetters().orElseThrow();
            java.time.Instant now = java.time.Instant.now().truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
            assertThat(dead.moveToDeadLetters(m.bucket(), m.messageId(), new DeadLetterFailure(
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
    void c4_endpointHidesCredentialsInStoredTextAndTakesOnlyCanonicalIds() {
        runner().withPropertyValues("outbox.relay.enabled=false").run(context -> {
            Outbox outbox = context.getBean(Outbox.class);
            OutboxMessage m = new TransactionTemplate(context.getBean(PlatformTransactionManager.class))
                    .execute(s -> outbox.enqueue("health", "poison", "bad"));
            DeadLetters store = context.getBean(OutboxStore.class).deadLetters().orElseThrow();
            Instant now = Instant.now();
            String reason = "login to postgresql://app:url-pw-1@db/x failed; password=kv-pw-2 secret: colon-pw-3 "
                    + "\u001b[2J";
            assertThat(store.moveToDeadLetters(m.bucket(), m.messageId(), new DeadLetterFailure(reason,
                    "java.sql.SQLException", 5, now, now, "relay-1"))).isTrue();
            OutboxEndpoint endpoint = context.getBean(OutboxEndpoint.class);
            assertThat(endpoint.deadLetters(OutboxEndpoint.DEAD_LETTERS)).singleElement().satisfies(d ->
                    assertThat(d.reason()).as("redacted, otherwise as stored: JSON escapes it").isEqualTo(
                            "login to postgresql://app:[hidden]@db/x failed; password=[hidden] secret: [hidden]"
                                    + " \u001b[2J"));
            String id = m.messageId().toString();
            for (String bad : List.of("1-1-1-1-1", id.substring(0, 35), id.substring(1))) {
                assertThatThrownBy(() -> endpoint.replay(bad))
                        .isInstanceOf(InvalidEndpointRequestException.class)
                        .hasMessageContaining("not a message id: '" + bad + "'");
            }
            assertThat(endpoint.deadLetters(OutboxEndpoint.DEAD_LETTERS)).as("nothing replayed").hasSize(1);
            assertThat(endpoint.replay(id.toUpperCase(Locale.ROOT))).containsEntry("replayed", true);
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
