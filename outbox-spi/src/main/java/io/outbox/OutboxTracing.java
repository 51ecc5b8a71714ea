package io.outbox;

import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * Where outbox messages get their trace context and where a consumer finds it again (rule O1), on
 * the OpenTelemetry API only. At enqueue, when the current span context is valid, the context is
 * written with the configured propagator (W3C {@code traceparent}/{@code tracestate} by default) as
 * message headers; the relay copies the message's headers onto its record, so a consumer
 * {@linkplain #extract(Headers) extracts} the enqueuing trace from the record.
 *
 * <p>Without an OpenTelemetry SDK the API is a no-op: no span is ever valid, so nothing is added.
 * Three settings: {@link #global()} (the default; {@link GlobalOpenTelemetry}, looked up at each
 * use, so an SDK registered later is seen), {@link #using(OpenTelemetry)} and {@link #disabled()}.
 * Immutable and thread-safe.
 */
public final class OutboxTracing {

    /** The instrumentation scope name of the relay's spans. */
    public static final String INSTRUMENTATION_NAME = "io.outbox";

    private static final AttributeKey<String> MESSAGING_SYSTEM = AttributeKey.stringKey("messaging.system");
    private static final AttributeKey<String> OPERATION_TYPE = AttributeKey.stringKey("messaging.operation.type");
    private static final AttributeKey<String> OPERATION_NAME = AttributeKey.stringKey("messaging.operation.name");
    private static final AttributeKey<String> DESTINATION = AttributeKey.stringKey("messaging.destination.name");
    private static final AttributeKey<String> PARTITION_ID =
            AttributeKey.stringKey("messaging.destination.partition.id");
    private static final AttributeKey<Long> OFFSET = AttributeKey.longKey("messaging.kafka.offset");
    private static final AttributeKey<String> MESSAGE_ID = AttributeKey.stringKey("messaging.message.id");
    private static final AttributeKey<String> CONSUMER = AttributeKey.stringKey("outbox.consumer");

    private static final OutboxTracing GLOBAL = new OutboxTracing(GlobalOpenTelemetry::get, "global");
    private static final OutboxTracing DISABLED = new OutboxTracing(OpenTelemetry::noop, "disabled");

    private static final TextMapGetter<Headers> HEADERS_GETTER = new TextMapGetter<>() {
        @Override
        public String get(Headers carrier, String key) {
            if (carrier == null) {
                return null;
            }
            Header header = carrier.lastHeader(key);
            return header == null || header.value() == null ? null
                    : new String(header.value(), StandardCharsets.UTF_8);
        }
    };

    private static final TextMapGetter<List<OutboxHeader>> MESSAGE_GETTER = new TextMapGetter<>() {
        @Override
        public String get(List<OutboxHeader> carrier, String key) {
            if (carrier == null) {
                return null;
            }
            for (int i = carrier.size() - 1; i >= 0; i--) { // the last one wins, as Headers.lastHeader
                OutboxHeader header = carrier.get(i);
                if (header.key().equals(key)) {
                    return header.value() == null ? null : new String(header.value(), StandardCharsets.UTF_8);
                }
            }
            return null;
        }
    };

    private final Supplier<OpenTelemetry> openTelemetry;
    private final String description;

    private OutboxTracing(Supplier<OpenTelemetry> openTelemetry, String description) {
        this.openTelemetry = openTelemetry;
        this.description = description;
    }

    /**
     * The default: {@link GlobalOpenTelemetry}'s propagators and tracer, looked up at each use.
     *
     * @return the global setting; never null
     */
    public static OutboxTracing global() {
        return GLOBAL;
    }

    /**
     * Tracing with an explicit OpenTelemetry instance (the application's, not the global one).
     *
     * @param openTelemetry the instance whose propagators and tracer are used; not null
     * @return the setting
     * @throws NullPointerException if {@code openTelemetry} is null
     */
    public static OutboxTracing using(OpenTelemetry openTelemetry) {
        Objects.requireNonNull(openTelemetry, "openTelemetry must not be null");
        return new OutboxTracing(() -> openTelemetry, "using " + openTelemetry);
    }

    /**
     * No tracing: no context is stored at enqueue and the relay starts no span.
     *
     * @return the disabled setting; never null
     */
    public static OutboxTracing disabled() {
        return DISABLED;
    }

    /**
     * The OpenTelemetry instance this setting resolves to now; the no-op instance when disabled.
     *
     * @return the instance; never null
     */
    public OpenTelemetry openTelemetry() {
        return openTelemetry.get();
    }

    /**
     * The tracer for spans of the outbox (scope {@value #INSTRUMENTATION_NAME}).
     *
     * @return the tracer; a no-op tracer when disabled or without an SDK
     */
    public Tracer tracer() {
        return openTelemetry().getTracer(INSTRUMENTATION_NAME);
    }

    /**
     * The headers that carry the current trace context (rule O1): what the propagator writes when
     * the current span context is valid, in its order, leaving out names already in
     * {@code existing} (a context the caller set itself wins).
     *
     * @param existing the message's own headers; not null
     * @return the headers to append; empty when disabled, without an SDK, or outside a valid span
     */
    List<OutboxHeader> currentContextHeaders(List<OutboxHeader> existing) {
        if (this == DISABLED || !Span.current().getSpanContext().isValid()) {
            return List.of(); // the no-op case stops here: no map, no propagator
        }
        Map<String, String> fields = new LinkedHashMap<>();
        openTelemetry().getPropagators().getTextMapPropagator().inject(Context.current(), fields, Map::put);
        List<OutboxHeader> headers = new ArrayList<>(fields.size());
        fields.forEach((key, value) -> {
            if (existing.stream().noneMatch(h -> h.key().equals(key))) {
                headers.add(OutboxHeader.ofUtf8(key, value));
            }
        });
        return headers;
    }

    /**
     * The creation context a message carries in its headers (rule O2 links the publish span to it).
     *
     * @param message the message; not null
     * @return the span context; invalid when the message carries none or tracing is disabled
     * @throws NullPointerException if {@code message} is null
     */
    public SpanContext creationContext(OutboxMessage message) {
        Objects.requireNonNull(message, "message must not be null");
        if (this == DISABLED) {
            return SpanContext.getInvalid();
        }
        Context context = openTelemetry().getPropagators().getTextMapPropagator()
                .extract(Context.root(), message.headers(), MESSAGE_GETTER);
        return Span.fromContext(context).getSpanContext();
    }

    /**
     * Continues the enqueuing trace on the consumer side: the context the record's headers carry,
     * read with {@link GlobalOpenTelemetry}'s propagator. Make the consumer's span a child of it
     * (or link it) to tie the consumer's work to the request that enqueued the message.
     *
     * <pre>{@code
     * Context parent = OutboxTracing.extract(record.headers());
     * Span span = tracer.spanBuilder("process orders").setParent(parent)
     *         .setSpanKind(SpanKind.CONSUMER).startSpan();
     * }</pre>
     *
     * @param headers the consumer record's headers; null counts as none
     * @return a context holding the enqueuing span context, or the root context when the headers
     *     carry none (or without an SDK, where the propagator is a no-op)
     */
    public static Context extract(Headers headers) {
        return extract(headers, GlobalOpenTelemetry.getPropagators().getTextMapPropagator());
    }

    /**
     * {@link #extract(Headers)} with an explicit propagator.
     *
     * @param headers the consumer record's headers; null counts as none
     * @param propagator the propagator that wrote them at enqueue; not null
     * @return the extracted context, or the root context when the headers carry none
     * @throws NullPointerException if {@code propagator} is null
     */
    public static Context extract(Headers headers, TextMapPropagator propagator) {
        Objects.requireNonNull(propagator, "propagator must not be null");
        return headers == null ? Context.root() : propagator.extract(Context.root(), headers, HEADERS_GETTER);
    }

    /**
     * Work on one consumed record, run by {@link #process}.
     *
     * @param <T> the result
     * @param <E> the checked exception the work may throw
     */
    @FunctionalInterface
    public interface RecordWork<T, E extends Exception> {
        /**
         * Does the work.
         *
         * @return the result; may be null
         * @throws E the work's own failure
         */
        T run() throws E;
    }

    /**
     * Runs the consumer's handling of a record, typically its inbox check and business effect
     * (rule I1), in a CONSUMER span {@code process <topic>} whose parent is the record's creation
     * context (rule O1), so the handling joins the trace of the request that enqueued the message.
     * A record without a creation context gets a span of a new trace. The span is current while
     * {@code work} runs, on the calling thread: spans it starts (a database call, a message it
     * enqueues in turn) are its children. Attributes per the OpenTelemetry messaging conventions:
     * {@code messaging.system=kafka}, {@code messaging.operation.type} and {@code .name}
     * {@code process}, {@code messaging.destination.name}, {@code messaging.destination.partition.id},
     * {@code messaging.kafka.offset}, {@code messaging.message.id} (the value of the
     * {@code x-outbox-message-id} header, when the record has one) and {@code outbox.consumer}.
     * When {@code work} throws, the span records the exception, gets the error status and the
     * exception is rethrown unchanged. Disabled or without an SDK, {@code work} runs with no span
     * made (the context is then not even read).
     *
     * <pre>{@code
     * tracing.process(record, "billing", () -> {
     *     try (Connection c = dataSource.getConnection()) {
     *         c.setAutoCommit(false);
     *         if (inbox.firstDelivery(c, "billing", MessageIdReader.messageId(record))) {
     *             charge(c, record.value());
     *         }
     *         c.commit();
     *     }
     *     return null;
     * });
     * }</pre>
     *
     * @param record the consumed record; not null
     * @param consumerName the inbox consumer name (recorded as {@code outbox.consumer}); not null
     * @param work the handling; not null
     * @param <T> the work's result
     * @param <E> the checked exception the work may throw
     * @return what {@code work} returned
     * @throws E what {@code work} threw
     * @throws NullPointerException if an argument is null
     */
    public <T, E extends Exception> T process(ConsumerRecord<?, ?> record, String consumerName,
                                              RecordWork<T, E> work) throws E {
        Objects.requireNonNull(record, "record must not be null");
        Objects.requireNonNull(consumerName, "consumerName must not be null");
        Objects.requireNonNull(work, "work must not be null");
        if (this == DISABLED) {
            return work.run();
        }
        OpenTelemetry otel = openTelemetry();
        Tracer tracer = otel.getTracer(INSTRUMENTATION_NAME);
        Context parent = extract(record.headers(), otel.getPropagators().getTextMapPropagator());
        Span span = tracer.spanBuilder("process " + record.topic()).setSpanKind(SpanKind.CONSUMER)
                .setParent(parent).startSpan();
        if (span.isRecording()) {
            span.setAttribute(MESSAGING_SYSTEM, "kafka");
            span.setAttribute(OPERATION_TYPE, "process");
            span.setAttribute(OPERATION_NAME, "process");
            span.setAttribute(DESTINATION, record.topic());
            span.setAttribute(PARTITION_ID, Integer.toString(record.partition()));
            span.setAttribute(OFFSET, record.offset());
            span.setAttribute(CONSUMER, consumerName);
            String messageId = HEADERS_GETTER.get(record.headers(), MessageIdReader.DEFAULT_HEADER);
            if (messageId != null) {
                span.setAttribute(MESSAGE_ID, messageId);
            }
        }
        Scope scope = span.makeCurrent();
        try {
            return work.run();
        } catch (Exception | Error e) {
            span.recordException(e);
            span.setStatus(StatusCode.ERROR, e.getClass().getName());
            throw e;
        } finally {
            scope.close();
            span.end();
        }
    }

    @Override
    public String toString() {
        return "OutboxTracing[" + description + "]";
    }
}
