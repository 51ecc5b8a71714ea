package io.outbox.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.OutboxMessage;
import io.outbox.embedded.EmbeddedKafkaBroker;
import io.outbox.store.jdbc.JdbcOutboxStore;
import io.outbox.store.jdbc.JdbcOutboxTables;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * Rule R13 in the starter on the Kafka side, against a real broker that checks logins
 * (SASL/PLAIN), ACLs (KRaft's StandardAuthorizer) and caps transactions at 30 s, with the
 * machine's PostgreSQL as the store: with a message pending at start, a refusal no retry heals
 * before the broker's first acknowledgement fails the context's start naming the cause, as the
 * standalone relay exits with code 3; the same refusal after a good start keeps the context up, logs
 * one ERROR line, turns the health DOWN while the relay retries, and UP again once it is lifted.
 * {@code outbox.relay.start-timeout} bounds the wait at start.
 */
@ExtendWith(OutputCaptureExtension.class)
class OutboxKafkaRefusalTest {

    private static final String URL = "jdbc:postgresql://127.0.0.1:5432/test";
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int BUCKETS = 2;
    private static final String ADMIN_PASSWORD = "admin-secret";
    private static final String ALICE_PASSWORD = "alice-secret";
    private static EmbeddedKafkaBroker broker;

    private final String schema = "r13k_" + UUID.randomUUID().toString().substring(0, 8);
    private final String topic = schema + "_topic";
    private JdbcOutboxStore owner;

    @BeforeAll
    static void startBroker() {
        broker = EmbeddedKafkaBroker.builder()
                .saslPlainWithAcls("admin", Map.of("admin", ADMIN_PASSWORD, "alice", ALICE_PASSWORD))
                .brokerProperty("transaction.max.timeout.ms", "30000")
                .start();
    }

    @AfterAll
    static void stopBroker() {
        broker.close();
    }

    private static String jaas(String user, String password) {
        return EmbeddedKafkaBroker.plainLogin(user, password);
    }

    private static void sql(String... statements) throws SQLException {
        try (Connection c = DriverManager.getConnection(URL, "postgres", ""); Statement st = c.createStatement()) {
            for (String statement : statements) {
                st.execute(statement);
            }
        }
    }

    @BeforeEach
    void schemaAndTopic() throws SQLException {
        sql("CREATE SCHEMA " + schema);
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setUrl(URL);
        dataSource.setUser("postgres");
        owner = JdbcOutboxStore.builder(dataSource).tables(JdbcOutboxTables.defaults().inSchema(schema)).build();
        owner.createSchema();
        broker.createTopic(topic, BUCKETS);
    }

    @AfterEach
    void drop() throws SQLException {
        sql("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
    }

    private void enqueue(int count) throws SQLException {
        StringSerializer s = new StringSerializer();
        List<OutboxMessage> batch = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            batch.add(OutboxMessage.create(topic, "key-" + i, "value-" + i, s, s, BUCKETS));
        }
        try (Connection c = owner.dataSource().getConnection()) {
            owner.writer().enqueue(c, batch);
        }
    }

    private long pending() {
        return owner.pendingMetrics(Duration.ofSeconds(5)).pendingCount();
    }

    /** A context on the test's schema whose relay logs in to the broker as the user, with short client timeouts. */
    private ApplicationContextRunner runner(String user, String password, String... extra) {
        List<String> properties = new ArrayList<>(List.of("spring.datasource.url=" + URL,
                "spring.datasource.username=postgres", "outbox.jdbc.schema=" + schema, "outbox.bucket-count=" + BUCKETS,
                "outbox.relay.poll-interval=100ms", "outbox.relay.error-backoff=100ms",
                "outbox.relay.max-error-backoff=300ms", "outbox.relay.start-timeout=" + WAIT.toSeconds() + "s",
                "outbox.relay.producer.bootstrap.servers=" + broker.bootstrapServers(),
                "outbox.relay.producer.security.protocol=SASL_PLAINTEXT",
                "outbox.relay.producer.sasl.mechanism=PLAIN",
                "outbox.relay.producer.sasl.jaas.config=" + jaas(user, password),
                "outbox.relay.producer.max.block.ms=3000", "outbox.relay.producer.request.timeout.ms=3000",
                "outbox.relay.producer.delivery.timeout.ms=6000"));
        properties.addAll(List.of(extra));
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                        OutboxJdbcStoreAutoConfiguration.class, OutboxAutoConfiguration.class,
                        OutboxActuatorAutoConfiguration.class))
                .withPropertyValues(properties.toArray(String[]::new));
    }

    @Test
    void r13_aTransactionTimeoutAboveTheBrokersMaximumFailsTheStart() throws SQLException {
        enqueue(1);
        runner("admin", ADMIN_PASSWORD, "outbox.relay.producer.transactions=true",
                "outbox.relay.producer.transactional.id.prefix=" + schema,
                "outbox.relay.producer.transaction.timeout.ms=60000").run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).hasStackTraceContaining("stopped before its start settled")
                            .hasStackTraceContaining("`transaction.timeout.ms` is above the broker's "
                                    + "`transaction.max.timeout.ms`")
                            .hasStackTraceContaining("The transaction timeout is larger");
                });
        assertThat(pending()).as("nothing was deleted").isEqualTo(1);
    }

    @Test
    void r13_aWrongSaslPasswordFailsTheStartWithoutShowingThePassword() throws SQLException {
        enqueue(1);
        runner("alice", "not-" + ALICE_PASSWORD).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasStackTraceContaining("stopped before its start settled")
                    .hasStackTraceContaining("SaslAuthenticationException");
            assertThat(context.getStartupFailure().getMessage()).doesNotContain(ALICE_PASSWORD);
        });
    }

    @Test
    void r13_anAclThatDeniesTheTopicFailsTheStart() throws SQLException {
        enqueue(1);
        runner("alice", ALICE_PASSWORD).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasStackTraceContaining("stopped before its start settled")
                    .hasStackTraceContaining("TopicAuthorizationException");
        });
    }

    @Test
    void r13_withNothingPendingTheStartDoesNotWaitForTheBrokerAndARefusalAtTheFirstPublishStopsTheRelay() {
        long begin = System.nanoTime();
        runner("alice", ALICE_PASSWORD).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(Duration.ofNanos(System.nanoTime() - begin)).as("settled at the first look at the buckets")
                    .isLessThan(WAIT.dividedBy(2));
            OutboxRelayLifecycle lifecycle = context.getBean(OutboxRelayLifecycle.class);
            assertThat(lifecycle.isRunning()).isTrue();

            enqueue(1);
            lifecycle.relay().wakeUp();
            OutboxHealthIndicator health = context.getBean(OutboxHealthIndicator.class);
            await().atMost(WAIT).until(() -> !lifecycle.isRunning());
            Health down = health.health();
            assertThat(down.getStatus()).isEqualTo(Status.DOWN);
            assertThat((String) down.getDetails().get("fatalError")).contains("TopicAuthorizationException");
            assertThat(pending()).isEqualTo(1);
        });
    }

    @Test
    void r13_aBrokerThatDoesNotAnswerDelaysTheStartByTheStartTimeoutOnly() throws SQLException {
        enqueue(1);
        long begin = System.nanoTime();
        runner("admin", ADMIN_PASSWORD, "outbox.relay.producer.bootstrap.servers=127.0.0.1:9",
                "outbox.relay.producer.max.block.ms=120000", "outbox.relay.start-timeout=1s",
                "outbox.relay.close-timeout=1s").run(context -> {
                    assertThat(Duration.ofNanos(System.nanoTime() - begin)).as("bounded by outbox.relay.start-timeout")
                            .isLessThan(WAIT.dividedBy(4));
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(OutboxRelayLifecycle.class).isRunning()).isTrue();
                    assertThat(pending()).isEqualTo(1);
                });
    }

    @Test
    void r13_anAclRevokedAfterAGoodStartKeepsTheContextUpLogsAnErrorAndTurnsTheHealthDownUntilItIsBack(
            CapturedOutput output) throws Exception {
        List<AclBinding> acls = List.of(aclFor(AclOperation.WRITE), aclFor(AclOperation.DESCRIBE));
        broker.grant(acls);
        enqueue(2);
        runner("alice", ALICE_PASSWORD).run(context -> {
            assertThat(context).hasNotFailed();
            OutboxHealthIndicator health = context.getBean(OutboxHealthIndicator.class);
            await().atMost(WAIT).until(() -> pending() == 0);
            assertThat(health.health().getStatus()).isEqualTo(Status.UP);

            broker.revoke(new AclBindingFilter(new ResourcePatternFilter(ResourceType.TOPIC, topic,
                    PatternType.LITERAL), AccessControlEntryFilter.ANY));
            enqueue(2);
            context.getBean(OutboxRelayLifecycle.class).relay().wakeUp();
            await().atMost(WAIT).until(() -> health.health().getDetails().containsKey("refusal"));
            Health down = health.health();
            assertThat(down.getStatus()).isEqualTo(Status.DOWN);
            @SuppressWarnings("unchecked")
            Map<String, Object> refusal = (Map<String, Object>) down.getDetails().get("refusal");
            assertThat(refusal).containsEntry("side", "Kafka");
            assertThat((String) refusal.get("error")).contains("TopicAuthorizationException");
            await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(12))
                    .until(() -> context.getBean(OutboxRelayLifecycle.class).isRunning() && pending() == 2);
            assertThat(output.getAll().lines().filter(line -> line.contains("ERROR")
                    && line.contains("the Kafka broker refuses the producer")).count())
                    .as("one ERROR line while the refusal lasts").isEqualTo(1);

            broker.grant(acls);
            await().atMost(WAIT).until(() -> pending() == 0);
            assertThat(health.health().getStatus()).isEqualTo(Status.UP);
            assertThat(health.health().getDetails()).doesNotContainKey("refusal");
        });
    }

    private AclBinding aclFor(AclOperation operation) {
        return new AclBinding(new ResourcePattern(ResourceType.TOPIC, topic, PatternType.LITERAL),
                new AccessControlEntry("User:alice", "*", operation, AclPermissionType.ALLOW));
    }
}
