package io.outbox.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.store.jdbc.JdbcOutboxStore;
import io.outbox.store.jdbc.JdbcOutboxTables;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Rule R13 in the starter, against the machine's PostgreSQL: a role without grants on the outbox's
 * tables fails the context's start; grants revoked after a good start turn the health DOWN with the
 * refusal while the relay retries, and UP again once they are back.
 */
class OutboxRefusalTest {

    private static final String URL = "jdbc:postgresql://127.0.0.1:5432/test";
    private final String schema = "r13_" + UUID.randomUUID().toString().substring(0, 8);
    private final String role = schema + "_role";
    private final String grant = "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA " + schema + " TO "
            + role;

    private static void sql(String... statements) throws SQLException {
        try (Connection c = DriverManager.getConnection(URL, "postgres", ""); Statement st = c.createStatement()) {
            for (String statement : statements) {
                st.execute(statement);
            }
        }
    }

    @BeforeEach
    void schemaAndRole() throws SQLException {
        sql("CREATE SCHEMA " + schema, "CREATE ROLE " + role + " LOGIN", "GRANT USAGE ON SCHEMA " + schema + " TO "
                + role);
        PGSimpleDataSource owner = new PGSimpleDataSource();
        owner.setUrl(URL);
        owner.setUser("postgres");
        JdbcOutboxStore.builder(owner).tables(JdbcOutboxTables.defaults().inSchema(schema)).build().createSchema();
    }

    @AfterEach
    void drop() throws SQLException {
        sql("DROP SCHEMA IF EXISTS " + schema + " CASCADE", "DROP ROLE IF EXISTS " + role);
    }

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                        OutboxJdbcStoreAutoConfiguration.class, OutboxAutoConfiguration.class,
                        OutboxActuatorAutoConfiguration.class))
                // Nothing is pending: the producer is never used; nor is the broker asked by the health.
                .withPropertyValues("outbox.relay.producer.bootstrap.servers=127.0.0.1:9",
                        "outbox.health.broker-check-enabled=false",
                        "spring.datasource.url=" + URL, "spring.datasource.username=" + role,
                        "outbox.jdbc.schema=" + schema, "outbox.relay.error-backoff=100ms",
                        "outbox.relay.max-error-backoff=300ms");
    }

    @Test
    void r13_aRoleWithoutGrantsFailsTheStart() {
        runner().run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("permission denied");
            assertThat(context.getStartupFailure()).hasStackTraceContaining("stopped before its start settled")
                    .hasStackTraceContaining("the role lacks a grant on an outbox table");
        });
    }

    @Test
    void r13_grantsRevokedAfterAGoodStartTurnTheHealthDownUntilTheyAreBack() throws SQLException {
        sql(grant);
        runner().run(context -> {
            assertThat(context).hasNotFailed();
            OutboxHealthIndicator health = context.getBean(OutboxHealthIndicator.class);
            assertThat(health.health().getStatus()).isEqualTo(Status.UP);

            sql("REVOKE ALL ON ALL TABLES IN SCHEMA " + schema + " FROM " + role);
            await().atMost(Duration.ofSeconds(60)).until(() -> health.health().getDetails().containsKey("refusal"));
            Health down = health.health();
            assertThat(down.getStatus()).isEqualTo(Status.DOWN);
            assertThat(down.getDetails().get("relayRunning")).isEqualTo(true);
            @SuppressWarnings("unchecked")
            Map<String, Object> refusal = (Map<String, Object>) down.getDetails().get("refusal");
            assertThat(refusal).containsEntry("side", "store");
            assertThat((String) refusal.get("error")).contains("permission denied");

            sql(grant);
            await().atMost(Duration.ofSeconds(60)).until(() -> health.health().getStatus().equals(Status.UP));
            assertThat(health.health().getDetails()).doesNotContainKey("refusal");
        });
    }
}
