package io.outbox.relay.app;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.outbox.relay.ErrorTable;
import io.outbox.relay.MicrometerRelayMetrics;
import io.outbox.relay.OutboxRelay;
import io.outbox.relay.RelayOptions;
import io.outbox.relay.internal.BrokerProbe;
import io.outbox.relay.internal.LogText;
import io.outbox.relay.internal.Redactor;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.OutboxStore;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One run of the standalone relay: opens the store (retrying while it is unreachable), creates
 * the Kafka publisher and the relay, starts the relay, waits for a stop request or the relay's
 * end, then closes the relay (which gives its leases back, R9), the publisher and the store, in
 * that order. With {@code http.port} set, the HTTP endpoint ({@link RelayHttpServer}, H1) runs
 * from before the store is opened to the end, and the relay's meters go to a Prometheus registry.
 */
final class RelayRunner {

    /**
     * Time allowed, beyond {@code relay.close.timeout.ms} plus one second, for closing the Kafka
     * producer ({@link #PUBLISHER_CLOSE_TIMEOUT}) and the store after a stop request.
     */
    static final Duration STOP_MARGIN = Duration.ofSeconds(25);

    /** How long closing the publisher waits for records still buffered. */
    static final Duration PUBLISHER_CLOSE_TIMEOUT = Duration.ofSeconds(10);

    private static final Logger LOG = LoggerFactory.getLogger(StandaloneRelay.class);

    private final RelayConfiguration configuration;
    private final RelayConfiguration.Resolved resolved;
    private final Lifecycle lifecycle;
    private final Redactor redactor;
    /** The store while open, for the HTTP endpoint. */
    private volatile OutboxStore openedStore;
    /** The relay once built, for the HTTP endpoint. */
    private volatile OutboxRelay runningRelay;

    RelayRunner(RelayConfiguration configuration, RelayConfiguration.Resolved resolved, Lifecycle lifecycle) {
        this.configuration = configuration;
        this.resolved = resolved;
        this.lifecycle = lifecycle;
        this.redactor = configuration.redactor();
    }

    /**
     * The longest a stop may take: the relay's close timeout, its one-second grace, and
     * {@link #STOP_MARGIN}.
     *
     * @param options the relay options
     * @return the bound
     */
    static Duration stopBound(RelayOptions options) {
        return options.closeTimeout().plusSeconds(1).plus(STOP_MARGIN);
    }

    /**
     * Runs until a stop request or a fatal error.
     *
     * @return the exit code: {@link StandaloneRelay#EXIT_OK} after a stop request,
     *     {@link StandaloneRelay#EXIT_MISCONFIGURATION} on an {@link OutboxMisconfigurationException},
     *     {@link StandaloneRelay#EXIT_ERROR} on any other fatal error
     */
    @SuppressWarnings("try") // the server lives as long as the run; nothing in the body refers to it
    int run() {
        RelayOptions options = resolved.options();
        lifecycle.running(stopBound(options));
        // One summary line at INFO; the whole effective configuration (secrets hidden) at DEBUG.
        LOG.info("outbox-relay {} starting relayId={} store={} bucketCount={} batchSize={} batchMaxBytes={} "
                + "maxHeapBytes={} storeConcurrency={} kafka.bootstrap.servers={} (Kafka clients {}, Java {}; the "
                + "configuration is logged at DEBUG)", StandaloneRelay.version(), options.relayId(),
                configuration.provider().name(), options.bucketCount(), options.batchSize(), options.batchMaxBytes(),
                Runtime.getRuntime().maxMemory(), options.storeConcurrency(),
                redactor.redact(String.valueOf(resolved.producerConfig().get("bootstrap.servers"))),
                StandaloneRelay.kafkaVersion(), Runtime.version());
        if (LOG.isDebugEnabled()) {
            LOG.debug("configuration:\n{}", configuration.describe(resolved).stripTrailing());
        }
        if (!resolved.unknownKafkaKeys().isEmpty()) {
            LOG.warn("not Kafka producer settings, passed through anyway: {}",
                    resolved.unknownKafkaKeys().stream().map(k -> RelayConfiguration.KAFKA_PREFIX + k).toList());
        }
        if (!configuration.ignoredVariables().isEmpty()) {
            LOG.info("environment variables that are not settings were ignored: {}", configuration.ignoredVariables());
        }

        HttpSettings http = configuration.httpSettings();
        RelayHealth health = new RelayHealth(Clock.systemUTC(), http.readyThreshold());
        PrometheusMeterRegistry registry = http.enabled() ? new PrometheusMeterRegistry(PrometheusConfig.DEFAULT)
                : null;
        try (RelayHttpServer server = http.enabled() ? new RelayHttpServer(http, health,
                new RelayHttpServer.Sources(() -> openedStore, this::ownedBuckets, registry::scrape, drain()), redactor,
                options.relayId(), options.bucketCount(), options.leaseDuration()) : null) {
            return run(options, health, registry, http);
        } catch (IOException e) {
            LOG.error("could not listen on {}={} {}={}; exiting with code {}: {}", HttpSettings.BIND_ADDRESS,
                    http.bindAddress(), HttpSettings.PORT, http.port(), StandaloneRelay.EXIT_MISCONFIGURATION,
                    LogText.oneLine(String.valueOf(e)));
            return StandaloneRelay.EXIT_MISCONFIGURATION;
        }
    }

    private RelayHttpServer.Drain drain() {
        return new RelayHttpServer.Drain() {
            @Override
            public boolean set(boolean on) {
                OutboxRelay relay = runningRelay;
                if (relay == null) {
                    return false;
                }
                if (on) {
                    relay.drain();
                } else {
                    relay.resume();
                }
                return true;
            }

            @Override
            public boolean draining() {
                OutboxRelay relay = runningRelay;
                return relay != null && relay.isDraining();
            }
        };
    }

    private List<Integer> ownedBuckets() {
        OutboxRelay relay = runningRelay;
        return relay == null ? List.of() : relay.ownedBuckets();
    }

    private int run(RelayOptions options, RelayHealth health, MeterRegistry registry, HttpSettings http) {
        OutboxStore store;
        try {
            store = openStore(options);
        } catch (StoreRefused e) {
            return fatal("the store refused the relay at start for a reason no retry heals (R13)", e.getCause());
        } catch (OutboxMisconfigurationException e) {
            health.fatal(e.getClass().getName());
            return fatal("invalid store configuration", e);
        }
        if (store == null) {
            LOG.info("stop requested before the store was opened; exiting");
            return StandaloneRelay.EXIT_OK;
        }
        openedStore = store;
        MicrometerRelayMetrics metrics = registry == null ? null : new MicrometerRelayMetrics(registry, Tags.empty());
        KafkaOutboxPublisher publisher = null;
        OutboxRelay relay = null;
        AutoCloseable notifications = null;
        BrokerProbe probe = null;
        int code;
        try {
            publisher = KafkaOutboxPublisher.builder(resolved.producerSettings())
                    .messageIdHeader(resolved.messageIdHeader())
                    .tracingTimeInOutboxSpan(resolved.tracingTimeInOutboxSpan()).build();
            if (http.enabled()) {
                probe = new BrokerProbe(resolved.producerConfig(), http.readyThreshold(), health);
            }
            OutboxRelay.Builder builder = OutboxRelay.builder(store, publisher).options(options).listener(health);
            if (metrics != null) {
                builder.listener(metrics);
            }
            relay = builder.build();
            runningRelay = relay;
            relay.start();
            notifications = configuration.notifySettings().start(relay);
            LOG.info("relay running relayId={} notify.transport={}; SIGTERM or SIGINT stops it", options.relayId(),
                    configuration.notifySettings().transport());
            code = awaitEnd(relay);
        } catch (OutboxMisconfigurationException e) {
            health.fatal(e.getClass().getName());
            code = fatal("invalid configuration", e);
        } finally {
            if (probe != null) {
                probe.close();
            }
            closeNotifications(notifications);
            close(relay, publisher, store);
            openedStore = null;
            if (metrics != null) {
                metrics.close();
            }
        }
        if (code == StandaloneRelay.EXIT_OK && relay != null) {
            code = exitCodeOf(relay.termination());
        }
        LOG.info("outbox-relay stopped relayId={} exitCode={}", options.relayId(), code);
        return code;
    }

    /**
     * Opens the store, retrying failures with backoff, except a misconfiguration and a refusal the
     * {@link ErrorTable} classes as fatal (a login, a password, a grant: R13); null if asked to stop.
     */
    private OutboxStore openStore(RelayOptions options) {
        Duration backoff = options.errorBackoff();
        String name = configuration.provider().name();
        Map<String, String> settings = configuration.storeSettings();
        for (int attempt = 1; !lifecycle.stopRequested().isDone(); attempt++) {
            try {
                OutboxStore store = configuration.provider().create(settings);
                LOG.info("store opened store={} attempt={}", name, attempt);
                return store;
            } catch (RuntimeException e) {
                ErrorTable.Row refusal = ErrorTable.refusal(e).orElse(null);
                if (refusal != null) {
                    throw new StoreRefused(new OutboxMisconfigurationException(refusal.meaning() + "; error: "
                            + causes(e), e));
                }
                if (e instanceof OutboxMisconfigurationException) {
                    throw new OutboxMisconfigurationException(configuration.storeKeysAsWritten(e.getMessage()), e);
                }
                LOG.warn("could not open the store; retrying store={} attempt={} backoff.ms={} error={}", name, attempt,
                        backoff.toMillis(), redactor.redact(causes(e)));
                LOG.debug("store open failure store={} attempt={}", name, attempt, e);
            }
            if (awaitStop(backoff)) {
                return null;
            }
            backoff = backoff.multipliedBy(2).compareTo(options.maxErrorBackoff()) > 0
                    ? options.maxErrorBackoff() : backoff.multipliedBy(2);
        }
        return null;
    }

    /** R13: opening the store met a refusal of the {@link ErrorTable} that no retry heals; the cause says which. */
    private static final class StoreRefused extends RuntimeException {

        private static final long serialVersionUID = 1L;

        StoreRefused(OutboxMisconfigurationException cause) {
            super(cause.getMessage(), cause, false, false);
        }

        @Override
        public synchronized OutboxMisconfigurationException getCause() {
            return (OutboxMisconfigurationException) super.getCause();
        }
    }

    private boolean awaitStop(Duration timeout) {
        try {
            lifecycle.stopRequested().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return true;
        } catch (ExecutionException e) {
            return true;
        }
    }

    private int awaitEnd(OutboxRelay relay) {
        CompletableFuture<Void> termination = relay.termination();
        try {
            CompletableFuture.anyOf(termination, lifecycle.stopRequested()).join();
        } catch (CompletionException e) {
            // The relay stopped on a fatal error: termination tells which.
        }
        if (termination.isDone()) {
            return exitCodeOf(termination);
        }
        LOG.info("stop requested; stopping the relay relayId={} close.timeout.ms={}", relay.relayId(),
                relay.options().closeTimeout().toMillis());
        return StandaloneRelay.EXIT_OK;
    }

    private int exitCodeOf(CompletableFuture<Void> termination) {
        if (!termination.isCompletedExceptionally()) {
            return StandaloneRelay.EXIT_OK;
        }
        try {
            termination.join();
            return StandaloneRelay.EXIT_OK;
        } catch (CompletionException e) {
            // The relay has logged the error already, at ERROR: say it once.
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            return cause instanceof OutboxMisconfigurationException
                    ? StandaloneRelay.EXIT_MISCONFIGURATION : StandaloneRelay.EXIT_ERROR;
        }
    }

    private int fatal(String what, OutboxMisconfigurationException e) {
        LOG.error("{}; exiting with code {}: {}", what, StandaloneRelay.EXIT_MISCONFIGURATION,
                LogText.oneLine(redactor.redact(e.getMessage())));
        return StandaloneRelay.EXIT_MISCONFIGURATION;
    }

    private void closeNotifications(AutoCloseable notifications) {
        if (notifications != null) {
            try {
                notifications.close();
            } catch (Exception e) {
                LOG.warn("closing the notification transport failed: {}", redactor.redact(causes(e)));
            }
        }
    }

    private void close(OutboxRelay relay, KafkaOutboxPublisher publisher, OutboxStore store) {
        if (relay != null) {
            relay.close();
        }
        if (publisher != null) {
            try {
                publisher.close(PUBLISHER_CLOSE_TIMEOUT);
            } catch (RuntimeException e) {
                LOG.warn("closing the Kafka producer failed: {}", redactor.redact(causes(e)));
            }
        }
        if (store instanceof AutoCloseable closeable) {
            try {
                closeable.close();
                LOG.info("store closed store={}", configuration.provider().name());
            } catch (Exception e) {
                LOG.warn("closing the store failed: {}", redactor.redact(causes(e)));
            }
        }
    }

    /** The exception and its causes, one "type: message" each, for a one-line log. */
    static String causes(Throwable error) {
        StringBuilder text = new StringBuilder(error.toString());
        Throwable cause = error.getCause();
        for (int depth = 0; cause != null && depth < 8; depth++) {
            text.append("; caused by ").append(cause);
            cause = cause.getCause();
        }
        return LogText.oneLine(text.toString());
    }
}
