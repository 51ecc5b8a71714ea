package io.outbox.demo;

import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.Collection;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The OpenTelemetry SDK of {@code bench --tracing}: registered as the global one, so messages
 * created inside a span carry their context (rule O1) and the relays' default tracing setting
 * records a span per batch (rule O2); spans go through a batch span processor to an exporter that
 * counts and drops them, so the bench measures the instrumentation, not an exporter's network.
 */
final class BenchTracing implements AutoCloseable {

    private final OpenTelemetrySdk sdk;
    private final AtomicLong exported;

    private BenchTracing(OpenTelemetrySdk sdk, AtomicLong exported) {
        this.sdk = sdk;
        this.exported = exported;
    }

    /**
     * Builds the SDK and registers it as {@link GlobalOpenTelemetry}; once per process.
     *
     * @return the installed SDK
     * @throws IllegalStateException if a global OpenTelemetry was already set in this process
     */
    static BenchTracing install() {
        AtomicLong exported = new AtomicLong();
        SpanExporter dropping = new SpanExporter() {
            @Override
            public CompletableResultCode export(Collection<SpanData> spans) {
                exported.addAndGet(spans.size());
                return CompletableResultCode.ofSuccess();
            }

            @Override
            public CompletableResultCode flush() {
                return CompletableResultCode.ofSuccess();
            }

            @Override
            public CompletableResultCode shutdown() {
                return CompletableResultCode.ofSuccess();
            }
        };
        OpenTelemetrySdk sdk = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder()
                        .addSpanProcessor(BatchSpanProcessor.builder(dropping).build()).build())
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
                .buildAndRegisterGlobal();
        return new BenchTracing(sdk, exported);
    }

    /**
     * The spans exported so far.
     *
     * @return the count
     */
    long exported() {
        return exported.get();
    }

    /** Flushes the spans still queued and shuts the SDK down. */
    @Override
    public void close() {
        sdk.getSdkTracerProvider().forceFlush().join(10, TimeUnit.SECONDS);
        sdk.close();
    }
}
