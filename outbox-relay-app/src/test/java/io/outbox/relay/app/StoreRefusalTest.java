package io.outbox.relay.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.outbox.OutboxMessage;
import io.outbox.embedded.EmbeddedKafkaBroker;
import io.outbox.relay.FailureKind;
import io.outbox.relay.OutboxRelay;
import io.outbox.relay.Refusal;
import io.outbox.relay.RelayOptions;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.store.jdbc.JdbcOutboxStore;
import io.outbox.store.jdbc.JdbcOutboxTables;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Rule R13 against the machine's PostgreSQL and MariaDB (see TESTING.md): a database login, a
 * password or a missing grant is a refusal no retry heals. At start the standalone relay exits
 * with 3 and one ERROR line naming the cause, without the password; after a good start the relay
 * reports it ({@link OutboxRelay#refusal()}), keeps running, retries, and goes on once the grant
 * is back. The machine's PostgreSQL trusts 127.0.0.1, so the wrong password is tried on MariaDB,
 * which checks it, and on a PostgreSQL cluster of the test's own that checks passwords
 * ({@link PrivatePostgres}: {@code initdb --auth=scram-sha-256}).
 */
class StoreRefusalTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String POSTGRES_URL = "jdbc:postgresql://127.0.0.1:5432/test";
    private static final String MARIADB_URL = "jdbc:mariadb://127.0.0.1:3306/test";
    private static final String PASSWORD = "right-" + UUID.randomUUID();
    private static EmbeddedKafkaBroker broker;

    @BeforeAll
    static void startBroker() {
        broker = EmbeddedKafkaBroker.start();
    }

    @AfterAll
    static void stopBroker() {
        broker.close();
    }

    private static void sql(String url, String user, String... statements) throws SQLException {
        try (Connection c = DriverManager.getConnection(url, user, ""); Statement st = c.createStatement()) {
            for (String statement : statements) {
                st.execute(statement);
            }
        }
    }

    private static String name(String what) {
        return "r13_" + what + "_" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** A schema with the outbox's tables, made by the superuser, and a role that may log in and use the schema only. */
    private static void postgresSchemaAndRole(String schema, String role) throws SQLException {
        sql(POSTGRES_URL, "postgres", "CREATE SCHEMA " + schema, "CREATE ROLE " + role + " LOGIN PASSWORD '"
                + PASSWORD + "'", "GRANT USAGE ON SCHEMA " + schema + " TO " + role);
        PGSimpleDataSource owner = new PGSimpleDataSource();
        owner.setUrl(POSTGRES_URL);
        owner.setUser("postgres");
        JdbcOutboxStore.builder(owner).tables(JdbcOutboxTables.defaults().inSchema(schema)).build().createSchema();
    }

    private static void dropPostgres(String schema, String role) throws SQLException {
        sql(POSTGRES_URL, "postgres", "DROP SCHEMA IF EXISTS " + schema + " CASCADE", "DROP ROLE IF EXISTS " + role);
    }

    /** The standalone relay's run in this JVM, with its log; the exit code and the log's text. */
    private record Outcome(int code, String log) {
        List<String> errors() {
            return log.lines().filter(line -> line.contains(" ERROR ")).toList();
        }
    }

    private static Outcome runStandalone(Map<String, String> store) throws Exception {
        Map<String, String> env = new HashMap<>(store);
        env.put("OUTBOX_STORE", "jdbc");
        env.put("OUTBOX_KAFKA_BOOTSTRAP_SERVERS", broker.bootstrapServers());
        env.put("OUTBOX_RELAY_BUCKET_COUNT", "2");
        env.put("OUTBOX_RELAY_ERROR_BACKOFF_MS", "100");
        env.put("OUTBOX_RELAY_ERROR_BACKOFF_MAX_MS", "200");
        PrintStream originalErr = System.err;
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8)); // where the test's SLF4J binding writes
        Lifecycle lifecycle = Lifecycle.inProcess();
        int code;
        try {
            PrintStream err = new PrintStream(log, true, StandardCharsets.UTF_8);
            CompletableFuture<Integer> exit = CompletableFuture.supplyAsync(() -> StandaloneRelay.execute(new String[0],
                    env, err, err, lifecycle, redactor -> { }));
            try {
                code = exit.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            } finally {
                lifecycle.requestStop();
            }
        } finally {
            System.setErr(originalErr);
        }
        String text = log.toString(StandardCharsets.UTF_8);
        originalErr.print(text);
        return new Outcome(code, text);
    }

    @Test
    void r13_aWrongDatabasePasswordExitsWithThreeAndOneErrorLineNamingTheCause() throws Exception {
        String user = name("login");
        sql(MARIADB_URL, "root", "CREATE USER '" + user + "'@'%' IDENTIFIED BY '" + PASSWORD + "'",
                "GRANT ALL ON test.* TO '" + user + "'@'%'");
        try {
            Outcome run = runStandalone(Map.of("OUTBOX_STORE_URL", MARIADB_URL, "OUTBOX_STORE_USER", user,
                    "OUTBOX_STORE_PASSWORD", "wrong-" + PASSWORD, "OUTBOX_STORE_TABLE_PREFIX", user + "_"));

            assertThat(run.code()).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
            assertThat(run.errors()).as("one ERROR line").hasSize(1);
            assertThat(run.errors().get(0)).contains("the store refused the relay at start for a reason no retry "
                    + "heals (R13); exiting with code 3", "a wrong user or password", "Access denied for user");
            assertThat(run.log()).doesNotContain(PASSWORD).doesNotContain("could not open the store; retrying");
        } finally {
            sql(MARIADB_URL, "root", "DROP USER IF EXISTS '" + user + "'@'%'");
        }
    }

    @Test
    void r13_aWrongPostgresPasswordExitsWithThreeAndOneErrorLineNamingTheCause() throws Exception {
        Path bin = PrivatePostgres.binaries().orElse(null);
        assumeTrue(bin != null, "no PostgreSQL binaries (initdb, pg_ctl) here: set OUTBOX_TEST_POSTGRES_BIN");
        try (PrivatePostgres pg = PrivatePostgres.start(bin, PASSWORD)) {
            Outcome run = runStandalone(Map.of("OUTBOX_STORE_URL", pg.url(), "OUTBOX_STORE_USER", PrivatePostgres.USER,
                    "OUTBOX_STORE_PASSWORD", "wrong-" + PASSWORD));

            assertThat(run.code()).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
            assertThat(run.errors()).as("one ERROR line").hasSize(1);
            assertThat(run.errors().get(0)).contains("the store refused the relay at start for a reason no retry "
                    + "heals (R13); exiting with code 3", "a wrong user or password",
                    "password authentication failed for user \"postgres\"");
            assertThat(run.log()).doesNotContain(PASSWORD).doesNotContain("could not open the store; retrying");

            // The same cluster with the right password: the refusal above was the password, not the cluster.
            PGSimpleDataSource right = new PGSimpleDataSource();
            right.setUrl(pg.url());
            right.setUser(PrivatePostgres.USER);
            right.setPassword(PASSWORD);
            try (Connection c = right.getConnection()) {
                assertThat(c.isValid(5)).isTrue();
            }
        }
    }

    @Test
    void r13_aDatabaseUserWithoutGrantsExitsWithThree() throws Exception {
        String user = name("nogrant");
        sql(MARIADB_URL, "root", "CREATE USER '" + user + "'@'%' IDENTIFIED BY '" + PASSWORD + "'");
        try {
            Outcome run = runStandalone(Map.of("OUTBOX_STORE_URL", MARIADB_URL, "OUTBOX_STORE_USER", user,
                    "OUTBOX_STORE_PASSWORD", PASSWORD, "OUTBOX_STORE_TABLE_PREFIX", user + "_"));

            assertThat(run.code()).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
            assertThat(run.errors()).as("one ERROR line").hasSize(1);
            assertThat(run.errors().get(0)).contains("(R13)", "lacks a grant");
            assertThat(run.log()).doesNotContain(PASSWORD);
        } finally {
            sql(MARIADB_URL, "root", "DROP USER IF EXISTS '" + user + "'@'%'");
        }
    }

    @Test
    void r13_aPostgresRoleWithoutGrantsOnTheTablesExitsWithThree() throws Exception {
        String schema = name("schema");
        String role = name("role");
        postgresSchemaAndRole(schema, role);
        try {
            Outcome run = runStandalone(Map.of("OUTBOX_STORE_URL", POSTGRES_URL, "OUTBOX_STORE_USER", role,
                    "OUTBOX_STORE_PASSWORD", PASSWORD, "OUTBOX_STORE_SCHEMA", schema));

            assertThat(run.code()).isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
            assertThat(run.errors()).as("one ERROR line").hasSize(1);
            assertThat(run.errors().get(0)).contains("(R13)", "the role lacks a grant on an outbox table",
                    "permission denied");
        } finally {
            dropPostgres(schema, role);
        }
    }

    @Test
    void r13_aGrantRevokedAfterAGoodStartIsReportedAndRetriedUntilItIsBack() throws Exception {
        String schema = name("schema");
        String role = name("role");
        postgresSchemaAndRole(schema, role);
        String grant = "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA " + schema + " TO " + role;
        String revoke = "REVOKE ALL ON ALL TABLES IN SCHEMA " + schema + " FROM " + role;
        sql(POSTGRES_URL, "postgres", grant);
        PGSimpleDataSource asRole = new PGSimpleDataSource();
        asRole.setUrl(POSTGRES_URL);
        asRole.setUser(role);
        asRole.setPassword(PASSWORD);
        JdbcOutboxStore store = JdbcOutboxStore.builder(asRole)
                .tables(JdbcOutboxTables.defaults().inSchema(schema)).build();
        String topic = name("topic");
        broker.createTopic(topic, 2);
        StringSerializer s = new StringSerializer();
        RelayOptions options = RelayOptions.builder().relayId(role).bucketCount(2).pollInterval(Duration.ofMillis(100))
                .errorBackoff(Duration.ofMillis(100)).maxErrorBackoff(Duration.ofMillis(300)).build();
        try (KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(Map.of("bootstrap.servers",
                broker.bootstrapServers())).build();
             OutboxRelay relay = new OutboxRelay(store, publisher, options)) {
            enqueue(store, OutboxMessage.create(topic, "a", "1", s, s, 2));
            relay.start();
            await().atMost(WAIT).until(() -> pending(store) == 0);

            sql(POSTGRES_URL, "postgres", revoke);
            await().atMost(WAIT).until(() -> relay.refusal().isPresent());
            Refusal refusal = relay.refusal().orElseThrow();
            assertThat(refusal.side()).isEqualTo("store");
            assertThat(refusal.row().kind()).isEqualTo(FailureKind.FATAL);
            assertThat(refusal.error()).contains("permission denied");
            await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(12)).until(relay::isRunning);

            sql(POSTGRES_URL, "postgres", grant);
            await().atMost(WAIT).until(() -> relay.refusal().isEmpty());
            enqueue(store, OutboxMessage.create(topic, "b", "2", s, s, 2));
            relay.wakeUp();
            await().atMost(WAIT).until(() -> pending(store) == 0);
            assertThat(relay.isRunning()).isTrue();
        } finally {
            dropPostgres(schema, role);
        }
    }

    private static long pending(JdbcOutboxStore store) {
        return store.pendingMetrics(Duration.ofSeconds(5)).pendingCount();
    }

    private static void enqueue(JdbcOutboxStore store, OutboxMessage message) throws SQLException {
        try (Connection c = store.dataSource().getConnection()) {
            store.writer().enqueue(c, List.of(message));
        }
    }
}
