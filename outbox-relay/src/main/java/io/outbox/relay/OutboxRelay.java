package io.outbox.relay;

import io.outbox.notify.NotificationTransport;
import io.outbox.relay.internal.Listeners;
import io.outbox.relay.internal.RelayEngine;
import io.outbox.spi.LeaseRenewal;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.OutboxStore;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes pending outbox messages from a store and deletes each one after the broker
 * acknowledged it: at-least-once delivery, in enqueue order per bucket.
 *
 * <pre>{@code
 * RelayOptions options = RelayOptions.builder().bucketCount(8).build();
 * try (KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(producerConfig).build();
 *      OutboxRelay relay = new OutboxRelay(store, publisher, options)) {
 *     relay.start();
 *     ...                      // after each committed enqueue: relay.wakeUp(buckets)
 * }                            // the relay closes first, then the publisher
 * }</pre>
 *
 * <h2>What it does</h2>
 * One loop thread ({@code outbox-relay-<relayId>}) acquires its fair share of bucket leases, finds the owned
 * buckets with pending messages, and hands each of them, one batch of at most
 * {@link RelayOptions#batchSize()} at a time (R4), to a pool of
 * {@link RelayOptions#storeConcurrency()} store threads. A store thread reads the bucket's batch,
 * starts its publish and, once the broker answered, deletes exactly the acknowledged prefix (R2);
 * so the store round trips of different buckets overlap with each other and with other buckets'
 * publishes, while a bucket never has two batches in flight. The rest of a batch is retried from
 * the head after a capped exponential backoff, per bucket (R3). While a bucket's batches come
 * back full it gets its next batch without sleeping, without waiting for slower buckets;
 * otherwise the relay waits for {@link #wakeUp()} or {@link RelayOptions#pollInterval()} (R8).
 * It reacquires (rebalances) every {@link RelayOptions#leaseRenewInterval()} without waiting for
 * batches in flight (rule R11: rebalancing and new batches never wait for a publish in flight): the
 * lease request names the busy buckets ({@link io.outbox.spi.LeaseRequest#busyBuckets()}), the
 * store keeps those even above the fair share, and a busy bucket the plan gives up is released
 * when its task ends, so a publish that hangs stalls only its own bucket. Leases, retries and
 * listener calls are kept by the loop thread alone.
 *
 * <h2>Leases (R1, R5, R9)</h2>
 * A lease's age counts from the clock reading taken before the store call that granted or
 * renewed it; at an age of {@link RelayOptions#leaseDuration()} it is gone. The relay checks the
 * lease after fetching a batch, right before publishing it, and again before deleting. When the
 * store has {@link LeaseRenewal} (C1, {@link OutboxStore#leaseRenewal()}) a second thread renews
 * the leases every renew interval while a publish is in flight, and a publish starts only with at
 * least one renew interval of lease left; without C1 it starts only if
 * {@link RelayOptions#maxPublishDuration()} plus one renew interval fits in the lease left, and a
 * publish exceeding that budget stops the relay. A bucket whose lease is lost during a publish
 * gets no further publish, and nothing of that batch is deleted; the next owner publishes it
 * again. Acquire and renew calls never overlap.
 *
 * <h2>Errors (R3, R6, R7)</h2>
 * A failed publish (broker down, record too large) backs off that bucket only; other buckets go
 * on. Failures are classified ({@link FailureKind}, R12): a broker outage is never counted against
 * a message; a message-specific failure (too large, an invalid topic or partition, a row the store
 * cannot decode) is, the bucket then sends that message alone, and {@link PoisonPolicy} decides
 * whether the bucket waits behind it or moves it to the store's dead letters after
 * {@link RelayOptions#poisonMaxAttempts()} attempts. Every backoff is drawn with full jitter. A failing store call is logged, the other buckets' batches in flight are finished (their
 * acknowledged prefixes deleted), then the lease state is dropped and the whole loop backs off.
 * Both backoffs start at {@link RelayOptions#errorBackoff()}, double per failure in a row and
 * stop growing at {@link RelayOptions#maxErrorBackoff()}. An
 * {@link OutboxMisconfigurationException} from anywhere (the store finding rows outside the
 * bucket range or a table it needs absent, a publish over its budget) is fatal: the relay logs its
 * message at ERROR in one line, without a stack trace, gives up its leases, stops, and completes
 * {@link #termination()} exceptionally with it. Any other {@link Error} is fatal too, logged with
 * its stack trace. Everything else is retried, so a broker that is down at start-up
 * only delays publishing.
 *
 * <h2>Ownership and threads</h2>
 * The relay owns neither the store nor the publisher: it never closes them; close the relay
 * first, then them. It runs daemon threads: {@code outbox-relay-<relayId>}, the store threads
 * {@code outbox-relay-<relayId>-store-<n>} (at most {@link RelayOptions#storeConcurrency()}) and,
 * with C1, {@code outbox-relay-<relayId>-renewal}; the store and the publisher are called from
 * several of them at once (S12). A pooled store wants at least
 * {@link RelayOptions#storeConcurrency()} plus two connections. All public methods are
 * thread-safe. Logging goes to
 * SLF4J logger {@code io.outbox.relay.OutboxRelay} with {@code key=value} context (relayId,
 * bucket, count, messageId); keys, values and headers are never logged.
 */
public final class OutboxRelay implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(OutboxRelay.class);
    private static final Duration STOP_GRACE = Duration.ofSeconds(1);

    private final RelayOptions options;
    private final RelayEngine engine;
    private final Listeners listeners;
    private volatile NotificationTransport.State notificationState;
    private Thread thread;
    private ScheduledExecutorService renewer;
    private boolean started;
    private boolean closed;

    /**
     * Creates a relay on the system clock without listeners; call {@link #start()}.
     *
     * @param store where messages wait; not null; not owned by the relay
     * @param publisher how they are sent; not null; not owned by the relay
     * @param options the settings; not null
     * @throws OutboxMisconfigurationException if the store has no {@link LeaseRenewal}
     *     ({@link OutboxStore#leaseRenewal()} is empty) and {@link RelayOptions#maxPublishDuration()}
     *     is not set (R5), or the publisher refuses the bucket count
     *     ({@link OutboxPublisher#checkBucketCount}, K5)
     */
    public OutboxRelay(OutboxStore store, OutboxPublisher publisher, RelayOptions options) {
        this(builder(store, publisher).options(options));
    }

    private OutboxRelay(Builder b) {
        this.options = b.options;
        if (b.store.leaseRenewal().isEmpty() && options.maxPublishDuration() == null) {
            throw new OutboxMisconfigurationException("relay option " + RelayOptions.MAX_PUBLISH_DURATION_MS_CONFIG
                    + " is required because the store " + b.store.getClass().getName() + " cannot renew leases "
                    + "during a publish (it has no LeaseRenewal, capability C1: its leaseRenewal() is empty)");
        }
        b.publisher.checkBucketCount(options.bucketCount()); // K5: a transactional publisher bounds it
        this.listeners = new Listeners(b.listeners);
        this.engine = new RelayEngine(b.store, b.publisher, options, b.clock, listeners);
    }

    /**
     * A builder for a relay with a custom clock or listeners.
     *
     * @param store where messages wait; not null; not owned by the relay
     * @param publisher how they are sent; not null; not owned by the relay
     * @return a new builder with {@link RelayOptions#defaults()} and the system UTC clock
     */
    public static Builder builder(OutboxStore store, OutboxPublisher publisher) {
        return new Builder(store, publisher);
    }

    /**
     * Starts the relay's threads. Returns at once; publishing begins in the background.
     *
     * @throws IllegalStateException if the relay was started or closed before
     */
    public synchronized void start() {
        if (closed) {
            throw new IllegalStateException("the relay " + relayId() + " is closed");
        }
        if (started) {
            throw new IllegalStateException("the relay " + relayId() + " is already started");
        }
        started = true;
        if (engine.hasRenewal()) {
            renewer = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "outbox-relay-" + relayId()
                    + "-renewal"));
            long tick = Math.max(5, Math.min(250, options.leaseRenewInterval().toMillis() / 10));
            renewer.scheduleWithFixedDelay(engine::renewIfDue, tick, tick, TimeUnit.MILLISECONDS);
        }
        thread = daemon(engine::run, "outbox-relay-" + relayId());
        thread.start();
    }

    private static Thread daemon(Runnable body, String name) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        return t;
    }

    /**
     * Drains the relay (rule H3), for rolling deploys and scale-in: it starts no new publish and
     * takes no lease; once its publishes in flight ended it gives its leases back (capability C3;
     * without it they expire after {@link RelayOptions#leaseDuration()}) and peers take its
     * buckets at their next lease round. Nothing is lost and no bucket has two owners: the relay
     * publishes nothing without a lease (R1). Stays in effect until {@link #resume()}; returns at
     * once (the loop acts at its next pass). Any thread; idempotent.
     */
    public void drain() {
        engine.drain(true);
    }

    /**
     * Ends a drain (rule H3): the relay takes its fair share again at its next lease round. Any
     * thread; idempotent, a no-op without a drain.
     */
    public void resume() {
        engine.drain(false);
    }

    /**
     * Whether the relay was told to drain and not to resume (H3).
     *
     * @return true while draining
     */
    public boolean isDraining() {
        return engine.draining();
    }

    /**
     * Ends an idle wait at once and makes the relay look for pending messages in every bucket it
     * owns (R8). Call it after committing a transaction that enqueued messages. Hints coalesce; a
     * wake-up during an error backoff does not shorten the backoff. A no-op when the relay is not
     * running.
     */
    public void wakeUp() {
        listeners.onWakeUp();
        engine.wakeUp();
    }

    /**
     * Ends an idle wait at once and makes the relay fetch these buckets directly, if it owns them,
     * without first probing the store for pending messages (R8). Buckets it does not own are
     * ignored; their owner finds the messages at its next poll. An empty collection does nothing.
     *
     * @param buckets the buckets that received messages; not null, each in
     *     {@code [0, bucketCount)}
     * @throws IllegalArgumentException naming a bucket outside {@code [0, bucketCount)}
     * @throws NullPointerException if {@code buckets} or an element is null
     */
    public void wakeUp(Collection<Integer> buckets) {
        Objects.requireNonNull(buckets, "buckets must not be null");
        if (buckets.isEmpty()) {
            return;
        }
        int[] checked = new int[buckets.size()];
        int i = 0;
        for (Integer bucket : buckets) {
            Objects.requireNonNull(bucket, "buckets must not contain null");
            if (bucket < 0 || bucket >= options.bucketCount()) {
                throw new IllegalArgumentException("bucket " + bucket + " is outside [0, " + options.bucketCount()
                        + ")");
            }
            checked[i++] = bucket;
        }
        listeners.onWakeUp();
        engine.wakeUp(checked);
    }

    /**
     * Records the state of the notification transport that wakes this relay and passes a change on
     * to the listeners ({@link RelayListener#onNotificationStateChanged}), for health and metrics
     * (rule N6). {@link io.outbox.notify.OutboxNotifier} calls it when the relay is added and at every change; a
     * wake-up source of your own may too. It changes nothing in what the relay does: it polls at
     * {@link RelayOptions#pollInterval()} whatever the state (N4). Runs on the caller's thread (a
     * transport thread); a state equal to the last one is ignored.
     *
     * @param state the transport's state; not null
     */
    public void notificationStateChanged(NotificationTransport.State state) {
        Objects.requireNonNull(state, "state must not be null");
        synchronized (listeners) {
            if (state.equals(notificationState)) {
                return;
            }
            notificationState = state;
            listeners.onNotificationStateChanged(state);
        }
    }

    /**
     * The last state of the notification transport that wakes this relay (rule N6).
     *
     * @return the state, or null when no transport reported one (the relay only polls)
     */
    public NotificationTransport.State notificationState() {
        return notificationState;
    }

    /**
     * Completes when the relay's first lease round succeeded: its first good contact with the
     * store (rule R13), after which a refusal of the store no longer stops it. A host that must not
     * start without a working store (the Spring Boot starter) waits for it or for
     * {@link #termination()}, whichever comes first; it never completes if the relay stops before.
     *
     * @return a new dependent future; completing or cancelling it does not affect the relay
     */
    public CompletableFuture<Void> firstLeaseRound() {
        return engine.firstLeaseRound().copy();
    }

    /**
     * Completes when the relay's start is settled (rule R13): its first lease round succeeded and
     * then it owned no bucket, or its first look at its buckets found nothing pending, or the
     * broker answered a first publish (a record acknowledged, or a failure the relay retries). A
     * refusal no retry heals before that (an invalid {@code transaction.timeout.ms}, a SASL login or
     * an ACL the broker turns down, a database login or grant) stops the relay instead, completing
     * {@link #termination()} with it and never this future. A host that must not start with a
     * relay that refuses to run (the Spring Boot starter) waits for whichever comes first, bounded
     * by its own time limit: a store or broker that does not answer keeps this future pending while
     * the relay retries it (R3, R7).
     *
     * @return a new dependent future; completing or cancelling it does not affect the relay
     */
    public CompletableFuture<Void> startSettled() {
        return engine.startSettled().copy();
    }

    /**
     * Whether the last publishes found no broker reachable: a metadata wait timed
     * out and the cluster did not answer an Admin request either. The publisher logs it at a
     * bounded rate; the relay retries with backoff (R7). Any thread.
     *
     * @return the last such error, whose message names the bootstrap servers and the time since the
     *     last successful contact; empty once a record is acknowledged, or if none happened
     */
    public Optional<BrokerUnreachableException> brokerUnreachable() {
        return Optional.ofNullable(engine.brokerUnreachable());
    }

    /**
     * A refusal no retry heals that the relay met after a good start and that lasts (rule R13):
     * a login, a grant, an ACL or a version the broker or the store turned down after accepting
     * it. The relay logs it at ERROR and keeps retrying; a health check reports DOWN while it
     * lasts. The same refusal before the first good contact with that side stops the relay
     * instead ({@link #termination()}). Any thread.
     *
     * @return the refusal, the store's when both sides refuse; empty when none lasts (a call to
     *     the side succeeded since)
     */
    public Optional<Refusal> refusal() {
        return Optional.ofNullable(engine.refusal());
    }

    /**
     * Whether the relay is running.
     *
     * @return true after {@link #start()} until it is closed or stops on a fatal error
     */
    public synchronized boolean isRunning() {
        return started && !closed && !engine.termination().isDone();
    }

    /**
     * Completes when the relay has stopped: normally after {@link #close()}, exceptionally with
     * the cause when it stopped on a fatal error (R6), usually an
     * {@link OutboxMisconfigurationException}. A host can watch it to shut down or restart.
     *
     * @return a new dependent future; completing or cancelling it does not affect the relay
     */
    public CompletableFuture<Void> termination() {
        return engine.termination().copy();
    }

    /**
     * The buckets the relay holds leases for now, by its own clock (R1).
     *
     * @return the buckets, ascending, immutable; empty before the first acquisition and after
     *     the stop
     */
    public List<Integer> ownedBuckets() {
        return engine.ownedBuckets();
    }

    /** Passes of the publishing loop so far; for the project's benchmarks. */
    long cycles() {
        return engine.cycles();
    }

    /**
     * This relay's id.
     *
     * @return {@link RelayOptions#relayId()}
     */
    public String relayId() {
        return options.relayId();
    }

    /**
     * The relay's settings.
     *
     * @return the options
     */
    public RelayOptions options() {
        return options;
    }

    /**
     * Stops the relay (R9). It starts no new publish; the publishes in flight get up to
     * {@link RelayOptions#closeTimeout()} to finish, and their acknowledged prefixes are deleted. Then
     * the relay gives up its leases through {@link io.outbox.spi.LeaseRelease} (C3) when the store
     * has it, so peers take over at once. If the publish does not finish in time the thread is
     * interrupted, nothing more is deleted, and the leases are left to expire (a peer publishing
     * while the old batch may still land would only add duplicates). Unacknowledged messages are
     * never deleted. Returns within the close timeout plus one second; a store call that ignores
     * interruption may still finish in the background. Idempotent; the store and the publisher
     * stay open.
     */
    @Override
    public void close() {
        Thread running;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            running = thread;
        }
        engine.stop();
        if (running != null && running != Thread.currentThread()) {
            if (!join(running, options.closeTimeout())) {
                LOG.warn("relay thread still busy after close.timeout.ms={}; interrupting it relayId={}",
                        options.closeTimeout().toMillis(), relayId());
                running.interrupt();
                join(running, STOP_GRACE);
            }
        }
        if (renewer != null) {
            renewer.shutdownNow();
        }
        engine.terminated();
    }

    private static boolean join(Thread thread, Duration timeout) {
        try {
            thread.join(Math.max(1, timeout.toMillis()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return !thread.isAlive();
    }

    @Override
    public String toString() {
        return "OutboxRelay[" + relayId() + ", running=" + isRunning() + ", owned=" + ownedBuckets() + "]";
    }

    /** Builds an {@link OutboxRelay}. Not thread-safe. */
    public static final class Builder {

        private final OutboxStore store;
        private final OutboxPublisher publisher;
        private RelayOptions options;
        private Clock clock = Clock.systemUTC();
        private final List<RelayListener> listeners = new ArrayList<>();

        private Builder(OutboxStore store, OutboxPublisher publisher) {
            this.store = Objects.requireNonNull(store, "store must not be null");
            this.publisher = Objects.requireNonNull(publisher, "publisher must not be null");
        }

        /**
         * The settings.
         *
         * @param options not null; default {@link RelayOptions#defaults()}
         * @return this builder
         */
        public Builder options(RelayOptions options) {
            this.options = Objects.requireNonNull(options, "options must not be null");
            return this;
        }

        /**
         * The clock lease ages are measured with (R1); the same clock the store uses in tests.
         * Waits (poll interval, backoff) elapse in real time whatever the clock says.
         *
         * @param clock not null; default the system UTC clock
         * @return this builder
         */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock must not be null");
            return this;
        }

        /**
         * Adds a listener; listeners are called in the order added.
         *
         * @param listener not null
         * @return this builder
         */
        public Builder listener(RelayListener listener) {
            listeners.add(Objects.requireNonNull(listener, "listener must not be null"));
            return this;
        }

        /**
         * Builds the relay; call {@link OutboxRelay#start()} on it.
         *
         * @return the relay
         * @throws OutboxMisconfigurationException if the store lacks {@link LeaseRenewal} and
         *     {@link RelayOptions#maxPublishDuration()} is not set (R5), or the publisher refuses
         *     the bucket count ({@link OutboxPublisher#checkBucketCount}, K5)
         */
        public OutboxRelay build() {
            if (options == null) {
                options = RelayOptions.defaults();
            }
            return new OutboxRelay(this);
        }
    }
}
