package io.outbox.spring;

import io.outbox.relay.internal.BrokerProbe;
import io.outbox.relay.internal.LogText;
import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.apache.kafka.clients.CommonClientConfigs;

/**
 * Whether a broker of the relay's bootstrap servers answered the periodic check ({@link BrokerProbe},
 * shared with the standalone relay's readiness) within {@code outbox.health.broker-unreachable-threshold},
 * for {@link OutboxHealthIndicator}: the relay learns of a lost broker only from its sends, so an idle
 * relay would stay UP without it. Created with the health indicator where this application runs the
 * relay and {@code outbox.health.broker-check-enabled} is true; closed with the context. Thread-safe:
 * the probe's thread reports, the health checks ask.
 */
final class OutboxBrokerCheck implements BrokerProbe.Listener, AutoCloseable {

    private final Clock clock;
    private final Duration threshold;
    private final String bootstrapServers;
    private final BrokerProbe probe;
    /** When a broker last answered, epoch ms; the creation until then. */
    private long lastContact;
    private boolean silent;
    private String lastSilence;

    /**
     * Starts the periodic check.
     *
     * @param producerConfig the relay's producer settings; not null
     * @param threshold {@code outbox.health.broker-unreachable-threshold}; not null
     * @param clock the clock the threshold is measured with; not null
     * @throws IllegalArgumentException naming the property and the value if the threshold is not positive
     */
    OutboxBrokerCheck(Map<String, Object> producerConfig, Duration threshold, Clock clock) {
        Objects.requireNonNull(threshold, "threshold must not be null");
        if (threshold.isNegative() || threshold.isZero()) {
            throw new IllegalArgumentException("Invalid outbox configuration: outbox.health.broker-unreachable-threshold "
                    + "must be positive but was " + threshold);
        }
        this.clock = Objects.requireNonNull(clock, "clock must not be null");
        this.threshold = threshold;
        this.bootstrapServers = servers(producerConfig.get(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG));
        this.lastContact = clock.millis();
        this.probe = new BrokerProbe(producerConfig, threshold, this);
    }

    private static String servers(Object value) {
        String text = value instanceof Collection<?> list ? String.join(",", list.stream().map(String::valueOf).toList())
                : String.valueOf(value);
        return LogText.oneLine(text);
    }

    /**
     * Why the health is DOWN, if no broker answered the check for the threshold.
     *
     * @return names the bootstrap servers, the time since the last answer and what the last check
     *     met (not redacted); empty while a broker answered within the threshold
     */
    synchronized Optional<String> unreachable() {
        long silence = clock.millis() - lastContact;
        if (!silent || silence < threshold.toMillis()) {
            return Optional.empty();
        }
        return Optional.of("no broker of bootstrap.servers=" + bootstrapServers + " answered the periodic check for "
                + silence + " ms (threshold " + threshold.toMillis() + " ms): " + lastSilence);
    }

    @Override
    public synchronized void brokerAnswered() {
        lastContact = clock.millis();
        silent = false;
    }

    @Override
    public synchronized void brokerSilent(String reason) {
        silent = true;
        lastSilence = reason;
    }

    /** Stops the check; idempotent. */
    @Override
    public void close() {
        probe.close();
    }
}
