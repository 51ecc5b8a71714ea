package io.outbox.relay.internal;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A periodic, cheap check that a broker of the relay's cluster answers: one Admin
 * {@code describeCluster} every {@link #period(Duration)}, reported to a {@link Listener}, so that a
 * host's health follows the broker also while the relay has nothing to publish (a relay that
 * publishes learns it from its sends too, {@link io.outbox.relay.OutboxRelay#brokerUnreachable()}).
 * The standalone relay's readiness (rule H1) and the Spring Boot starter's health indicator use it.
 * It runs on one daemon thread, with one Admin client of the producer's connection settings
 * (bootstrap servers, security, client DNS lookup), which reconnects by itself. Thread-safe;
 * {@link #close()} stops it.
 */
public final class BrokerProbe implements AutoCloseable {

    /** The shortest time between two checks. */
    public static final Duration MIN_PERIOD = Duration.ofMillis(250);
    /** The longest time between two checks. */
    public static final Duration MAX_PERIOD = Duration.ofSeconds(10);

    private static final Logger LOG = LoggerFactory.getLogger(BrokerProbe.class);

    /** Where the answers of the checks go; called on the probe's thread, one call per check. */
    public interface Listener {

        /** A broker answered the check. */
        void brokerAnswered();

        /**
         * No broker answered the check within its timeout (one period), or the check failed.
         *
         * @param reason what the check met, in a few words (an exception class name, or the
         *     timeout in milliseconds); not null, carries no setting's value
         */
        void brokerSilent(String reason);
    }

    private final Admin admin;
    private final ScheduledExecutorService timer;
    private final Listener listener;
    private final long periodMillis;

    /**
     * Starts checking at once, then every {@link #period(Duration)}.
     *
     * @param producerConfig the relay's producer settings; the Admin client takes those it knows; not null
     * @param threshold how long the host tolerates no answer; positive; the check runs three times within it
     * @param listener where the answers go; not null
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the threshold is not positive
     * @throws org.apache.kafka.common.KafkaException if the Admin client cannot be created from the settings
     */
    public BrokerProbe(Map<String, Object> producerConfig, Duration threshold, Listener listener) {
        Objects.requireNonNull(producerConfig, "producerConfig must not be null");
        this.listener = Objects.requireNonNull(listener, "listener must not be null");
        this.periodMillis = period(threshold).toMillis();
        this.admin = Admin.create(adminConfig(producerConfig, (int) periodMillis));
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "outbox-relay-broker-probe");
            t.setDaemon(true);
            return t;
        });
        timer.scheduleWithFixedDelay(this::check, 0, periodMillis, TimeUnit.MILLISECONDS);
    }

    /**
     * The time between two checks, which is also a check's timeout: a third of the threshold, within
     * [{@link #MIN_PERIOD}, {@link #MAX_PERIOD}].
     *
     * @param threshold how long the host tolerates no answer; positive
     * @return the period
     * @throws IllegalArgumentException if the threshold is null or not positive
     */
    public static Duration period(Duration threshold) {
        if (threshold == null || threshold.isNegative() || threshold.isZero()) {
            throw new IllegalArgumentException("the broker check's threshold must be positive but was " + threshold);
        }
        Duration third = threshold.dividedBy(3);
        return third.compareTo(MIN_PERIOD) < 0 ? MIN_PERIOD : third.compareTo(MAX_PERIOD) > 0 ? MAX_PERIOD : third;
    }

    /**
     * The Admin client's settings: the producer's connection settings an Admin client knows, with
     * its timeouts at {@code timeoutMillis}.
     *
     * @param producerConfig the producer's settings; not null
     * @param timeoutMillis the request and API timeout, milliseconds
     * @return a new map
     */
    public static Map<String, Object> adminConfig(Map<String, Object> producerConfig, int timeoutMillis) {
        Map<String, Object> admin = new HashMap<>();
        producerConfig.forEach((k, v) -> {
            if (AdminClientConfig.configNames().contains(k) && v != null) {
                admin.put(k, v);
            }
        });
        admin.remove(AdminClientConfig.CLIENT_ID_CONFIG);
        admin.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, timeoutMillis);
        admin.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, timeoutMillis);
        return admin;
    }

    /** The probe thread: one check. */
    private void check() {
        try {
            admin.describeCluster().nodes().get(periodMillis, TimeUnit.MILLISECONDS);
            listener.brokerAnswered();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            listener.brokerSilent(e.getCause().getClass().getName());
        } catch (java.util.concurrent.TimeoutException e) {
            listener.brokerSilent("no broker answered within " + periodMillis + " ms");
        } catch (RuntimeException e) {
            LOG.debug("broker check failed: {}", LogText.oneLine(String.valueOf(e)));
            listener.brokerSilent(e.getClass().getName());
        }
    }

    /** Stops the checks and closes the Admin client (waiting at most one second for it); idempotent. */
    @Override
    public void close() {
        timer.shutdownNow();
        admin.close(Duration.ofSeconds(1));
    }
}
