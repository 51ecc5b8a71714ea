package io.outbox.notify;

import io.outbox.OutboxCommitNotifier;
import io.outbox.relay.OutboxRelay;
import io.outbox.relay.internal.Backoff;
import io.outbox.relay.internal.LogText;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns confirmed commits into wake-ups (rules N1-N6, R8): the relays of this process are woken
 * at once with the buckets written, and, with a {@link NotificationTransport}, the relays of
 * other processes through it.
 *
 * <pre>{@code
 * try (NotificationTransport redis = NotificationTransports.open("redis", Map.of("uri", "redis://cache:6379"));
 *      OutboxNotifier notifier = OutboxNotifier.builder().transport(redis).relay(relay).build()) {
 *     JdbcOutboxTransactions tx = JdbcOutboxTransactions.of(writer, notifier);
 *     tx.run(connection, outbox -> { insertOrder(connection, order); outbox.enqueue(message); });
 * }
 * }</pre>
 *
 * <h2>Commit path (N3)</h2>
 * {@link #committed(int[])} wakes the local relays that own one of the buckets
 * ({@link OutboxRelay#wakeUp(java.util.Collection)}; {@code -1} calls {@link OutboxRelay#wakeUp()})
 * and adds the buckets to a bounded, coalescing buffer; it never waits for the network. One
 * background thread, {@code outbox-notifier-sender}, publishes what the buffer holds. A failed send
 * drops that batch, is counted ({@link Stats#dropped()}) and backs the sender off (capped
 * exponential, starting at {@link Builder#errorBackoff(Duration)}); hints added meanwhile
 * coalesce and go out with the next send.
 *
 * <h2>Receiving (N2)</h2>
 * Hints from other processes (the transport drops this notifier's own) wake the local relays the
 * same way. A hint for a bucket no local relay owns is ignored without a store call; an id outside
 * the relays' bucket range is ignored too. After the transport reconnects, every local relay is
 * woken to look at all its buckets, since hints may have been missed. Every local relay is told
 * the transport's state ({@link OutboxRelay#notificationStateChanged}) when it is added and at
 * each loss and recovery, for its health and metrics (N6). Hints never let a relay
 * publish a bucket it holds no lease for, and polling stays on: a lost hint costs latency only.
 *
 * <p>The notifier owns neither the relays nor the transport: close it first, then them. All
 * methods are thread-safe.
 */
public final class OutboxNotifier implements OutboxCommitNotifier, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(OutboxNotifier.class);

    /**
     * Counters since the notifier started.
     *
     * @param sent batches the transport accepted
     * @param dropped batches dropped because the send failed
     * @param received hint messages received from other processes
     * @param ignored received bucket ids that no local relay owns or that are out of range
     */
    public record Stats(long sent, long dropped, long received, long ignored) {
    }

    private final List<OutboxRelay> relays;
    private final NotificationTransport transport;
    private final HintBuffer buffer;
    private final Backoff backoff;
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong received = new AtomicLong();
    private final AtomicLong ignored = new AtomicLong();
    private final Thread sender;
    private AutoCloseable subscription;
    private volatile boolean closed;

    private OutboxNotifier(Builder b) {
        this.relays = new CopyOnWriteArrayList<>(b.relays);
        this.transport = b.transport;
        int capacity = b.relays.stream().mapToInt(r -> r.options().bucketCount()).max().orElse(b.bufferBuckets);
        this.buffer = new HintBuffer(Math.max(capacity, b.bufferBuckets));
        this.backoff = new Backoff(b.errorBackoff.toMillis(), b.maxErrorBackoff.toMillis());
        if (transport == null) {
            sender = null;
            return;
        }
        if (!relays.isEmpty()) {
            listen();
        }
        sender = new Thread(this::send, "outbox-notifier-sender");
        sender.setDaemon(true);
        sender.start();
    }

    private synchronized void listen() {
        if (subscription != null || transport == null || closed) {
            return;
        }
        subscription = transport.listen(new NotificationTransport.Listener() {
            @Override
            public void onHints(int[] buckets) {
                received.incrementAndGet();
                wakeLocal(buckets);
            }

            @Override
            public void onReconnected() {
                relays.forEach(OutboxRelay::wakeUp);
            }

            @Override
            public void onStateChanged(NotificationTransport.State state) {
                reportState();
            }
        });
        reportState();
    }

    /** Tells every local relay the transport's state (N6); the lock keeps the latest state last. */
    private synchronized void reportState() {
        if (transport == null || subscription == null || closed) {
            return;
        }
        NotificationTransport.State state = transport.state();
        relays.forEach(relay -> relay.notificationStateChanged(state));
    }

    /**
     * A builder with no relay and no transport.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Wakes the local relays owning one of the buckets and queues the buckets for the transport
     * (N1, N3). Returns at once. Call it only after a confirmed commit; the store helpers do.
     *
     * @param buckets the buckets written; not null; {@code -1} for unknown
     */
    @Override
    public void committed(int[] buckets) {
        Objects.requireNonNull(buckets, "buckets must not be null");
        if (buckets.length == 0 || closed) {
            return;
        }
        wakeLocal(buckets);
        if (transport != null) {
            buffer.add(buckets);
        }
    }

    /**
     * Lets the transport put the hints into the transaction (PostgreSQL {@code NOTIFY}, N5).
     *
     * @param connection the writer's connection, in its transaction; not null
     * @param buckets the buckets written; not null
     * @return true if the commit itself tells the other processes
     * @throws SQLException if the transport's statement failed; roll back
     */
    @Override
    public boolean beforeCommit(Connection connection, int[] buckets) throws SQLException {
        return transport != null && !closed && buckets.length > 0
                && transport.publishInTransaction(connection, buckets);
    }

    /**
     * Wakes the local relays only: the transport already carries the hints in the transaction.
     *
     * @param buckets the buckets written; not null
     */
    @Override
    public void committedLocally(int[] buckets) {
        Objects.requireNonNull(buckets, "buckets must not be null");
        if (!closed) {
            wakeLocal(buckets);
        }
    }

    /**
     * Adds a relay of this process to wake, for relays created after the notifier; with a
     * transport, the first relay starts the subscription.
     *
     * @param relay not null; not owned by the notifier
     */
    public void addRelay(OutboxRelay relay) {
        relays.add(Objects.requireNonNull(relay, "relay must not be null"));
        listen();
        reportState();
    }

    /**
     * The counters.
     *
     * @return a snapshot
     */
    public Stats stats() {
        return new Stats(sent.get(), dropped.get(), received.get(), ignored.get());
    }

    private void wakeLocal(int[] buckets) {
        for (OutboxRelay relay : relays) {
            boolean unknown = false;
            List<Integer> owned = relay.ownedBuckets();
            List<Integer> hinted = new ArrayList<>(Math.min(buckets.length, 16));
            for (int bucket : buckets) {
                if (bucket == UNKNOWN_BUCKET) {
                    unknown = true;
                } else if (bucket >= 0 && bucket < relay.options().bucketCount()
                        && Collections.binarySearch(owned, bucket) >= 0) {
                    hinted.add(bucket);
                } else {
                    ignored.incrementAndGet();
                }
            }
            if (unknown) {
                relay.wakeUp();
            } else if (!hinted.isEmpty()) {
                relay.wakeUp(hinted);
            }
        }
    }

    private void send() {
        int failures = 0;
        while (!closed) {
            int[] batch;
            try {
                batch = buffer.take(1, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                return;
            }
            if (batch == null) {
                continue;
            }
            try {
                transport.publish(batch);
                sent.incrementAndGet();
                if (failures > 0) {
                    LOG.info("notification transport sends again transport={} afterFailures={}", transport.name(),
                            failures);
                }
                failures = 0;
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                dropped.incrementAndGet();
                failures++;
                long delay = backoff.delayMillis(failures);
                if (failures == 1) {
                    LOG.warn("notification send failed; hints dropped, relays find the messages by polling "
                            + "transport={} backoff.ms={} error={}", transport.name(), delay,
                            LogText.oneLine(e.toString()));
                } else {
                    LOG.debug("notification send failed again transport={} failures={} backoff.ms={} error={}",
                            transport.name(), failures, delay, LogText.oneLine(e.toString()));
                }
                try {
                    Thread.sleep(delay);
                } catch (InterruptedException stop) {
                    return;
                }
            }
        }
    }

    /**
     * Stops the sender (hints still buffered are dropped) and the subscription. Idempotent; the
     * transport and the relays stay open.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        AutoCloseable listening;
        synchronized (this) {
            closed = true;
            listening = subscription;
        }
        buffer.close();
        if (listening != null) {
            try {
                listening.close();
            } catch (Exception e) {
                LOG.debug("closing the notification subscription failed", e);
            }
        }
        if (sender != null) {
            sender.interrupt();
            try {
                sender.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public String toString() {
        return "OutboxNotifier[transport=" + (transport == null ? "none" : transport.name()) + ", relays="
                + relays.size() + ", " + stats() + "]";
    }

    /** Builds an {@link OutboxNotifier}. Not thread-safe. */
    public static final class Builder {

        private final List<OutboxRelay> relays = new ArrayList<>();
        private NotificationTransport transport;
        private int bufferBuckets = 65_536;
        private Duration errorBackoff = Duration.ofSeconds(1);
        private Duration maxErrorBackoff = Duration.ofSeconds(30);

        private Builder() {
        }

        /**
         * A relay of this process to wake; may be called several times. Without any relay the
         * notifier only sends (a writer process) and does not listen.
         *
         * @param relay not null; not owned by the notifier
         * @return this builder
         */
        public Builder relay(OutboxRelay relay) {
            relays.add(Objects.requireNonNull(relay, "relay must not be null"));
            return this;
        }

        /**
         * The transport to other processes; without one only local relays are woken.
         *
         * @param transport not null; not owned by the notifier
         * @return this builder
         */
        public Builder transport(NotificationTransport transport) {
            this.transport = Objects.requireNonNull(transport, "transport must not be null");
            return this;
        }

        /**
         * How many distinct bucket ids the send buffer keeps exactly; higher ids are sent as one
         * unknown-bucket hint. Default 65,536 (the largest bucket count), or the local relays'
         * bucket count if larger.
         *
         * @param buckets 1 to 65,536
         * @return this builder
         * @throws IllegalArgumentException naming a value out of range
         */
        public Builder bufferBuckets(int buckets) {
            if (buckets < 1 || buckets > 65_536) {
                throw new IllegalArgumentException("bufferBuckets must be in [1, 65536], was " + buckets);
            }
            this.bufferBuckets = buckets;
            return this;
        }

        /**
         * The sender's first pause after a failed send; it doubles per failure in a row up to
         * {@link #maxErrorBackoff(Duration)}.
         *
         * @param backoff positive; default 1 s
         * @return this builder
         * @throws IllegalArgumentException if not positive
         */
        public Builder errorBackoff(Duration backoff) {
            this.errorBackoff = positive(backoff, "errorBackoff");
            return this;
        }

        /**
         * The longest pause after failed sends.
         *
         * @param backoff positive; default 30 s
         * @return this builder
         * @throws IllegalArgumentException if not positive
         */
        public Builder maxErrorBackoff(Duration backoff) {
            this.maxErrorBackoff = positive(backoff, "maxErrorBackoff");
            return this;
        }

        private static Duration positive(Duration d, String name) {
            Objects.requireNonNull(d, name + " must not be null");
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(name + " must be positive, was " + d);
            }
            return d;
        }

        /**
         * Builds the notifier; with a transport it starts listening (if it has relays) and its
         * sender thread.
         *
         * @return the notifier; close it before the relays and the transport
         * @throws IllegalArgumentException if maxErrorBackoff is below errorBackoff
         */
        public OutboxNotifier build() {
            if (maxErrorBackoff.compareTo(errorBackoff) < 0) {
                throw new IllegalArgumentException("maxErrorBackoff " + maxErrorBackoff + " is below errorBackoff "
                        + errorBackoff);
            }
            return new OutboxNotifier(this);
        }
    }
}
