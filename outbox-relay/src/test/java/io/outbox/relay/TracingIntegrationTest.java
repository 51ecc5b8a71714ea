package io.outbox.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.outbox.MessageIdReader;
import io.outbox.OutboxMessage;
import io.outbox.OutboxMessageFactory;
import io.outbox.OutboxTracing;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.relay.kafka.KafkaTransactions;
import io.outbox.store.jdbc.JdbcDialect;
import io.outbox.store.jdbc.JdbcInbox;
import io.outbox.tck.InMemoryOutboxStore;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Traces from the enqueuing request to the consumer on the in-process broker (rules O1, O2): the
 * SDK here is a test-scope OpenTelemetrySdk with an in-memory exporter, never the global one, so
 * the last test sees the API without an SDK.
 */
class TracingIntegrationTest {

    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final StringSerializer STRING = new StringSerializer();
    private static final W3CTraceContextPropagator W3C = W3CTraceContextPropagator.getInstance();
    @RegisterExtension
    static final KafkaBroker KAFKA = new KafkaBroker();

    private final InMemorySpanExporter exporter = InMemorySpanExporter.create();
    private final SdkTracerProvider tracerProvider = SdkTracerProvider.builder()
            .addSpanProcessor(SimpleSpanProcessor.create(exporter)).build();
    private final OpenTelemetrySdk sdk = OpenTelemetrySdk.builder().setTracerProvider(tracerProvider)
            .setPropagators(ContextPropagators.create(W3C)).build();

    @AfterEach
    void closeSdk() {
        sdk.close();
    }

    private static Map<String, Object> producerConfig() {
        Map<String, Object> config = KAFKA.broker().adminConfig();
        config.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        return config;
    }

    private static RelayOptions options(String relayId) {
        return RelayOptions.builder().relayId(relayId).bucketCount(4).batchSize(50)
                .pollInterval(Duration.ofMillis(50)).leaseDuration(Duration.ofSeconds(2))
                .leaseRenewInterval(Duration.ofMillis(500)).errorBackoff(Duration.ofMillis(100))
                .maxErrorBackoff(Duration.ofMillis(300)).closeTimeout(Duration.ofSeconds(20)).build();
    }

    private static String header(ConsumerRecord<byte[], byte[]> record, String name) {
        Header h = record.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }

    @ParameterizedTest(name = "transactional={0}")
    @ValueSource(booleans = {false, true})
    void o1_o2_aSpanAroundAnEnqueueIsLinkedFromThePublishSpanAndTheConsumerContinuesItsTrace(boolean transactional) {
        String topic = "traced-" + (transactional ? "tx" : "idempotent");
        KAFKA.broker().createTopic(topic, 1);
        OutboxTracing tracing = OutboxTracing.using(sdk);
        OutboxMessageFactory<String, String> messages = OutboxMessageFactory.builder(4).keySerializer(STRING)
                .valueSerializer(STRING).tracing(tracing).build();
        Span request = sdk.getTracer("test").spanBuilder("POST /orders").startSpan();
        OutboxMessage first;
        OutboxMessage second;
        Scope scope = request.makeCurrent();
        try {
            first = messages.create(topic, "order-1", "a");
            second = messages.create(topic, "order-2", "b");
        } finally {
            scope.close();
            request.end();
        }
        OutboxMessage untraced = messages.create(topic, "order-3", "c");
        SpanContext enqueuing = request.getSpanContext();
        InMemoryOutboxStore store = InMemoryOutboxStore.builder().build();
        store.enqueue(first, second, untraced);

        KafkaOutboxPublisher.Builder builder = KafkaOutboxPublisher.builder(producerConfig()).tracing(tracing);
        if (transactional) {
            builder.transactions(KafkaTransactions.builder(topic).build());
        }
        try (KafkaOutboxPublisher publisher = builder.build();
             OutboxRelay relay = OutboxRelay.builder(store, publisher).options(options(topic)).build()) {
            relay.start();
            await().atMost(WAIT).until(() -> acknowledged(topic) == 3);
        }

        List<SpanData> sends = producerSpans(topic);
        assertThat(sends).allSatisfy(send -> {
            assertThat(send.getName()).isEqualTo("send " + topic);
            assertThat(send.getParentSpanContext().isValid()).as("a batch span has no parent").isFalse();
            assertThat(send.getAttributes().get(AttributeKey.stringKey("messaging.system"))).isEqualTo("kafka");
            assertThat(send.getAttributes().get(AttributeKey.stringKey("messaging.operation.type")))
                    .isEqualTo("send");
            assertThat(send.getAttributes().get(AttributeKey.stringKey("messaging.destination.name")))
                    .isEqualTo(topic);
            assertThat(send.getStatus().getStatusCode()).isNotEqualTo(StatusCode.ERROR);
        });
        String enqueuingIds = enqueuing.getTraceId() + "/" + enqueuing.getSpanId();
        assertThat(sends.stream().flatMap(s -> s.getLinks().stream()).map(LinkData::getSpanContext)
                .map(c -> c.getTraceId() + "/" + c.getSpanId()))
                .as("one link per traced message, to the span around its enqueue")
                .containsExactly(enqueuingIds, enqueuingIds);

        List<ConsumerRecord<byte[], byte[]>> records =
                TopicReader.readAll(KAFKA.broker().bootstrapServers(), topic, "read_committed");
        assertThat(records).hasSize(3);
        for (ConsumerRecord<byte[], byte[]> record : records) {
            String key = new String(record.key(), StandardCharsets.UTF_8);
            SpanContext carried = Span.fromContext(OutboxTracing.extract(record.headers(), W3C)).getSpanContext();
            if (key.equals("order-3")) {
                assertThat(header(record, "traceparent")).isNull();
                assertThat(carried.isValid()).isFalse();
                continue;
            }
            assertThat(header(record, "tracestate")).as("an empty trace state is not written").isNull();
            assertThat(carried.getTraceId()).as(key).isEqualTo(enqueuing.getTraceId());
            assertThat(carried.getSpanId()).as(key).isEqualTo(enqueuing.getSpanId());
            Span consumer = sdk.getTracer("test").spanBuilder("process " + topic).setSpanKind(SpanKind.CONSUMER)
                    .setParent(OutboxTracing.extract(record.headers(), W3C)).startSpan();
            consumer.end();
            assertThat(consumer.getSpanContext().getTraceId()).as("the consumer continues the enqueuing trace")
                    .isEqualTo(enqueuing.getTraceId());
        }
    }

    private long acknowledged(String topic) {
        return producerSpans(topic).stream()
                .map(s -> s.getAttributes().get(AttributeKey.longKey("outbox.acknowledged")))
                .mapToLong(n -> n == null ? 0 : n).sum();
    }

    private List<SpanData> producerSpans(String topic) {
        return exporter.getFinishedSpanItems().stream()
                .filter(s -> s.getKind() == SpanKind.PRODUCER && s.getName().endsWith(topic)).toList();
    }

    /**
     * No SDK registered (GlobalOpenTelemetry is the no-op): even inside a valid span context the
     * global propagator writes nothing, the relay's default tracing starts no recording span, and
     * the record carries only the message id header.
     */
    @Test
    void o1_withoutAnSdkNothingIsAddedAndNothingFails() {
        String topic = "untraced-global";
        KAFKA.broker().createTopic(topic, 1);
        OutboxMessageFactory<String, String> messages = OutboxMessageFactory.builder(4).keySerializer(STRING)
                .valueSerializer(STRING).build();
        SpanContext remote = SpanContext.create("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331",
                TraceFlags.getSampled(), TraceState.getDefault());
        OutboxMessage message;
        Scope scope = Context.root().with(Span.wrap(remote)).makeCurrent();
        try {
            message = messages.create(topic, "order-1", "a");
        } finally {
            scope.close();
        }
        assertThat(message.headers()).isEmpty();
        InMemoryOutboxStore store = InMemoryOutboxStore.builder().build();
        store.enqueue(message);

        try (KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(producerConfig()).build();
             OutboxRelay relay = OutboxRelay.builder(store, publisher).options(options(topic)).build()) {
            relay.start();
            await().atMost(WAIT).until(() -> store.pendingBuckets().isEmpty());
        }
        List<ConsumerRecord<byte[], byte[]>> records = TopicReader.readAll(KAFKA.broker().bootstrapServers(), topic);
        assertThat(records).hasSize(1);
        assertThat(records.get(0).headers().toArray()).extracting(Header::key)
                .containsExactly(KafkaOutboxPublisher.DEFAULT_MESSAGE_ID_HEADER);
        assertThat(Span.fromContext(OutboxTracing.extract(records.get(0).headers())).getSpanContext().isValid())
                .isFalse();
        assertThat(exporter.getFinishedSpanItems()).isEmpty();
    }

    /**
     * The inbox takes the record's context (rules O1, I1): a consumer hands each record's inbox
     * check and effect to {@link OutboxTracing#process}, which runs them in a CONSUMER span whose
     * parent is the span around the enqueue, on a JdbcInbox on PostgreSQL; a repeat of the record
     * is recognised by the inbox and joins the same trace.
     */
    @Test
    void o1_i1_theInboxHandlingOfARecordRunsInAConsumerSpanOfTheEnqueuingTrace() throws Exception {
        String topic = "traced-inbox";
        KAFKA.broker().createTopic(topic, 1);
        OutboxTracing tracing = OutboxTracing.using(sdk);
        OutboxMessageFactory<String, String> messages = OutboxMessageFactory.builder(4).keySerializer(STRING)
                .valueSerializer(STRING).tracing(tracing).build();
        Span request = sdk.getTracer("test").spanBuilder("POST /orders").startSpan();
        OutboxMessage message;
        Scope scope = request.makeCurrent();
        try {
            message = messages.create(topic, "order-1", "a");
        } finally {
            scope.close();
            request.end();
        }
        InMemoryOutboxStore store = InMemoryOutboxStore.builder().build();
        store.enqueue(message);
        try (KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(producerConfig()).tracing(tracing).build();
             OutboxRelay relay = OutboxRelay.builder(store, publisher).options(options(topic)).build()) {
            relay.start();
            await().atMost(WAIT).until(() -> store.pendingBuckets().isEmpty());
        }
        ConsumerRecord<byte[], byte[]> record =
                TopicReader.readAll(KAFKA.broker().bootstrapServers(), topic).get(0);

        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setURL(System.getenv().getOrDefault("OUTBOX_TEST_POSTGRES_URL",
                "jdbc:postgresql://127.0.0.1:5432/test"));
        dataSource.setUser(System.getenv().getOrDefault("OUTBOX_TEST_POSTGRES_USER", "postgres"));
        String password = System.getenv("OUTBOX_TEST_POSTGRES_PASSWORD");
        if (password != null) {
            dataSource.setPassword(password);
        }
        String table = "inbox_traced_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        JdbcInbox inbox = JdbcInbox.builder(dataSource).table(table).build();
        inbox.createSchema();
        List<Boolean> firsts = new ArrayList<>();
        List<SpanContext> handlerSpans = new ArrayList<>();
        try {
            for (int delivery = 0; delivery < 2; delivery++) { // the record, then a repeat of it
                firsts.add(tracing.process(record, "billing", () -> {
                    handlerSpans.add(Span.current().getSpanContext());
                    try (Connection c = dataSource.getConnection()) {
                        c.setAutoCommit(false);
                        boolean first = inbox.firstDelivery(c, "billing", MessageIdReader.messageId(record));
                        c.commit();
                        return first;
                    }
                }));
            }
        } finally {
            try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
                s.execute(inbox.dropStatement(JdbcDialect.POSTGRESQL));
            }
        }

        assertThat(firsts).containsExactly(true, false);
        List<SpanData> processes = exporter.getFinishedSpanItems().stream()
                .filter(s -> s.getKind() == SpanKind.CONSUMER).toList();
        assertThat(processes).hasSize(2).allSatisfy(p -> {
            assertThat(p.getName()).isEqualTo("process " + topic);
            assertThat(p.getTraceId()).isEqualTo(request.getSpanContext().getTraceId());
            assertThat(p.getParentSpanId()).as("a child of the span around the enqueue")
                    .isEqualTo(request.getSpanContext().getSpanId());
            assertThat(p.getAttributes().get(AttributeKey.stringKey("messaging.message.id")))
                    .isEqualTo(message.messageId().toString());
        });
        assertThat(handlerSpans).extracting(SpanContext::getSpanId).as("the handler runs inside its span")
                .containsExactly(processes.get(0).getSpanId(), processes.get(1).getSpanId());
    }
}
