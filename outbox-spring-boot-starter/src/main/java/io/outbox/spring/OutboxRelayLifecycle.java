package io.outbox.spring;

import io.outbox.relay.OutboxRelay;
import java.util.Objects;
import org.springframework.context.SmartLifecycle;

/**
 * Runs the relay with the application context: {@link #start()} once every singleton is ready
 * (the context's last start phase), {@link #stop()} first on shutdown, before the beans it uses
 * (the {@code DataSource}, the Kafka producer) are destroyed. Stopping is {@link OutboxRelay#close()}:
 * publishes in flight get {@code outbox.relay.close-timeout} to finish, acknowledged prefixes are
 * deleted, unacknowledged rows stay, and the leases are released so peers take over at once
 * (rule R9). Thread-safe.
 */
public final class OutboxRelayLifecycle implements SmartLifecycle {

    /** The phase: started last and stopped first, also before a web server's graceful shutdown ends. */
    public static final int PHASE = SmartLifecycle.DEFAULT_PHASE;

    private final OutboxRelay relay;
    private volatile boolean started;

    /**
     * Manages a relay that has not been started.
     *
     * @param relay the relay; not null; closed by {@link #stop()}
     */
    public OutboxRelayLifecycle(OutboxRelay relay) {
        this.relay = Objects.requireNonNull(relay, "relay must not be null");
    }

    /** Starts the relay; it leases buckets and publishes on its own threads. */
    @Override
    public void start() {
        relay.start();
        started = true;
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
