package io.outbox.relay.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.outbox.OutboxHeader;
import io.outbox.OutboxMessage;
import io.outbox.OutboxMessageFactory;
import io.outbox.OutboxTracing;
import io.outbox.relay.PublishResult;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.support.StoredMessages;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/** The record of a message as the relay publishes it, on its own (rules K2, K4). */
class OutboxRecordsTest {

    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC);
    private static final StringSerializer STRING = new StringSerializer();

    @Test
    void k2_k4_theRecordIsTheMessagesTopicPartitionKeyValueAndOwnHeadersThenTheId() {
        List<OutboxHeader> own = List.of(OutboxHeader.ofUtf8("trace", "t-1"), OutboxHeader.of("trace", null),
                OutboxHeader.ofUtf8("kind", "created"));
        OutboxMessage m = OutboxMessage.create("orders", "order-1", "v", STRING, STRING, own, 8, 5, CLOCK);

        ProducerRecord<byte[], byte[]> record = OutboxRecords.withMessageIdHeader("x-id").record(m);

        assertThat(record.topic()).isEqualTo("orders");
        assertThat(record.partition()).isEqualTo(5);
        assertThat(record.timestamp()).as("the producer stamps the send time (K4)").isNull();
        assertThat(record.key()).isSameAs(StoredMessages.key(m));
        assertThat(record.value()).isSameAs(StoredMessages.value(m));
        Header[] headers = record.headers().toArray();
        assertThat(headers).extracting(Header::key).containsExactly("trace", "trace", "kind", "x-id");
        assertThat(headers[1].value()).isNull();
        assertThat(new String(headers[3].value(), StandardCharsets.UTF_8)).isEqualTo(m.messageId().toString());
    }

    @Test
    void k4_withoutAnExplicitPartitionKafkaPlacesTheRecordByItsKey() {
        OutboxMessage keyed = OutboxMessage.create("orders", "order-1", "v", STRING, STRING, List.of(), 8, null, CLOCK);
        OutboxMessage keyless = OutboxMessage.create("orders", null, "", STRING, STRING, List.of(), 8, null, CLOCK);

        OutboxRecords records = OutboxRecords.withMessageIdHeader(KafkaOutboxPublisher.DEFAULT_MESSAGE_ID_HEADER);

        assertThat(records.record(keyed).partition()).isNull();
        assertThat(records.record(keyless).key()).isNull();
        assertThat(records.record(keyless).value()).as("an empty value stays empty, not null").isEmpty();
    }

    @Test
    void k2_aHeaderOfTheMessageNamedLikeTheIdHeaderIsLeftOutSoTheRecordCarriesOneId() {
        OutboxMessage forged = OutboxMessage.create("orders", "k", "v", STRING, STRING,
                List.of(OutboxHeader.ofUtf8("x-id", "forged"), OutboxHeader.ofUtf8("trace", "t-1")), 8, null, CLOCK);
        OutboxMessage plain = OutboxMessage.create("orders", "k", "v", STRING, STRING, List.of(), 8, null, CLOCK);
        OutboxRecords records = OutboxRecords.withMessageIdHeader("x-id");

        Header[] headers = records.record(forged).headers().toArray();

        assertThat(headers).extracting(Header::key).containsExactly("trace", "x-id");
        assertThat(new String(headers[1].value(), StandardCharsets.UTF_8)).isEqualTo(forged.messageId().toString());
        assertThat(records.carriesIdHeader(forged)).isTrue();
        assertThat(records.carriesIdHeader(plain)).isFalse();
    }

    @Test
    void k2_k4_bothModesSendExactlyTheRecordOfOutboxRecords() throws Exception {
        OutboxMessage m = OutboxMessage.create("orders", "order-1", "v", STRING, STRING,
                List.of(OutboxHeader.ofUtf8("trace", "t-1")), 8, null, CLOCK);
        OutboxRecords records = OutboxRecords.withMessageIdHeader("x-id");

        MockProducer<byte[], byte[]> plain = producer();
        try (KafkaOutboxPublisher idempotent = KafkaOutboxPublisher.builder(plain).messageIdHeader("x-id").build()) {
            assertThat(idempotent.publish(List.of(m)).get(5, TimeUnit.SECONDS)).isEqualTo(PublishResult.success(1));
        }
        MockProducer<byte[], byte[]> transactional = producer();
        try (KafkaOutboxPublisher perBucket = KafkaOutboxPublisher.builder(Map.of("bootstrap.servers", "127.0.0.1:9"))
                .transactions(KafkaTransactions.builder("records-test").build()).messageIdHeader("x-id")
                .producers(config -> transactional).build()) {
            perBucket.bucketsAcquired(Set.of(m.bucket()));
            assertThat(perBucket.publish(List.of(m)).get(5, TimeUnit.SECONDS)).isEqualTo(PublishResult.success(1));
        }

        assertThat(plain.history()).containsExactly(records.record(m));
        assertThat(transactional.history()).containsExactly(records.record(m));
    }

    private static MockProducer<byte[], byte[]> producer() {
        Node node = new Node(1, "localhost", 9092);
        Cluster cluster = new Cluster("c", List.of(node), List.of(new PartitionInfo("orders", 0, node,
                new Node[] {node}, new Node[] {node})), Set.of(), Set.of());
        return new MockProducer<>(cluster, true, null, new ByteArraySerializer(), new ByteArraySerializer());
    }

    @Test
    void aBlankIdHeaderIsRefusedNamingTheOptionAndTheValue() {
        assertThatThrownBy(() -> OutboxRecords.withMessageIdHeader(" "))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessage("publisher option message.id.header must not be blank but was ' '");
        assertThatThrownBy(() -> OutboxRecords.withMessageIdHeader(null))
                .isInstanceOf(OutboxMisconfigurationException.class).hasMessageContaining("but was null");
    }

    private static SpanData tracedSpan(List<OutboxMessage> batch, PublishResult result) {
        InMemorySpanExporter exporter = InMemorySpanExporter.create();
        try (OpenTelemetrySdk sdk = OpenTelemetrySdk.builder().setTracerProvider(SdkTracerProvider.builder()
                .addSpanProcessor(SimpleSpanProcessor.create(exporter)).build()).build()) {
            OutboxRecords records = OutboxRecords.withMessageIdHeader("x-id").withTracing(OutboxTracing.using(sdk));
            assertThat(records.traced(batch, () -> CompletableFuture.completedFuture(result)).join())
                    .isSameAs(result);
            assertThat(exporter.getFinishedSpanItems()).hasSize(1);
            return exporter.getFinishedSpanItems().get(0);
        }
    }

    @Test
    void o2_aSingleMessageSpanNamesItsTopicPartitionAndMessageId() {
        OutboxMessage m = OutboxMessage.create("orders", "k", "v", STRING, STRING, List.of(), 8, 5, CLOCK);

        SpanData span = tracedSpan(List.of(m), PublishResult.success(1));

        assertThat(span.getName()).isEqualTo("send orders");
        assertThat(span.getKind()).isEqualTo(SpanKind.PRODUCER);
        assertThat(span.getAttributes().asMap()).containsExactlyInAnyOrderEntriesOf(Map.of(
                AttributeKey.stringKey("messaging.system"), "kafka",
                AttributeKey.stringKey("messaging.operation.type"), "send",
                AttributeKey.stringKey("messaging.operation.name"), "send",
                AttributeKey.stringKey("messaging.destination.name"), "orders",
                AttributeKey.stringKey("messaging.message.id"), m.messageId().toString(),
                AttributeKey.stringKey("messaging.destination.partition.id"), "5",
                AttributeKey.longKey("messaging.kafka.destination.partition"), 5L,
                AttributeKey.longKey("outbox.acknowledged"), 1L));
        assertThat(span.getLinks()).as("a message enqueued outside a span has no creation context").isEmpty();
        assertThat(span.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
    }

    @Test
    void o2_aBatchOverTwoTopicsIsNamedSendAndCountsItsMessagesWithoutAPartition() {
        OutboxMessage a = OutboxMessage.create("orders", "k", "v", STRING, STRING, List.of(), 8, 1, CLOCK);
        OutboxMessage b = OutboxMessage.create("payments", "k", "v", STRING, STRING, List.of(), 8, 1, CLOCK);
        OutboxMessage c = OutboxMessage.create("orders", "k", "v", STRING, STRING, List.of(), 8, null, CLOCK);

        SpanData span = tracedSpan(List.of(a, b, c), PublishResult.success(3));

        assertThat(span.getName()).isEqualTo("send");
        assertThat(span.getAttributes().get(AttributeKey.longKey("messaging.batch.message_count"))).isEqualTo(3L);
        assertThat(span.getAttributes().get(AttributeKey.stringKey("messaging.destination.name"))).isNull();
        assertThat(span.getAttributes().get(AttributeKey.stringKey("messaging.message.id"))).isNull();
        assertThat(span.getAttributes().get(AttributeKey.longKey("messaging.kafka.destination.partition"))).isNull();
    }

    @Test
    void o2_aFailedPublishSetsTheErrorStatusAndRecordsTheFirstError() {
        OutboxMessage a = OutboxMessage.create("orders", "k", "v", STRING, STRING, List.of(), 8, null, CLOCK);
        OutboxMessage b = OutboxMessage.create("orders", "k", "w", STRING, STRING, List.of(), 8, null, CLOCK);

        SpanData span = tracedSpan(List.of(a, b), PublishResult.failure(1, new IllegalStateException("refused")));

        assertThat(span.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
        assertThat(span.getAttributes().get(AttributeKey.longKey("outbox.acknowledged"))).isEqualTo(1L);
        assertThat(span.getEvents()).extracting(e -> e.getName()).containsExactly("exception");
    }

    @Test
    void o2_theDisabledSettingAndAnEmptyBatchStartNoSpan() {
        OutboxMessage m = OutboxMessage.create("orders", "k", "v", STRING, STRING, List.of(), 8, null, CLOCK);
        PublishResult ok = PublishResult.success(1);
        OutboxRecords disabled = OutboxRecords.withMessageIdHeader("x-id").withTracing(OutboxTracing.disabled());
        InMemorySpanExporter exporter = InMemorySpanExporter.create();
        try (OpenTelemetrySdk sdk = OpenTelemetrySdk.builder().setTracerProvider(SdkTracerProvider.builder()
                .addSpanProcessor(SimpleSpanProcessor.create(exporter)).build()).build()) {
            OutboxRecords traced = OutboxRecords.withMessageIdHeader("x-id").withTracing(OutboxTracing.using(sdk));
            assertThat(disabled.traced(List.of(m), () -> CompletableFuture.completedFuture(ok)).join()).isSameAs(ok);
            assertThat(traced.traced(List.of(), () -> CompletableFuture.completedFuture(ok)).join()).isSameAs(ok);
        }
        assertThat(exporter.getFinishedSpanItems()).isEmpty();
    }

    @Test
    void o2_timeInOutboxSpansAreOffByDefault_onTheyRunFromCreationToTheAcknowledgementInTheCreationTrace() {
        InMemorySpanExporter exporter = InMemorySpanExporter.create();
        try (OpenTelemetrySdk sdk = OpenTelemetrySdk.builder().setTracerProvider(SdkTracerProvider.builder()
                .addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance())).build()) {
            OutboxTracing tracing = OutboxTracing.using(sdk);
            Clock created = Clock.fixed(Instant.now().minusSeconds(5).truncatedTo(ChronoUnit.MILLIS), ZoneOffset.UTC);
            OutboxMessageFactory<String, String> factory = OutboxMessageFactory.builder(8).keySerializer(STRING)
                    .valueSerializer(STRING).clock(created).tracing(tracing).build();
            Span request = sdk.getTracer("test").spanBuilder("POST /orders").startSpan();
            OutboxMessage traced;
            Scope scope = request.makeCurrent();
            try {
                traced = factory.create("orders", "k", "a");
            } finally {
                scope.close();
                request.end();
            }
            OutboxMessage untraced = factory.create("orders", "k", "b");
            OutboxMessage failed = factory.create("orders", "k", "c");
            List<OutboxMessage> batch = List.of(traced, untraced, failed);
            PublishResult twoOfThree = PublishResult.failure(2, new IllegalStateException("refused"));
            OutboxRecords records = OutboxRecords.withMessageIdHeader("x-id").withTracing(tracing);

            assertThat(records.tracingTimeInOutboxSpan()).isFalse();
            records.traced(batch, () -> CompletableFuture.completedFuture(twoOfThree)).join();
            assertThat(exporter.getFinishedSpanItems()).extracting(SpanData::getName)
                    .containsExactly("POST /orders", "send orders");
            exporter.reset();

            long beforePublish = TimeUnit.MILLISECONDS.toNanos(System.currentTimeMillis());
            records.withTimeInOutboxSpans(true).traced(batch, () -> CompletableFuture.completedFuture(twoOfThree))
                    .join();
            SpanData send = exporter.getFinishedSpanItems().stream().filter(s -> s.getKind() == SpanKind.PRODUCER)
                    .findFirst().orElseThrow();
            List<SpanData> waits = exporter.getFinishedSpanItems().stream()
                    .filter(s -> s.getName().equals("outbox orders")).toList();
            assertThat(waits).as("one per acknowledged message; the refused third has none").hasSize(2);
            assertThat(waits).allSatisfy(w -> {
                assertThat(w.getKind()).isEqualTo(SpanKind.INTERNAL);
                assertThat(w.getStartEpochNanos()).as("back-dated to createdAt")
                        .isEqualTo(TimeUnit.MILLISECONDS.toNanos(created.millis()));
                assertThat(w.getEndEpochNanos()).as("ended at the acknowledgement").isGreaterThanOrEqualTo(beforePublish);
                assertThat(w.getLinks()).extracting(l -> l.getSpanContext().getSpanId())
                        .containsExactly(send.getSpanId());
                assertThat(w.getAttributes().get(AttributeKey.stringKey("messaging.destination.name")))
                        .isEqualTo("orders");
            });
            assertThat(waits.get(0).getAttributes().get(AttributeKey.stringKey("messaging.message.id")))
                    .isEqualTo(traced.messageId().toString());
            assertThat(waits.get(0).getTraceId()).as("in the enqueuing trace")
                    .isEqualTo(request.getSpanContext().getTraceId());
            assertThat(waits.get(0).getParentSpanId()).isEqualTo(request.getSpanContext().getSpanId());
            assertThat(waits.get(1).getParentSpanContext().isValid()).as("no creation context: a trace of its own")
                    .isFalse();
            assertThat(waits.get(1).getAttributes().get(AttributeKey.stringKey("messaging.message.id")))
                    .isEqualTo(untraced.messageId().toString());
        }
    }
}
