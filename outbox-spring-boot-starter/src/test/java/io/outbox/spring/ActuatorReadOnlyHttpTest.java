package io.outbox.spring;

import static org.assertj.core.api.Assertions.assertThat;

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
 * The {@code outbox} endpoint's write operations are guarded as Actuator's own: with the
 * documented exposure and {@code management.endpoint.outbox.access=read-only}, a drain over HTTP is
 * refused and the relay keeps running undrained, while the read operations still answer.
 */
@SpringBootTest(classes = ActuatorReadOnlyHttpTest.Application.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ActuatorReadOnlyHttpTest {

    /** An application with nothing but the auto-configuration, as a user's would have. */
    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class Application {
    }

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) throws Exception {
        ActuatorHttpTest.documentedExposure().forEach((key, value) -> registry.add((String) key, () -> value));
        registry.add("management.endpoint.outbox.access", () -> "read-only");
        registry.add("spring.datasource.url", () -> "jdbc:h2:mem:ro" + UUID.randomUUID().toString().replace("-", "")
                + ";DB_CLOSE_DELAY=-1");
        registry.add("outbox.create-schema", () -> "true");
        registry.add("outbox.relay.producer.bootstrap.servers", () -> "127.0.0.1:9");
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
    void h3_aReadOnlyOutboxEndpointRefusesDrainAndStillAnswersReads() throws Exception {
        HttpResponse<String> drain = send("POST", "/actuator/outbox/relay/drain");
        assertThat(drain.statusCode()).as(drain.body()).isIn(404, 405);
        assertThat(relay.isDraining()).isFalse();
        HttpResponse<String> leases = send("GET", "/actuator/outbox/" + OutboxEndpoint.LEASES);
        assertThat(leases.statusCode()).as(leases.body()).isEqualTo(200);
    }
}
