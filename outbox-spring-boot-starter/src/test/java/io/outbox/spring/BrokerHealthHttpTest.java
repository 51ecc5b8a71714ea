package io.outbox.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.embedded.EmbeddedKafkaBroker;
import io.outbox.relay.OutboxRelay;
import io.outbox.relay.internal.BrokerProbe;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The health of an application whose relay has nothing to publish follows its broker, over HTTP on a
 * real embedded web server exposed with the lines docs/spring-boot.md gives: UP while the broker
 * answers, DOWN (503, {@code brokerUnreachable} naming the bootstrap servers) within
 * {@code outbox.health.broker-unreachable-threshold} after the broker stops, UP again once it is
 * back on the same port. The broker is this class's own; the store is H2.
 */
@SpringBootTest(classes = BrokerHealthHttpTest.Application.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@DirtiesContext
class BrokerHealthHttpTest {

    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final Duration THRESHOLD = Duration.ofSeconds(3);
    static final EmbeddedKafkaBroker BROKER = EmbeddedKafkaBroker.start();

    /** An application with nothing but the auto-configuration, as a user's would have. */
    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class Application {
    }

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) throws Exception {
        ActuatorHttpTest.documentedExposure().forEach((key, value) -> registry.add((String) key, () -> value));
        registry.add("spring.datasource.url", () -> "jdbc:h2:mem:brokerhealth"
                + UUID.randomUUID().toString().replace("-", "") + ";DB_CLOSE_DELAY=-1");
        registry.add("outbox.create-schema", () -> "true");
        registry.add("spring.kafka.bootstrap-servers", BROKER::bootstrapServers);
        registry.add("outbox.health.broker-unreachable-threshold", () -> THRESHOLD.toMillis() + "ms");
    }

    @AfterAll
    static void stopBroker() {
        BROKER.close();
    }

    @LocalServerPort
    int port;
    @Autowired
    OutboxRelay relay;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private HttpResponse<String> health() throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/health/outbox"))
                .timeout(Duration.ofSeconds(20)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    private int status() throws Exception {
        return health().statusCode();
    }

    @Test
    void anIdleRelaysHealthTurnsDownWhenItsBrokerStopsAndUpWhenItReturns() throws Exception {
        await().atMost(WAIT).until(() -> status() == 200);
        await().during(THRESHOLD.multipliedBy(2)).atMost(THRESHOLD.multipliedBy(2).plusSeconds(10))
                .until(() -> status() == 200);
        assertThat(relay.isRunning()).isTrue();

        long stopped = System.nanoTime();
        BROKER.stop();
        await().atMost(WAIT).pollInterval(Duration.ofMillis(100)).until(() -> status() == 503);
        long downMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stopped);
        long period = BrokerProbe.period(THRESHOLD).toMillis();
        System.out.printf("broker stopped: /actuator/health/outbox 503 after %d ms (threshold %d ms, check every %d ms)%n",
                downMs, THRESHOLD.toMillis(), period);
        HttpResponse<String> down = health();
        assertThat(down.body()).contains("\"status\":\"DOWN\"", "\"brokerUnreachable\"",
                "bootstrap.servers=" + BROKER.bootstrapServers(), "periodic check", "\"relayRunning\":true");
        assertThat(relay.brokerUnreachable()).as("the relay had nothing to publish").isEmpty();
        assertThat(downMs).as("DOWN within the threshold, a check and its timeout, and the broker's shutdown")
                .isLessThan(THRESHOLD.toMillis() + 2 * period + 5_000);

        long restarted = System.nanoTime();
        BROKER.restart();
        await().atMost(WAIT).pollInterval(Duration.ofMillis(100)).until(() -> status() == 200);
        System.out.printf("broker back: /actuator/health/outbox 200 after %d ms from the restart call%n",
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - restarted));
        assertThat(health().body()).contains("\"status\":\"UP\"").doesNotContain("brokerUnreachable");
    }
}
