package io.outbox.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.OutboxMessage;
import io.outbox.spi.DeadLetterFailure;
import io.outbox.spi.OutboxStore;
import java.io.IOException;
import java.io.StringReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Properties;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The {@code outbox} Actuator endpoint and the health indicator over HTTP, on a real embedded web
 * server, exposed with exactly the lines docs/spring-boot.md gives (between its {@code actuator-exposure}
 * markers): every operation of {@link OutboxEndpoint} is called as a user's HTTP client would.
 * The store is H2; the relay is off, so what the endpoint reports stays put between calls.
 */
@SpringBootTest(classes = ActuatorHttpTest.Application.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ActuatorHttpTest {

    private static final String BEGIN = "<!-- actuator-exposure:begin -->";
    private static final String END = "<!-- actuator-exposure:end -->";

    /** An application with nothing but the auto-configuration, as a user's would have. */
    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class Application {
    }

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) throws IOException {
        documentedExposure().forEach((key, value) -> registry.add((String) key, () -> value));
        registry.add("spring.datasource.url", () -> "jdbc:h2:mem:http" + UUID.randomUUID().toString().replace("-", "")
                + ";DB_CLOSE_DELAY=-1");
        registry.add("outbox.create-schema", () -> "true");
        registry.add("outbox.relay.enabled", () -> "false");
    }

    /** The properties block between docs/spring-boot.md's markers, as a user would paste it. */
    static Properties documentedExposure() throws IOException {
        String readme = Files.readString(Path.of("..", "docs", "spring-boot.md"), StandardCharsets.UTF_8);
        int begin = readme.indexOf(BEGIN);
        int end = readme.indexOf(END);
        assertThat(begin).as("docs/spring-boot.md marker " + BEGIN).isNotNegative();
        assertThat(end).as("docs/spring-boot.md marker " + END).isGreaterThan(begin);
        String block = readme.substring(begin + BEGIN.length(), end)
                .replace("```properties", "").replace("```", "");
        Properties properties = new Properties();
        properties.load(new StringReader(block));
        assertThat(properties).as("the exposure lines of docs/spring-boot.md")
                .containsKey("management.endpoints.web.exposure.include");
        return properties;
    }

    @LocalServerPort
    int port;
    @Autowired
    Outbox outbox;
    @Autowired
    TransactionTemplate transactions;
    @Autowired
    OutboxStore store;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(20)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> post(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(20)).POST(HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void c4_everyOperationOfTheOutboxEndpointAnswersOverHttp_withTheReadmesExposure() throws Exception {
        OutboxMessage pending = transactions.execute(s -> outbox.enqueue("http-orders", "customer-a", "stays"));
        OutboxMessage poison = transactions.execute(s -> outbox.enqueue("http-orders", "customer-b", "bad"));
        Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        assertThat(store.deadLetters().orElseThrow().moveToDeadLetters(poison.bucket(), poison.messageId(), new DeadLetterFailure(
                "record too large", "org.apache.kafka.common.errors.RecordTooLargeException", 5, now, now,
                "relay-1"))).isTrue();

        HttpResponse<String> state = get("/actuator/outbox");
        assertThat(state.statusCode()).as(state.body()).isEqualTo(200);
        assertThat(state.body()).contains("\"relayRunning\":false", "\"bucketCount\":8",
                "\"" + pending.bucket() + "\":{\"count\":1,\"capped\":false}");

        HttpResponse<String> listed = get("/actuator/outbox/" + OutboxEndpoint.DEAD_LETTERS);
        assertThat(listed.statusCode()).as(listed.body()).isEqualTo(200);
        assertThat(listed.body()).contains("\"messageId\":\"" + poison.messageId() + "\"",
                "\"reason\":\"record too large\"", "\"attempts\":5", "\"topic\":\"http-orders\"");

        HttpResponse<String> replayed = post("/actuator/outbox/" + poison.messageId());
        assertThat(replayed.statusCode()).as(replayed.body()).isEqualTo(200);
        assertThat(replayed.body()).contains("\"replayed\":true");
        assertThat(get("/actuator/outbox/" + OutboxEndpoint.DEAD_LETTERS).body()).isEqualTo("[]");
        assertThat(get("/actuator/outbox").body()).as("the replayed message is pending in its bucket again")
                .contains("\"" + poison.bucket() + "\":{\"count\":" + (poison.bucket() == pending.bucket() ? 2 : 1));
        assertThat(post("/actuator/outbox/" + poison.messageId()).body()).contains("\"replayed\":false");

        HttpResponse<String> notAnId = post("/actuator/outbox/not-a-uuid");
        assertThat(notAnId.statusCode()).as(notAnId.body()).isEqualTo(400);
        HttpResponse<String> unknownSection = get("/actuator/outbox/no-such-section");
        assertThat(unknownSection.statusCode()).as(unknownSection.body()).isEqualTo(400);
        HttpResponse<String> noRelay = post("/actuator/outbox/relay/drain");
        assertThat(noRelay.statusCode()).as("no relay runs here: " + noRelay.body()).isEqualTo(400);
        HttpResponse<String> leases = get("/actuator/outbox/" + OutboxEndpoint.LEASES);
        assertThat(leases.statusCode()).as(leases.body()).isEqualTo(200);
        assertThat(leases.body()).contains("\"relayId\":null", "\"relaysAlive\":0", "{\"bucket\":0,\"owner\":null");
    }

    @Test
    void theOutboxHealthAnswersOverHttpWithItsDetails() throws Exception {
        HttpResponse<String> health = get("/actuator/health/outbox");
        assertThat(health.statusCode()).as(health.body()).isEqualTo(200);
        assertThat(health.body()).contains("\"status\":\"UP\"", "\"relayEnabled\":false", "\"pending\":");
    }
}
