package io.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The trace context stored at enqueue and read back on the consumer side (rule O1). */
class OutboxTracingTest {

    private static final StringSerializer STRING = new StringSerializer();
    private static final SpanContext REMOTE = SpanContext.create("0af7651916cd43dd8448eb211c80319c",
            "b7ad6b7169203331", TraceFlags.getSampled(), TraceState.builder().put("vendor", "v1").build());

    private final OpenTelemetrySdk sdk = OpenTelemetrySdk.builder()
            .setTracerProvider(SdkTracerProvider.builder().build())
            .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance())).build();

    @AfterEach
    void closeSdk() {
        sdk.close();
    }

    private OutboxMessageFactory<String, String> factory(OutboxTracing tracing) {
        return OutboxMessageFactory.builder(8).keySerializer(STRING).valueSerializer(STRING).tracing(tracing).build();
    }

    private static OutboxMessage inside(SpanContext context, java.util.function.Supplier<OutboxMessage> create) {
        Scope scope = Context.root().with(Span.wrap(context)).makeCurrent();
        try {
            return create.get();
        } finally {
            scope.close();
        }
    }

    @Test
    void o1_insideAValidSpanTheContextFollowsTheOwnHeadersAsTraceparentAndTracestate() {
        OutboxMessageFactory<String, String> messages = factory(OutboxTracing.using(sdk));
        OutboxMessage m = inside(REMOTE, () -> messages.create("orders", "order-1", "v",
                List.of(OutboxHeader.ofUtf8("kind", "created"))));

        assertThat(m.headers()).extracting(OutboxHeader::key).containsExactly("kind", "traceparent", "tracestate");
        assertThat(new String(m.headers().get(1).value())).isEqualTo(
                "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
        assertThat(new String(m.headers().get(2).value())).isEqualTo("vendor=v1");
        assertThat(OutboxTracing.using(sdk).creationContext(m).getTraceId()).isEqualTo(REMOTE.getTraceId());
    }

    @Test
    void o1_aTraceparentTheCallerSetIsKept() {
        OutboxHeader own = OutboxHeader.ofUtf8("traceparent", "00-11111111111111111111111111111111-2222222222222222-01");
        OutboxMessage m = inside(REMOTE, () -> factory(OutboxTracing.using(sdk)).create("orders", "k", "v",
                List.of(own)));

        assertThat(m.headers()).extracting(OutboxHeader::key).containsExactly("traceparent", "tracestate");
        assertThat(m.headers().get(0)).isEqualTo(own);
    }

    @Test
    void o1_outsideASpanNothingIsAdded() {
        assertThat(factory(OutboxTracing.using(sdk)).create("orders", "k", "v").headers()).isEmpty();
    }

    @Test
    void o1_theDisabledSettingAddsNothingInsideASpan() {
        OutboxMessage m = inside(REMOTE, () -> factory(OutboxTracing.disabled()).create("orders", "k", "v"));

        assertThat(m.headers()).isEmpty();
        assertThat(OutboxTracing.disabled().tracer().spanBuilder("x").startSpan().isRecording()).isFalse();
    }

    /** No test registers a global SDK: GlobalOpenTelemetry is the no-op API here. */
    @Test
    void o1_withoutAnSdkTheDefaultAddsNothingInsideAValidSpan() {
        OutboxMessage m = inside(REMOTE, () -> OutboxMessage.create("orders", "k", "v", STRING, STRING, List.of(), 8));

        assertThat(m.headers()).isEmpty();
        assertThat(OutboxTracing.global().creationContext(m).isValid()).isFalse();
    }

    @Test
    void o1_extractReadsTheContextFromKafkaHeadersAndNoneFromNullOrEmptyHeaders() {
        OutboxMessage m = inside(REMOTE, () -> factory(OutboxTracing.using(sdk)).create("orders", "k", "v"));
        RecordHeaders headers = new RecordHeaders();
        m.headers().forEach(headers::add);
        W3CTraceContextPropagator w3c = W3CTraceContextPropagator.getInstance();

        SpanContext extracted = Span.fromContext(OutboxTracing.extract(headers, w3c)).getSpanContext();

        assertThat(extracted.getTraceId()).isEqualTo(REMOTE.getTraceId());
        assertThat(extracted.getSpanId()).isEqualTo(REMOTE.getSpanId());
        assertThat(extracted.isRemote()).isTrue();
        assertThat(OutboxTracing.extract(null, w3c)).isSameAs(Context.root());
        assertThat(Span.fromContext(OutboxTracing.extract(new RecordHeaders(), w3c)).getSpanContext().isValid())
                .isFalse();
    }

    private ConsumerRecord<String, String> record(OutboxMessage m) {
        RecordHeaders headers = new RecordHeaders();
        m.headers().forEach(headers::add);
        headers.add(MessageIdReader.DEFAULT_HEADER, m.messageId().toString().getBytes(StandardCharsets.UTF_8));
        return new ConsumerRecord<>("orders", 3, 42L, ConsumerRecord.NO_TIMESTAMP, TimestampType.NO_TIMESTAMP_TYPE,
                -1, -1, "k", "v", headers, Optional.empty());
    }

    @Test
    void o1_i1_processRunsTheHandlingInAConsumerSpanWhoseParentIsTheCreationContext() {
        InMemorySpanExporter exporter = InMemorySpanExporter.create();
        try (OpenTelemetrySdk recording = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter))
                        .build())
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance())).build()) {
            OutboxTracing tracing = OutboxTracing.using(recording);
            OutboxMessage m = inside(REMOTE, () -> factory(tracing).create("orders", "k", "v"));

            SpanContext inHandler = tracing.process(record(m), "billing", () -> Span.current().getSpanContext());

            SpanData process = exporter.getFinishedSpanItems().get(0);
            assertThat(process.getName()).isEqualTo("process orders");
            assertThat(process.getKind()).isEqualTo(SpanKind.CONSUMER);
            assertThat(process.getTraceId()).as("the enqueuing trace").isEqualTo(REMOTE.getTraceId());
            assertThat(process.getParentSpanId()).isEqualTo(REMOTE.getSpanId());
            assertThat(inHandler.getSpanId()).as("current while the handler runs").isEqualTo(process.getSpanId());
            assertThat(process.getAttributes().asMap()).containsAllEntriesOf(Map.of(
                    AttributeKey.stringKey("messaging.system"), "kafka",
                    AttributeKey.stringKey("messaging.operation.type"), "process",
                    AttributeKey.stringKey("messaging.destination.name"), "orders",
                    AttributeKey.stringKey("messaging.destination.partition.id"), "3",
                    AttributeKey.longKey("messaging.kafka.offset"), 42L,
                    AttributeKey.stringKey("messaging.message.id"), m.messageId().toString(),
                    AttributeKey.stringKey("outbox.consumer"), "billing"));
            assertThat(Span.current().getSpanContext().isValid()).as("the scope is closed after").isFalse();

            exporter.reset();
            OutboxMessage untraced = factory(tracing).create("orders", "k", "v");
            IllegalStateException failure = new IllegalStateException("declined");
            assertThatThrownBy(() -> tracing.process(record(untraced), "billing", () -> {
                throw failure;
            })).isSameAs(failure);
            SpanData failed = exporter.getFinishedSpanItems().get(0);
            assertThat(failed.getParentSpanContext().isValid()).as("no creation context: a new trace").isFalse();
            assertThat(failed.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
            assertThat(failed.getEvents()).extracting(e -> e.getName()).containsExactly("exception");
        }
    }

    @Test
    void o1_disabledProcessRunsTheHandlingWithoutASpan() throws Exception {
        OutboxMessage m = inside(REMOTE, () -> factory(OutboxTracing.using(sdk)).create("orders", "k", "v"));
        assertThat(OutboxTracing.disabled().process(record(m), "billing", () -> Span.current().getSpanContext())
                .isValid()).isFalse();
        assertThat(OutboxTracing.global().process(record(m), "billing", () -> Span.current().getSpanContext())
                .isValid()).as("without an SDK").isFalse();
    }
}
