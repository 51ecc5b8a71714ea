package io.outbox.spring.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.outbox.OutboxTracing;
import io.outbox.embedded.EmbeddedKafkaBroker;
import io.outbox.spring.OutboxRelayMonitor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Rules O1 and O2 through the starter, on the in-process broker and PostgreSQL: the application
 * defines an {@link OpenTelemetry} bean (an SDK with an in-memory exporter); the starter's outbox
 * stores the context of the span around {@code placeOrder} with the message, the starter's relay
 * publishes it in a PRODUCER span linked to that span and, with
 * {@code outbox.tracing.time-in-outbox-span=true}, a time-in-outbox span in the request's trace;
 * a consumer extracts the request's trace id from the record.
 */
@SpringBootTest(classes = {OrderServiceApplication.class, TracingSampleTest.ApplicationTracing.class},
        properties = "outbox.tracing.time-in-outbox-span=true")
class TracingSampleTest {

    static final String SUFFIX = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    static final EmbeddedKafkaBroker BROKER = EmbeddedKafkaBroker.start();
    static final InMemorySpanExporter EXPORTER = InMemorySpanExporter.create();

    /** The application's OpenTelemetry, as Spring Boot's OpenTelemetry support or the application defines it. */
    @TestConfiguration(proxyBeanMethods = false)
    static class ApplicationTracing {
        @Bean(destroyMethod = "close")
        OpenTelemetrySdk openTelemetry() {
            return OpenTelemetrySdk.builder()
                    .setTracerProvider(SdkTracerProvider.builder()
                            .addSpanProcessor(SimpleSpanProcessor.create(EXPORTER)).build())
                    .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance())).build();
        }
    }

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        BROKER.createTopic(OrderService.TOPIC, 4);
        SampleDatabase.register(registry, SUFFIX, BROKER, "200ms");
    }

    @AfterAll
    static void stopBroker() {
        BROKER.close();
    }

    @Autowired
    OrderService orders;
    @Autowired
    OutboxRelayMonitor monitor;
    @Autowired
    OpenTelemetry openTelemetry;
    @Autowired
    OutboxTracing tracing;

    @Test
    void o1_o2_aSpanAroundAnEnqueueIsLinkedFromThePublishSpanAndTheConsumerExtractsItsTraceId() {
        assertThat(tracing.openTelemetry()).as("the starter uses the application's OpenTelemetry bean")
                .isSameAs(openTelemetry);
        orders.createTable();
        await().atMost(Duration.ofSeconds(30)).until(() -> monitor.ownedBuckets().size() == 4);
        Span request = openTelemetry.getTracer("test").spanBuilder("POST /orders").setSpanKind(SpanKind.SERVER)
                .startSpan();
        Scope scope = request.makeCurrent();
        try {
            orders.placeOrder("order-traced", "customer-t", 100);
        } finally {
            scope.close();
            request.end();
        }
        orders.placeOrder("order-untraced", "customer-u", 100);
        SpanContext enqueuing = request.getSpanContext();

        List<ConsumerRecord<String, String>> records = read(2);
        assertThat(records).hasSize(2);
        for (ConsumerRecord<String, String> record : records) {
            SpanContext carried = Span.fromContext(OutboxTracing.extract(record.headers(),
                    openTelemetry.getPropagators().getTextMapPropagator())).getSpanContext();
            if (record.value().contains("order-untraced")) {
                assertThat(carried.isValid()).as("enqueued outside a span: no context").isFalse();
            } else {
                assertThat(carried.getTraceId()).as("the consumer extracts the request's trace")
                        .isEqualTo(enqueuing.getTraceId());
                assertThat(carried.getSpanId()).isEqualTo(enqueuing.getSpanId());
            }
        }

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            List<SpanData> spans = EXPORTER.getFinishedSpanItems();
            assertThat(spans.stream().filter(s -> s.getKind() == SpanKind.PRODUCER)
                    .flatMap(s -> s.getLinks().stream()).map(LinkData::getSpanContext).map(SpanContext::getSpanId))
                    .as("the publish span links to the span around the enqueue")
                    .containsExactly(enqueuing.getSpanId());
            assertThat(spans.stream().filter(s -> s.getName().equals("outbox " + OrderService.TOPIC)))
                    .as("one time-in-outbox span per message").hasSize(2)
                    .anySatisfy(s -> {
                        assertThat(s.getTraceId()).isEqualTo(enqueuing.getTraceId());
                        assertThat(s.getParentSpanId()).isEqualTo(enqueuing.getSpanId());
                    });
        });
    }

    private static List<ConsumerRecord<String, String>> read(int expected) {
        Map<String, Object> config = Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG, "test-" + UUID.randomUUID(),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<ConsumerRecord<String, String>> records = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer =
                     new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(List.of(OrderService.TOPIC));
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (records.size() < expected && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
            }
        }
        return records;
    }
}
