package io.outbox.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import io.micrometer.core.instrument.Tag;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.tck.InMemoryOutboxStore;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real Prometheus server (Debian's 2.42) scrapes a running relay, whose Micrometer Prometheus
 * registry is served by a test endpoint (the JDK's HTTP server), with the repository's rules
 * loaded: a query returns the relay's acknowledged count and the recorded fleet views (O3).
 * Skipped, with the reason, where {@code prometheus} is not installed.
 */
class PrometheusScrapeIntegrationTest {

    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final Pattern VALUE = Pattern.compile("\"value\":\\[[0-9.]+,\"([^\"]+)\"\\]");
    @RegisterExtension
    static final KafkaBroker KAFKA = new KafkaBroker();

    @TempDir
    Path dir;

    @Test
    void o3_aRealPrometheusScrapesARunningRelayAndQueriesItsSeries() throws Exception {
        Path prometheus = OpsFiles.tool("OUTBOX_TEST_PROMETHEUS", "prometheus");
        String topic = "metrics-scrape";
        KAFKA.broker().createTopic(topic, 4);
        InMemoryOutboxStore store = InMemoryOutboxStore.builder().build();
        store.enqueue(TestMessages.messages(topic, "scraped", 20, 4, Clock.systemUTC()));
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        HttpServer endpoint = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        endpoint.createContext("/metrics", exchange -> {
            byte[] body = registry.scrape().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        endpoint.start();
        int prometheusPort = freePort();
        Path config = dir.resolve("prometheus.yml");
        Files.writeString(config, String.join("\n",
                "global:",
                "  scrape_interval: 1s",
                "  evaluation_interval: 1s",
                "rule_files:",
                "  - '" + OpsFiles.RULES.toAbsolutePath().normalize() + "'",
                "scrape_configs:",
                "  - job_name: outbox-relay",
                "    static_configs:",
                "      - targets: ['127.0.0.1:" + endpoint.getAddress().getPort() + "']",
                ""));
        Process server = new ProcessBuilder(prometheus.toString(), "--config.file=" + config,
                "--storage.tsdb.path=" + dir.resolve("data"), "--web.listen-address=127.0.0.1:" + prometheusPort)
                .redirectErrorStream(true).redirectOutput(dir.resolve("prometheus.log").toFile()).start();
        RelayOptions options = RelayOptions.builder().relayId("scraped").bucketCount(4)
                .pollInterval(Duration.ofMillis(50)).build();
        try (MicrometerRelayMetrics metrics = new MicrometerRelayMetrics(registry, List.of(Tag.of("outbox", "orders")),
                     store, Duration.ofMillis(200));
             KafkaOutboxPublisher kafka = KafkaOutboxPublisher.builder(Map.of("bootstrap.servers",
                     KAFKA.broker().bootstrapServers())).build();
             OutboxRelay relay = OutboxRelay.builder(store, kafka).options(options).listener(metrics).build()) {
            relay.start();
            HttpClient http = HttpClient.newHttpClient();
            await().atMost(WAIT).pollInterval(Duration.ofMillis(500)).ignoreExceptions()
                    .until(() -> "20".equals(query(http, prometheusPort,
                            "outbox_relay_published_messages_total{outbox=\"orders\",job=\"outbox-relay\"}")));
            await().atMost(WAIT).pollInterval(Duration.ofMillis(500)).ignoreExceptions()
                    .until(() -> "1".equals(query(http, prometheusPort, "outbox:relays_alive{outbox=\"orders\"}"))
                            && "0".equals(query(http, prometheusPort, "outbox:buckets_unowned{outbox=\"orders\"}")));
            assertThat(query(http, prometheusPort,
                    "sum(outbox_relay_time_in_outbox_seconds_count{outbox=\"orders\"})")).isEqualTo("20");
        } finally {
            server.destroy();
            if (!server.waitFor(20, TimeUnit.SECONDS)) {
                server.destroyForcibly();
            }
            endpoint.stop(0);
        }
    }

    /** The first sample's value of an instant query, or null when the result is empty. */
    private static String query(HttpClient http, int port, String promql) throws IOException, InterruptedException {
        URI uri = URI.create("http://127.0.0.1:" + port + "/api/v1/query?query="
                + URLEncoder.encode(promql, StandardCharsets.UTF_8));
        String body = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        Matcher m = VALUE.matcher(body);
        return m.find() ? m.group(1) : null;
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 0, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
