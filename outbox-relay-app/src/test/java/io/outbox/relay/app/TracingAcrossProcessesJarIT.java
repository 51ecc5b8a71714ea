package io.outbox.relay.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.outbox.OutboxMessage;
import io.outbox.OutboxMessageFactory;
import io.outbox.OutboxTracing;
import io.outbox.embedded.EmbeddedKafkaBroker;
import io.outbox.store.jdbc.JdbcOutboxStore;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Rule O1 across processes: the enqueue happens in this JVM inside a span of a test-scope SDK, the
 * executable jar publishes from its own JVM, and a consumer in this JVM continues the enqueuing
 * trace from the record. The relay process has no OpenTelemetry SDK (the jar ships the API only),
 * so it starts no PRODUCER span; the record still carries the creation context, unchanged.
 */
class TracingAcrossProcessesJarIT {

    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final StringSerializer STRING = new StringSerializer();
    private static final W3CTraceContextPropagator W3C = W3CTraceContextPropagator.getInstance();
    private static final String POSTGRES_URL = env("OUTBOX_TEST_POSTGRES_URL", "jdbc:postgresql://127.0.0.1:5432/test");
    private static final String POSTGRES_USER = env("OUTBOX_TEST_POSTGRES_USER", "postgres");
    private static final String POSTGRES_PASSWORD = env("OUTBOX_TEST_POSTGRES_PASSWORD", "unused");

    private static EmbeddedKafkaBroker broker;

    @TempDir
    Path dir;

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    @BeforeAll
    static void startBroker() {
        try (Connection c = DriverManager.getConnection(POSTGRES_URL, POSTGRES_USER, POSTGRES_PASSWORD)) {
            assertThat(c.isValid(5)).isTrue();
        } catch (SQLException e) {
            fail("PostgreSQL is not reachable at %s as %s (%s): run the tests with 'bash scripts/test.sh', which "
                    + "starts it", POSTGRES_URL, POSTGRES_USER, e);
        }
        broker = EmbeddedKafkaBroker.start();
    }

    @AfterAll
    static void stopBroker() {
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void o1_aSpanAroundAnEnqueueInThisProcessIsContinuedByAConsumerAfterTheStandaloneRelayPublishedIt()
            throws Exception {
        String prefix = "tr" + UUID.randomUUID().toString().replace("-", "").substring(0, 12) + "_";
        String topic = "traced-" + prefix.substring(0, prefix.length() - 1);
        broker.createTopic(topic, 4);
        InMemorySpanExporter exporter = InMemorySpanExporter.create();
        HikariConfig pool = new HikariConfig();
        pool.setJdbcUrl(POSTGRES_URL);
        pool.setUsername(POSTGRES_USER);
        pool.setPassword(POSTGRES_PASSWORD);
        pool.setMaximumPoolSize(2);
        try (OpenTelemetrySdk sdk = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter))
                        .build())
                .setPropagators(ContextPropagators.create(W3C)).build();
             HikariDataSource dataSource = new HikariDataSource(pool)) {
            JdbcOutboxStore store = JdbcOutboxStore.builder(dataSource).tablePrefix(prefix).build();
            store.createSchema();
            OutboxMessageFactory<String, String> messages = OutboxMessageFactory.builder(4).keySerializer(STRING)
                    .valueSerializer(STRING).tracing(OutboxTracing.using(sdk)).build();
            Span request = sdk.getTracer("test").spanBuilder("POST /orders").setSpanKind(SpanKind.SERVER).startSpan();
            List<OutboxMessage> enqueued = new ArrayList<>();
            Scope scope = request.makeCurrent();
            try (Connection c = dataSource.getConnection()) {
                c.setAutoCommit(false);
                for (int i = 0; i < 3; i++) {
                    enqueued.add(messages.create(topic, "order-" + i, "placed " + i));
                }
                store.writer().enqueue(c, enqueued);
                c.commit();
            } finally {
                scope.close();
                request.end();
            }

            Path config = dir.resolve("relay.properties");
            Files.write(config, List.of("store=jdbc", "store.url=" + POSTGRES_URL, "store.user=" + POSTGRES_USER,
                    "store.table.prefix=" + prefix, "store.pool.size=2", "relay.bucket.count=4",
                    "relay.poll.interval.ms=200", "relay.tracing.time.in.outbox.span=true"), StandardCharsets.UTF_8);
            List<ConsumerRecord<byte[], byte[]>> records;
            try (RelayProcess relay = RelayProcess.start(dir, Map.of("OUTBOX_STORE_PASSWORD", POSTGRES_PASSWORD,
                    "OUTBOX_KAFKA_BOOTSTRAP_SERVERS", broker.bootstrapServers(),
                    "OUTBOX_RELAY_ID", "traced-" + prefix), "--config", config.toString())) {
                records = read(topic, enqueued.size());
                assertThat(records).as("stderr of the relay:\n%s", relay.err()).hasSize(enqueued.size());
                relay.terminate();
                assertThat(relay.exitCode()).as("stderr:\n%s", relay.err()).isEqualTo(StandaloneRelay.EXIT_OK);
            }

            SpanContext enqueuing = request.getSpanContext();
            for (ConsumerRecord<byte[], byte[]> record : records) {
                assertThat(record.headers().toArray()).extracting(Header::key)
                        .as("the creation context, then the id; the relay process adds no context of its own")
                        .containsExactly("traceparent", "x-outbox-message-id");
                SpanContext carried = Span.fromContext(OutboxTracing.extract(record.headers(), W3C)).getSpanContext();
                assertThat(carried.getTraceId()).isEqualTo(enqueuing.getTraceId());
                assertThat(carried.getSpanId()).isEqualTo(enqueuing.getSpanId());
                Span consumer = sdk.getTracer("test").spanBuilder("process " + topic).setSpanKind(SpanKind.CONSUMER)
                        .setParent(OutboxTracing.extract(record.headers(), W3C)).startSpan();
                consumer.end();
            }
            List<SpanData> consumers = exporter.getFinishedSpanItems().stream()
                    .filter(s -> s.getKind() == SpanKind.CONSUMER).toList();
            assertThat(consumers).hasSize(enqueued.size()).allSatisfy(span -> {
                assertThat(span.getTraceId()).as("the consumer continues the enqueuing trace")
                        .isEqualTo(enqueuing.getTraceId());
                assertThat(span.getParentSpanId()).isEqualTo(enqueuing.getSpanId());
            });
            try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
                for (String table : List.of("messages_dead", "messages_failing", "messages", "leases", "relays")) {
                    s.execute("DROP TABLE IF EXISTS \"" + prefix + table + "\"");
                }
            }
        }
    }

    /** The topic's records from the beginning of every partition, until {@code expected} arrived. */
    private static List<ConsumerRecord<byte[], byte[]>> read(String topic, int expected) {
        List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
        Map<String, Object> settings = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        try (KafkaConsumer<byte[], byte[]> consumer =
                     new KafkaConsumer<>(settings, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic, WAIT).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (records.size() < expected && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
            }
        }
        return records;
    }
}
