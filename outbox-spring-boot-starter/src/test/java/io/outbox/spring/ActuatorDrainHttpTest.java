package io.outbox.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.relay.OutboxRelay;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The {@code outbox} endpoint's relay operations over HTTP, on a real embedded web server, exposed
 * with exactly the lines docs/spring-boot.md gives: the fleet's leases (C6) and drain and resume
 * (H3) of the application's running relay, as Actuator write operations. The store is H2; the relay
 * runs with nothing to publish, so its broker is never asked.
 */
@SpringBootTest(classes = ActuatorDrainHttpTest.Application.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ActuatorDrainHttpTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    /** An application with nothing but the auto-configuration, as a user's would have. */
    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class Application {
    }

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) throws Exception {
        ActuatorHttpTest.documentedExposure().forEach((key, value) -> registry.add((String) key, () -> value));
        registry.add("spring.datasource.url", () -> "jdbc:h2:mem:drain" + UUID.randomUUID().toString().replace("-", "")
                + ";DB_CLOSE_DELAY=-1");
        registry.add("outbox.create-schema", () -> "true");
        registry.add("outbox.relay.producer.bootstrap.servers", () -> "127.0.0.1:9");
        registry.add("outbox.relay.poll-interval", () -> "200ms");
    }

    @LocalServerPort
    int port;
    @Autowired
    OutboxRelay relay;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private HttpResponse<String> send(String method, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(20)).method(method, HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void h3_drainAndResumeAreWriteOperationsOfTheOutboxEndpointOverHttp() throws Exception {
        await().atMost(WAIT).until(() -> relay.ownedBuckets().size() == 8);

        HttpResponse<String> leases = send("GET", "/actuator/outbox/" + OutboxEndpoint.LEASES);
        assertThat(leases.statusCode()).as(leases.body()).isEqualTo(200);
        assertThat(leases.body()).contains("\"relayId\":\"" + relay.relayId() + "\"", "\"relaysAlive\":1",
                "\"draining\":false", "{\"bucket\":7,\"owner\":\"" + relay.relayId() + "\"", "\"held\":true");

        HttpResponse<String> drained = send("POST", "/actuator/outbox/relay/drain");
        assertThat(drained.statusCode()).as(drained.body()).isEqualTo(200);
        assertThat(drained.body()).contains("\"draining\":true");
        await().atMost(WAIT).until(() -> relay.ownedBuckets().isEmpty());
        await().atMost(WAIT).untilAsserted(() -> assertThat(send("GET", "/actuator/outbox/" + OutboxEndpoint.LEASES)
                .body()).as("the store: every lease given back (C3), the relay's heartbeat gone")
                .contains("\"draining\":true", "\"relaysAlive\":0").doesNotContain("\"held\":true"));
        await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(11))
                .until(() -> relay.ownedBuckets().isEmpty());

        HttpResponse<String> resumed = send("POST", "/actuator/outbox/relay/resume");
        assertThat(resumed.statusCode()).as(resumed.body()).isEqualTo(200);
        assertThat(resumed.body()).contains("\"draining\":false");
        await().atMost(WAIT).until(() -> relay.ownedBuckets().size() == 8);

        HttpResponse<String> unknown = send("POST", "/actuator/outbox/relay/stop");
        assertThat(unknown.statusCode()).as(unknown.body()).isEqualTo(400);
        HttpResponse<String> readOnly = send("GET", "/actuator/outbox/relay/drain");
        assertThat(readOnly.statusCode()).as("a drain is no read operation").isNotEqualTo(200);
        assertThat(relay.isDraining()).isFalse();
    }
}
