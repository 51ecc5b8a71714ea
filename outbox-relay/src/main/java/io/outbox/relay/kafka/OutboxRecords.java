package io.outbox.relay.kafka;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Context;
import io.outbox.OutboxHeader;
import io.outbox.OutboxMessage;
import io.outbox.OutboxTracing;
import io.outbox.relay.PublishResult;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.support.StoredMessages;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * The Kafka record of an outbox message exactly as the relay publishes it (rules K2, K4), for
 * anything else that sends outbox messages and must send the same records (a Kafka Connect source
 * task, a publisher of your own):
 * <ul>
 *   <li>the message's topic, and its explicit partition when it has one (null otherwise, so Kafka
 *       places the record by its key, the same hash its bucket was computed with);</li>
 *   <li>the message's key and value bytes (null and empty stay different);</li>
 *   <li>the message's own headers, in order, repeats and null values included, then one header
 *       named {@link #messageIdHeader()} holding the message id as a UUID string in UTF-8 (K2). A
 *       header of the message with that name is left out, so a record carries exactly one id;</li>
 *   <li>no timestamp: the producer stamps the send time, never {@link OutboxMessage#createdAt()}
 *       (K4).</li>
 * </ul>
 * The record shares the message's key and value arrays instead of copying them; neither the
 * producer nor the relay writes to them, and no caller may. The trace context a message got at
 * enqueue (rule O1) is among its headers, so the record carries it unchanged.
 *
 * <p>{@link #traced} wraps the publishing of a batch in its PRODUCER span (rule O2) and, when
 * {@linkplain #withTimeInOutboxSpans(boolean) turned on}, gives each acknowledged message a span for
 * its time in the outbox. Immutable and thread-safe.
 */
public final class OutboxRecords {

    static final AttributeKey<String> MESSAGING_SYSTEM = AttributeKey.stringKey("messaging.system");
    static final AttributeKey<String> OPERATION_TYPE = AttributeKey.stringKey("messaging.operation.type");
    static final AttributeKey<String> OPERATION_NAME = AttributeKey.stringKey("messaging.operation.name");
    static final AttributeKey<String> DESTINATION = AttributeKey.stringKey("messaging.destination.name");
    static final AttributeKey<Long> BATCH_COUNT = AttributeKey.longKey("messaging.batch.message_count");
    static final AttributeKey<String> PARTITION_ID = AttributeKey.stringKey("messaging.destination.partition.id");
    static final AttributeKey<Long> KAFKA_PARTITION = AttributeKey.longKey("messaging.kafka.destination.partition");
    static final AttributeKey<String> MESSAGE_ID = AttributeKey.stringKey("messaging.message.id");
    static final AttributeKey<Long> ACKNOWLEDGED = AttributeKey.longKey("outbox.acknowledged");
    static final AttributeKey<Long> BUCKET = AttributeKey.longKey("outbox.bucket");

    private final String messageIdHeader;
    private final OutboxTracing tracing;
    private final boolean tracingTimeInOutboxSpan;

    private OutboxRecords(String messageIdHeader, OutboxTracing tracing, boolean tracingTimeInOutboxSpan) {
        this.messageIdHeader = messageIdHeader;
        this.tracing = tracing;
        this.tracingTimeInOutboxSpan = tracingTimeInOutboxSpan;
    }

    /**
     * Records that carry the message id in the given header.
     *
     * @param messageIdHeader the header name, not blank; the relay's default is
     *     {@value KafkaOutboxPublisher#DEFAULT_MESSAGE_ID_HEADER}
     * @return the record preparation
     * @throws OutboxMisconfigurationException if the name is null or blank, naming the publisher
     *     option {@value KafkaOutboxPublisher#MESSAGE_ID_HEADER_CONFIG} and the value
     */
    public static OutboxRecords withMessageIdHeader(String messageIdHeader) {
        if (messageIdHeader == null || messageIdHeader.isBlank()) {
            throw new OutboxMisconfigurationException("publisher option "
                    + KafkaOutboxPublisher.MESSAGE_ID_HEADER_CONFIG + " must not be blank but was "
                    + (messageIdHeader == null ? null : "'" + messageIdHeader + "'"));
        }
        return new OutboxRecords(messageIdHeader, OutboxTracing.global(), false);
    }

    /**
     * The same records, with publish spans from another tracing setting.
     *
     * @param tracing the setting; {@link OutboxTracing#disabled()} starts no span; not null
     * @return the record preparation with that setting (the default is {@link OutboxTracing#global()})
     * @throws NullPointerException if {@code tracing} is null
     */
    public OutboxRecords withTracing(OutboxTracing tracing) {
        return new OutboxRecords(messageIdHeader, Objects.requireNonNull(tracing, "tracing must not be null"),
                tracingTimeInOutboxSpan);
    }

    /**
     * The same records, with or without a span per message for its time in the outbox (rule O2,
     * publisher option {@value KafkaOutboxPublisher#TIME_IN_OUTBOX_SPAN_CONFIG}): an INTERNAL span
     * named {@code outbox <topic>}, child of the message's creation context (a trace of its own
     * when it has none), started at the message's {@link OutboxMessage#createdAt() createdAt} and
     * ended when the broker acknowledged the batch, linked to the batch's PRODUCER span. Only
     * acknowledged messages get one; a message published again gets one per acknowledged publish.
     *
     * @param on true to record them; off by default
     * @return the record preparation with that setting
     */
    public OutboxRecords withTimeInOutboxSpans(boolean on) {
        return new OutboxRecords(messageIdHeader, tracing, on);
    }

    /**
     * Whether acknowledged messages get a time-in-outbox span ({@link #withTimeInOutboxSpans}).
     *
     * @return true when on
     */
    public boolean tracingTimeInOutboxSpan() {
        return tracingTimeInOutboxSpan;
    }

    /**
     * The tracing setting of the publish spans.
     *
     * @return the setting; never null
     */
    public OutboxTracing tracing() {
        return tracing;
    }

    /**
     * Publishes a batch inside its PRODUCER span (rule O2), per the OpenTelemetry messaging
     * conventions: named {@code send <topic>} ({@code send} when the batch spans topics), without
     * a parent, with {@code messaging.system=kafka}, {@code messaging.operation.type=send},
     * {@code messaging.destination.name} (one topic), {@code messaging.batch.message_count} (two
     * messages or more), {@code messaging.message.id} (one message), the partition
     * ({@code messaging.destination.partition.id} and {@code messaging.kafka.destination.partition})
     * when every message names the same one, {@code outbox.acknowledged}, and a link to each
     * message's creation context. The span ends when the publish completes; a failed publish sets
     * the error status and records the first error. Without an SDK the span does not record and
     * nothing per message is read. With {@link #tracingTimeInOutboxSpan()}, each acknowledged message's
     * time-in-outbox span ends at that moment too.
     *
     * @param batch the batch; not null; an empty batch gets no span
     * @param publish starts the publish; called once, on the calling thread
     * @return the publish's future, completed after the span ended
     * @throws NullPointerException if an argument is null
     */
    public CompletableFuture<PublishResult> traced(List<OutboxMessage> batch,
                                                   Supplier<CompletableFuture<PublishResult>> publish) {
        Objects.requireNonNull(batch, "batch must not be null");
        Objects.requireNonNull(publish, "publish must not be null");
        if (batch.isEmpty()) {
            return publish.get();
        }
        String topic = batch.get(0).topic();
        Integer partition = batch.get(0).partition();
        for (OutboxMessage m : batch) {
            topic = m.topic().equals(topic) ? topic : null;
            partition = Objects.equals(m.partition(), partition) ? partition : null;
        }
        Span span = tracing.tracer().spanBuilder(topic == null ? "send" : "send " + topic)
                .setSpanKind(SpanKind.PRODUCER).setNoParent().startSpan();
        SpanContext[] created = null;
        if (span.isRecording()) { // the no-op case skips the per-message work
            created = describe(span, batch, topic, partition);
        }
        SpanContext[] creationContexts = tracingTimeInOutboxSpan ? created : null;
        CompletableFuture<PublishResult> result;
        try {
            result = publish.get();
        } catch (RuntimeException e) {
            span.recordException(e);
            span.setStatus(StatusCode.ERROR, String.valueOf(e.getMessage()));
            span.end();
            throw e;
        }
        return result.whenComplete((outcome, error) -> {
            Throwable failure = error != null ? error : outcome.firstError();
            if (outcome != null) {
                span.setAttribute(ACKNOWLEDGED, (long) outcome.acknowledged());
            }
            if (failure != null) {
                span.recordException(failure);
                span.setStatus(StatusCode.ERROR, failure.getClass().getName());
            }
            span.end();
            if (creationContexts != null && outcome != null) {
                timeInOutbox(batch.subList(0, Math.min(outcome.acknowledged(), batch.size())), creationContexts,
                        span.getSpanContext());
            }
        });
    }

    /** One span per acknowledged message, from its creation to now, in its creation trace. */
    private void timeInOutbox(List<OutboxMessage> acknowledged, SpanContext[] created, SpanContext send) {
        for (int i = 0; i < acknowledged.size(); i++) {
            OutboxMessage m = acknowledged.get(i);
            Context parent = created[i].isValid() ? Context.root().with(Span.wrap(created[i])) : Context.root();
            tracing.tracer().spanBuilder("outbox " + m.topic()).setSpanKind(SpanKind.INTERNAL).setParent(parent)
                    .setStartTimestamp(m.createdAt())
                    .setAttribute(MESSAGING_SYSTEM, "kafka")
                    .setAttribute(DESTINATION, m.topic())
                    .setAttribute(MESSAGE_ID, m.messageId().toString())
                    .setAttribute(BUCKET, (long) m.bucket())
                    .addLink(send)
                    .startSpan().end();
        }
    }

    /** Sets the span's attributes and links; returns each message's creation context, in batch order. */
    private SpanContext[] describe(Span span, List<OutboxMessage> batch, String topic, Integer partition) {
        span.setAttribute(MESSAGING_SYSTEM, "kafka");
        span.setAttribute(OPERATION_TYPE, "send");
        span.setAttribute(OPERATION_NAME, "send");
        if (topic != null) {
            span.setAttribute(DESTINATION, topic);
        }
        if (batch.size() == 1) {
            span.setAttribute(MESSAGE_ID, batch.get(0).messageId().toString());
        } else {
            span.setAttribute(BATCH_COUNT, (long) batch.size());
        }
        if (partition != null) {
            span.setAttribute(PARTITION_ID, partition.toString());
            span.setAttribute(KAFKA_PARTITION, (long) partition);
        }
        SpanContext[] created = new SpanContext[batch.size()];
        for (int i = 0; i < created.length; i++) {
            created[i] = tracing.creationContext(batch.get(i));
            if (created[i].isValid()) {
                span.addLink(created[i]);
            }
        }
        return created;
    }

    /**
     * The header that carries each record's message id.
     *
     * @return the header name, not blank
     */
    public String messageIdHeader() {
        return messageIdHeader;
    }

    /**
     * The record of a message.
     *
     * @param message the message; not null
     * @return a new record with the message's topic, partition, key, value and headers and the id
     *     header, without a timestamp
     * @throws NullPointerException if {@code message} is null
     */
    public ProducerRecord<byte[], byte[]> record(OutboxMessage message) {
        Objects.requireNonNull(message, "message must not be null");
        RecordHeaders headers = new RecordHeaders();
        for (OutboxHeader h : message.headers()) {
            if (!h.key().equals(messageIdHeader)) { // exactly one id header per record (K2)
                headers.add(h);
            }
        }
        headers.add(messageIdHeader, message.messageId().toString().getBytes(StandardCharsets.UTF_8));
        return new ProducerRecord<>(message.topic(), message.partition(), null, StoredMessages.key(message),
                StoredMessages.value(message), headers);
    }

    /**
     * Whether the message has a header of its own named like the id header, which
     * {@link #record} leaves out; for a warning that counts them.
     *
     * @param message the message; not null
     * @return true if one of its headers has the name {@link #messageIdHeader()}
     */
    public boolean carriesIdHeader(OutboxMessage message) {
        for (OutboxHeader h : message.headers()) {
            if (h.key().equals(messageIdHeader)) {
                return true;
            }
        }
        return false;
    }

    @Override
    public String toString() {
        return "OutboxRecords[messageIdHeader=" + messageIdHeader + ", tracing=" + tracing
                + ", tracingTimeInOutboxSpan=" + tracingTimeInOutboxSpan + "]";
    }
}
