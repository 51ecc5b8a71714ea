package io.outbox.relay.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.OutboxMessage;
import io.outbox.store.jdbc.JdbcOutboxStore;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * An unreachable bootstrap server, through the executable jar: with {@code kafka.bootstrap.servers} naming a port
 * nobody listens on and messages pending, the relay says so in one WARN line naming the servers and
 * the time since the last successful contact, at most every 30 s, without the Kafka client's flood
 * of connection warnings; {@code pending} says the cluster is unreachable; SIGTERM stops the relay
 * within {@code relay.close.timeout.ms} while its publishes wait on metadata.
 */
class UnreachableBrokerJarIT {

    private static final String URL = System.getenv().getOrDefault("OUTBOX_TEST_POSTGRES_URL",
            "jdbc:postgresql://127.0.0.1:5432/test");
    private static final String USER = System.getenv().getOrDefault("OUTBOX_TEST_POSTGRES_USER", "postgres");
    private static final String PASSWORD = System.getenv().getOrDefault("OUTBOX_TEST_POSTGRES_PASSWORD", "");
    private static final Duration WINDOW = Duration.ofSeconds(40);
    private static final long CLOSE_TIMEOUT_MS = 3_000;

    @TempDir
    Path dir;
    private final String prefix = "unreach_" + UUID.randomUUID().toString().substring(0, 8) + "_";
    private PGSimpleDataSource dataSource;
    private String bootstrap;

    @BeforeEach
    void pendingMessages() throws Exception {
        dataSource = new PGSimpleDataSource();
        dataSource.setURL(URL);
        dataSource.setUser(USER);
        dataSource.setPassword(PASSWORD);
        JdbcOutboxStore store = JdbcOutboxStore.builder(dataSource).tablePrefix(prefix).build();
        store.createSchema();
        StringSerializer s = new StringSerializer();
        List<OutboxMessage> messages = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            messages.add(OutboxMessage.create("unreachable", "key-" + i, "v", s, s, 8));
        }
        try (Connection c = dataSource.getConnection()) {
            store.writer().enqueue(c, messages);
        }
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            bootstrap = "127.0.0.1:" + socket.getLocalPort(); // closed again: connections are refused
        }
    }

    @AfterEach
    void dropTables() throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement st = c.createStatement()) {
            for (String table : List.of("messages", "leases", "relays", "messages_dead", "messages_failing")) {
                st.execute("DROP TABLE IF EXISTS \"" + prefix + table + "\"");
            }
        }
    }

    private Map<String, String> environment() {
        Map<String, String> env = new HashMap<>();
        env.put("OUTBOX_STORE", "jdbc");
        env.put("OUTBOX_STORE_URL", URL);
        env.put("OUTBOX_STORE_USER", USER);
        env.put("OUTBOX_STORE_PASSWORD", PASSWORD);
        env.put("OUTBOX_STORE_TABLE_PREFIX", prefix);
        env.put("OUTBOX_KAFKA_BOOTSTRAP_SERVERS", bootstrap);
        env.put("OUTBOX_RELAY_ID", "unreachable");
        env.put("OUTBOX_RELAY_CLOSE_TIMEOUT_MS", Long.toString(CLOSE_TIMEOUT_MS));
        return env;
    }

    @Test
    void anUnreachableBootstrapIsOneWarnAtABoundedRateAndSigtermStopsWithinTheCloseTimeout() throws Exception {
        try (RelayProcess relay = RelayProcess.start(dir, environment())) {
            Thread.sleep(WINDOW.toMillis()); // the window the WARN lines are counted in
            String window = relay.err();
            long sigterm = System.nanoTime();
            relay.terminate();
            int code = relay.exitCode();
            long stopMillis = (System.nanoTime() - sigterm) / 1_000_000;
            System.out.println(relay.err());

            List<String> warns = window.lines().filter(line -> line.contains(" WARN ")).toList();
            List<String> ours = warns.stream().filter(line -> line.contains("cannot reach the Kafka cluster")).toList();
            System.out.printf("WARN lines in %d s: %d (%d naming the cluster); SIGTERM to exit: %d ms%n",
                    WINDOW.toSeconds(), warns.size(), ours.size(), stopMillis);
            assertThat(ours).as("one WARN line, then at most one each 30 s").hasSizeBetween(1, 2);
            assertThat(ours.get(0)).contains("bootstrap.servers=" + bootstrap,
                    "no successful contact since the publisher started");
            assertThat(warns).as("no other WARN line: not the client's, not one per failed publish")
                    .hasSameSizeAs(ours);
            assertThat(code).isZero();
            assertThat(stopMillis).as("SIGTERM while the publishes wait on metadata: the close timeout (%d ms), "
                    + "its one-second grace and the producer's close", CLOSE_TIMEOUT_MS)
                    .isLessThan(CLOSE_TIMEOUT_MS + 1_000 + 3_000);
        }
    }

    @Test
    void pendingSaysTheClusterIsUnreachable() throws Exception {
        try (RelayProcess pending = RelayProcess.start(dir, environment(), "pending")) {
            assertThat(pending.exitCode()).as(pending.err()).isZero();
            assertThat(pending.out()).contains("kafka.bootstrap.servers=" + bootstrap + ": UNREACHABLE");
        }
    }
}
