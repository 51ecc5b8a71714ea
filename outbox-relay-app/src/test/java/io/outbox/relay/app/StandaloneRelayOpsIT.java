package io.outbox.relay.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.outbox.OutboxMessage;
import io.outbox.embedded.EmbeddedKafkaBroker;
import io.outbox.relay.internal.BrokerProbe;
import io.outbox.store.jdbc.JdbcOutboxStore;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The standalone relay as its own process, operated from outside (rules H1, H3, C6, O3): readiness
 * follows a broker the test owns while the relay has nothing to publish; the command line drains
 * and resumes it and shows the fleet's leases; a real Prometheus server scrapes its
 * {@code /metrics}. Against the PostgreSQL server {@code scripts/test.sh} provides; each test uses
 * tables and a broker of its own.
 */
class StandaloneRelayOpsIT {

    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final String POSTGRES_URL = env("OUTBOX_TEST_POSTGRES_URL", "jdbc:postgresql://127.0.0.1:5432/test");
    private static final String POSTGRES_USER = env("OUTBOX_TEST_POSTGRES_USER", "postgres");
    private static final String POSTGRES_PASSWORD = env("OUTBOX_TEST_POSTGRES_PASSWORD", "");
    private static final long THRESHOLD_MS = 3_000;
    private static final Pattern VALUE = Pattern.compile("\"value\":\\[[0-9.]+,\"([^\"]+)\"\\]");
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @TempDir
    Path dir;
    private String prefix;
    private HikariDataSource dataSource;
    private EmbeddedKafkaBroker broker;
    private final List<RelayProcess> processes = new ArrayList<>();

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    @BeforeEach
    void setUp() {
        prefix = "ops" + UUID.randomUUID().toString().replace("-", "").substring(0, 12) + "_";
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(POSTGRES_URL);
        config.setUsername(POSTGRES_USER);
        config.setPassword(POSTGRES_PASSWORD);
        config.setMaximumPoolSize(2);
        dataSource = new HikariDataSource(config);
        store().createSchema();
        broker = EmbeddedKafkaBroker.start();
    }

    @AfterEach
    void tearDown() throws SQLException {
        processes.forEach(RelayProcess::close);
        broker.close();
        try (Connection c = dataSource.getConnection(); Statement st = c.createStatement()) {
            for (String table : List.of("messages", "leases", "relays", "messages_dead", "messages_failing")) {
                st.execute("DROP TABLE IF EXISTS \"" + prefix + table + "\"");
            }
        } finally {
            dataSource.close();
        }
    }

    private JdbcOutboxStore store() {
        return JdbcOutboxStore.builder(dataSource).tablePrefix(prefix).build();
    }

    private Path configFile(String... extraLines) throws IOException {
        List<String> lines = new ArrayList<>(List.of(
                "store=jdbc",
                "store.url=" + POSTGRES_URL,
                "store.user=" + POSTGRES_USER,
                "store.table.prefix=" + prefix,
                "store.pool.size=2",
                "kafka.bootstrap.servers=" + broker.bootstrapServers(),
                "relay.poll.interval.ms=200",
                "relay.error.backoff.ms=200",
                "relay.error.backoff.max.ms=1000"));
        lines.addAll(List.of(extraLines));
        Path file = dir.resolve("relay-" + UUID.randomUUID() + ".properties");
        Files.write(file, lines, StandardCharsets.UTF_8);
        return file;
    }

    private Map<String, String> environment(String relayId) {
        Map<String, String> env = new HashMap<>();
        env.put("OUTBOX_STORE_PASSWORD", POSTGRES_PASSWORD);
        env.put("OUTBOX_RELAY_ID", relayId);
        return env;
    }

    private RelayProcess start(Map<String, String> environment, String... args) {
        RelayProcess process = RelayProcess.start(dir, environment, args);
        processes.add(process);
        return process;
    }

    private static HttpResponse<String> get(int port, String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static int status(int port, String path) {
        try {
            return get(port, path).statusCode();
        } catch (Exception e) {
            return -1;
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 0, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    private long owned(String relayId) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement s = c.prepareStatement("SELECT count(*) FROM \"" + prefix + "leases\" WHERE owner = ?")) {
            s.setString(1, relayId);
            try (ResultSet r = s.executeQuery()) {
                r.next();
                return r.getLong(1);
            }
        }
    }

    /**
     * H1: a relay with nothing to publish learns that its broker is gone from its periodic check:
     * {@code /health/ready} turns 503 within the threshold after the broker stops (plus one check)
     * and 200 again once it is back; liveness stays 200 throughout.
     */
    @Test
    void h1_anIdleRelayTurnsNotReadyWhenItsBrokerStopsAndReadyWhenItReturns() throws Exception {
        int port = freePort();
        RelayProcess relay = start(environment("idle-" + prefix), "--config", configFile("http.port=" + port,
                "http.bind.address=127.0.0.1", "http.ready.unreachable.threshold.ms=" + THRESHOLD_MS).toString());
        await().atMost(WAIT).until(() -> status(port, HttpRoute.READY.path()) == 200);
        await().during(Duration.ofMillis(2 * THRESHOLD_MS)).atMost(Duration.ofMillis(2 * THRESHOLD_MS).plusSeconds(10))
                .until(() -> status(port, HttpRoute.READY.path()) == 200);

        long stopped = System.nanoTime();
        broker.stop();
        await().atMost(WAIT).pollInterval(Duration.ofMillis(100))
                .until(() -> status(port, HttpRoute.READY.path()) == 503);
        long notReadyMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stopped);
        String reason = get(port, HttpRoute.READY.path()).body();
        System.out.printf("broker stopped: /health/ready 503 after %d ms (threshold %d ms, check every %d ms)%n",
                notReadyMs, THRESHOLD_MS, BrokerProbe.period(Duration.ofMillis(THRESHOLD_MS)).toMillis());
        assertThat(reason).contains("broker unreachable", "periodic check");
        assertThat(notReadyMs).as("503 within the threshold, a check and its timeout, and the broker's shutdown")
                .isLessThan(THRESHOLD_MS + 2 * BrokerProbe.period(Duration.ofMillis(THRESHOLD_MS)).toMillis() + 5_000);
        assertThat(status(port, HttpRoute.LIVE.path())).isEqualTo(200);

        long restarted = System.nanoTime();
        broker.restart();
        await().atMost(WAIT).pollInterval(Duration.ofMillis(100))
                .until(() -> status(port, HttpRoute.READY.path()) == 200);
        System.out.printf("broker back: /health/ready 200 after %d ms from the restart call%n",
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - restarted));
        relay.terminate();
        assertThat(relay.exitCode()).as("stderr:\n%s", relay.err()).isEqualTo(StandaloneRelay.EXIT_OK);
    }

    /**
     * H3 and C6 on the command line: {@code leases} shows the fleet as the store holds it,
     * {@code drain} makes the running relay give its leases back and take none, {@code resume} makes
     * it take them again; without the token the relay refuses.
     */
    @Test
    void h3_theCommandLineDrainsAndResumesARunningRelayAndShowsTheFleetsLeases() throws Exception {
        int port = freePort();
        String token = "token-" + UUID.randomUUID();
        String relayId = "cli-" + prefix;
        Map<String, String> env = environment(relayId);
        env.put("OUTBOX_HTTP_ADMIN_TOKEN", token);
        Path config = configFile("http.port=" + port, "http.bind.address=127.0.0.1");
        RelayProcess relay = start(env, "--config", config.toString());
        await().atMost(WAIT).until(() -> owned(relayId) == 8);

        RelayProcess leases = start(environment("cli-reader"), "--config", config.toString(), "leases", "--json");
        assertThat(leases.exitCode()).as(leases.err()).isZero();
        assertThat(leases.out()).contains("\"relaysAlive\": 1", "\"relayId\": \"" + relayId + "\"",
                "{\"bucket\": 7, \"owner\": \"" + relayId + "\"");
        RelayProcess text = start(environment("cli-reader"), "--config", config.toString(), "leases");
        assertThat(text.exitCode()).as(text.err()).isZero();
        assertThat(text.out()).contains(relayId, "held, ", "yes");

        RelayProcess refused = start(environment("cli-reader"), "--config", config.toString(), "drain");
        assertThat(refused.exitCode()).as("no token in this configuration").isEqualTo(StandaloneRelay.EXIT_MISCONFIGURATION);
        env.put("OUTBOX_HTTP_ADMIN_TOKEN", "wrong-" + token);
        RelayProcess wrong = start(env, "--config", config.toString(), "drain");
        assertThat(wrong.exitCode()).isEqualTo(StandaloneRelay.EXIT_ERROR);
        assertThat(wrong.err()).contains("HTTP 403").doesNotContain(token);
        assertThat(owned(relayId)).isEqualTo(8);

        env.put("OUTBOX_HTTP_ADMIN_TOKEN", token);
        RelayProcess drain = start(env, "--config", config.toString(), "drain");
        assertThat(drain.exitCode()).as(drain.err()).isZero();
        assertThat(drain.out()).contains("draining");
        await().atMost(WAIT).until(() -> owned(relayId) == 0);
        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(12)).until(() -> owned(relayId) == 0);
        RelayProcess resume = start(env, "--config", config.toString(), "resume");
        assertThat(resume.exitCode()).as(resume.err()).isZero();
        await().atMost(WAIT).until(() -> owned(relayId) == 8);
        relay.terminate();
        assertThat(relay.exitCode()).as("stderr:\n%s", relay.err()).isEqualTo(StandaloneRelay.EXIT_OK);
        for (RelayProcess p : List.of(relay, drain, resume, wrong)) {
            assertThat(p.out() + p.err()).doesNotContain(token);
        }
    }

    /**
     * O3 and H1 with a real Prometheus server (Debian's, which {@code scripts/test.sh} installs):
     * it scrapes the standalone relay's {@code /metrics} and a query returns the relay's published
     * count. Skipped, with the reason, where {@code prometheus} is absent.
     */
    @Test
    void o3_aRealPrometheusScrapesTheStandaloneRelaysMetrics() throws Exception {
        String configured = System.getenv("OUTBOX_TEST_PROMETHEUS");
        Path prometheus = configured != null && !configured.isBlank() ? Path.of(configured)
                : Path.of("/usr/bin/prometheus");
        assumeTrue(Files.isExecutable(prometheus), "prometheus is not installed (" + prometheus + "; "
                + "scripts/test.sh installs Debian's package and sets OUTBOX_TEST_PROMETHEUS): the scrape is not tested");
        String topic = "scrape-" + prefix.substring(0, prefix.length() - 1);
        broker.createTopic(topic, 8);
        StringSerializer s = new StringSerializer();
        List<OutboxMessage> messages = new ArrayList<>();
        for (int i = 0; i < 25; i++) {
            messages.add(OutboxMessage.create(topic, "key-" + i, "value-" + i, s, s, 8));
        }
        try (Connection c = dataSource.getConnection()) {
            store().writer().enqueue(c, messages);
        }
        int port = freePort();
        RelayProcess relay = start(environment("scraped-" + prefix), "--config", configFile("http.port=" + port,
                "http.bind.address=127.0.0.1").toString());
        await().atMost(WAIT).until(() -> status(port, HttpRoute.READY.path()) == 200);

        int prometheusPort = freePort();
        Path config = dir.resolve("prometheus.yml");
        Files.writeString(config, String.join("\n",
                "global:",
                "  scrape_interval: 1s",
                "scrape_configs:",
                "  - job_name: outbox-relay",
                "    static_configs:",
                "      - targets: ['127.0.0.1:" + port + "']",
                ""));
        Process server = new ProcessBuilder(prometheus.toString(), "--config.file=" + config,
                "--storage.tsdb.path=" + dir.resolve("data"), "--web.listen-address=127.0.0.1:" + prometheusPort)
                .redirectErrorStream(true).redirectOutput(dir.resolve("prometheus.log").toFile()).start();
        try {
            await().atMost(WAIT).pollInterval(Duration.ofMillis(500)).ignoreExceptions()
                    .until(() -> "1".equals(query(prometheusPort, "up{job=\"outbox-relay\"}")));
            await().atMost(WAIT).pollInterval(Duration.ofMillis(500)).ignoreExceptions()
                    .until(() -> "25".equals(query(prometheusPort,
                            "sum(outbox_relay_published_messages_total{job=\"outbox-relay\"})")));
            assertThat(query(prometheusPort, "outbox_relay_owned_buckets{job=\"outbox-relay\"}"))
                    .as("the relay's owned buckets, scraped").isEqualTo("8");
        } finally {
            server.destroy();
            if (!server.waitFor(20, TimeUnit.SECONDS)) {
                server.destroyForcibly();
            }
        }
        relay.terminate();
        assertThat(relay.exitCode()).as("stderr:\n%s", relay.err()).isEqualTo(StandaloneRelay.EXIT_OK);
    }

    /** The first sample's value of an instant query, or null when the result is empty. */
    private static String query(int port, String promql) throws IOException, InterruptedException {
        URI uri = URI.create("http://127.0.0.1:" + port + "/api/v1/query?query="
                + URLEncoder.encode(promql, StandardCharsets.UTF_8));
        String body = HTTP.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        Matcher m = VALUE.matcher(body);
        return m.find() ? m.group(1) : null;
    }
}
