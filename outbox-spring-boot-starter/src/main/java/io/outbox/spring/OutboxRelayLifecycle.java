package io.outbox.spring;

import io.outbox.relay.OutboxRelay;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.springframework.context.SmartLifecycle;

/**
 * Runs the relay with the application context: {@link #start()} once every singleton is ready
 * (the context's last start phase), failing the start when the relay stops before its start
 * settled (R13: {@link OutboxRelay#startSettled()}), {@link #stop()} first on shutdown, before the
 * beans it uses (the {@code DataSource}, the Kafka producer) are destroyed. Stopping is
 * {@link OutboxRelay#close()}: publishes in flight get {@code outbox.relay.close-timeout} to finish,
 * acknowledged prefixes are deleted, unacknowledged rows stay, and the leases are released so peers
 * take over at once (rule R9). Thread-safe.
 */
public final class OutboxRelayLifecycle implements SmartLifecycle {

    /** The phase: started last and stopped first, also before a web server's graceful shutdown ends. */
    public static final int PHASE = SmartLifecycle.DEFAULT_PHASE;

    /** The default of {@code outbox.relay.start-timeout}: how long {@link #start()} waits for the start to settle. */
    public static final Duration DEFAULT_START_TIMEOUT = Duration.ofSeconds(30);

    private final OutboxRelay relay;
    private final Duration startTimeout;
    private volatile boolean started;

    /**
     * Manages a relay that has not been started, waiting up to {@link #DEFAULT_START_TIMEOUT} at start.
     *
     * @param relay the relay; not null; closed by {@link #stop()}
     */
    public OutboxRelayLifecycle(OutboxRelay relay) {
        this(relay, DEFAULT_START_TIMEOUT);
    }

    /**
     * Manages a relay that has not been started.
     *
     * @param relay the relay; not null; closed by {@link #stop()}
     * @param startTimeout how long {@link #start()} waits for the relay's start to settle
     *     ({@code outbox.relay.start-timeout}); not null, not negative; zero does not wait
     * @throws IllegalArgumentException if {@code startTimeout} is negative
     */
    public OutboxRelayLifecycle(OutboxRelay relay, Duration startTimeout) {
        this.relay = Objects.requireNonNull(relay, "relay must not be null");
        this.startTimeout = Objects.requireNonNull(startTimeout, "startTimeout must not be null");
        if (startTimeout.isNegative()) {
            throw new IllegalArgumentException("outbox.relay.start-timeout must not be negative, but is "
                    + startTimeout);
        }
    }

    /**
     * Starts the relay, which leases buckets and publishes on its own threads, and waits, on the
     * calling thread, up to {@code outbox.relay.start-timeout} for its start to settle (rule R13,
     * {@link OutboxRelay#startSettled()}): its first lease round, then, with messages pending in its
     * buckets, the broker's first answer to a publish. A relay that stops before (a database login,
     * password or grant refused; a SASL login, an ACL or a transaction timeout the Kafka broker
     * refuses; a misconfiguration, R6) fails the context's start with its error, as the standalone
     * relay exits with code 3. A store or broker that does not answer in time is not waited for
     * further: the relay keeps retrying it (R3, R7) and the health says so.
     *
     * @throws IllegalStateException with the relay's error as its cause if the relay stopped
     *     before its start settled; its message names the relay and the cause
     */
    @Override
    public void start() {
        relay.start();
        started = true;
        CompletableFuture<Object> first = CompletableFuture.anyOf(relay.startSettled(), relay.termination());
        try {
            first.get(startTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            started = false;
            Throwable cause = e.getCause() instanceof CompletionException c && c.getCause() != null
                    ? c.getCause() : e.getCause();
            throw new IllegalStateException("the outbox relay " + relay.relayId() + " stopped before its start "
                    + "settled (its first lease round and the broker's first answer): " + cause.getMessage(), cause);
        } catch (TimeoutException e) {
            // R3, R7: a store or broker that does not answer is retried; the health shows it.
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Stops the relay gracefully: returns within {@code outbox.relay.close-timeout} plus a second.
     * A stopped relay is not restarted by a later {@link #start()}: the relay is closed for good.
     */
    @Override
    public void stop() {
        started = false;
        relay.close();
    }

    /**
     * Whether the relay was started and has not stopped; false after a fatal error (rule R6).
     *
     * @return true while the relay runs
     */
    @Override
    public boolean isRunning() {
        return started && relay.isRunning();
    }

    /**
     * {@value #PHASE}: the last to start and the first to stop.
     *
     * @return the phase
     */
    @Override
    public int getPhase() {
        return PHASE;
    }

    /**
     * The relay managed.
     *
     * @return the relay; not null
     */
    public OutboxRelay relay() {
        return relay;
    }
}
