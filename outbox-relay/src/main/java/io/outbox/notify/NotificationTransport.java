package io.outbox.notify;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Objects;

/**
 * Carries bucket hints between processes (rules N3-N6): an {@link OutboxNotifier} publishes the
 * buckets a commit wrote, and every relay's notifier listens for the hints of the others. Hints
 * are advisory (N2): a transport may lose, repeat or reorder them, and the relays' polling covers
 * whatever it loses. Found by name with {@link NotificationTransports}, like stores.
 *
 * <p>Contract for implementations:
 * <ul>
 *   <li>{@link #publish(int[])} is called from one background thread of the notifier, never from
 *       a committing thread; it may block for a bounded time (a network round trip) and throws on
 *       failure, after which the notifier drops that batch and counts it.</li>
 *   <li>{@link #listen(Listener)} gives the listener every broadcast on the channel (each process
 *       its own subscription, never a competing consumer), except the ones this transport
 *       instance sent itself (self-echo is dropped). The transport owns reconnection and backs off
 *       between attempts (N4); after a reconnect it calls {@link Listener#onReconnected()}, since
 *       hints sent meanwhile are lost.</li>
 *   <li>A dead listening connection, half-open included (no FIN, no RST arrives: a NAT or
 *       firewall that dropped the flow, a frozen proxy), is noticed within a bounded time the
 *       transport documents and makes configurable, by a periodic round trip on it (N6). Each loss
 *       and each recovery is logged once (WARN, then INFO; never once per reconnect attempt) and
 *       reported through {@link #state()} and {@link Listener#onStateChanged(State)}.</li>
 *   <li>Bucket {@value io.outbox.OutboxCommitNotifier#UNKNOWN_BUCKET} is carried like any other
 *       id.</li>
 * </ul>
 * Implementations are thread-safe: publishing and listening run concurrently.
 */
public interface NotificationTransport extends AutoCloseable {

    /**
     * Whether the listening connection is up, and since when (rule N6).
     *
     * @param transport the transport's {@link NotificationTransport#name()}
     * @param connected true while hints can arrive: connected and listening on the channel
     * @param since when it last changed: connected since, or down since; for a transport that has
     *     not connected yet, since it began listening (or was created)
     */
    record State(String transport, boolean connected, Instant since) {

        /**
         * Checks the values.
         *
         * @param transport not null
         * @param connected whether connected
         * @param since not null
         */
        public State {
            Objects.requireNonNull(transport, "transport must not be null");
            Objects.requireNonNull(since, "since must not be null");
        }
    }

    /**
     * Keeps a transport's {@link State} and reports each change once (N6): for implementations of
     * {@link NotificationTransport#state()}. Starts not connected, since its creation. Thread-safe.
     */
    final class StateKeeper {

        private final String transport;
        private State state;

        /**
         * A keeper that starts not connected.
         *
         * @param transport the transport's {@link NotificationTransport#name()}; not null
         */
        public StateKeeper(String transport) {
            this.state = new State(transport, false, Instant.now());
            this.transport = transport;
        }

        /**
         * The state now.
         *
         * @return not null
         */
        public synchronized State state() {
            return state;
        }

        /**
         * Records whether the connection is up; on a change, stamps it now and tells the listener,
         * outside the keeper's lock, from the calling thread.
         *
         * @param connected whether hints can arrive now
         * @param listener told of a change; null to tell no one (a transport being closed)
         * @return true if this was a change
         */
        public boolean change(boolean connected, Listener listener) {
            State next;
            synchronized (this) {
                if (state.connected() == connected) {
                    return false;
                }
                next = new State(transport, connected, Instant.now());
                state = next;
            }
            if (listener != null) {
                listener.onStateChanged(next);
            }
            return true;
        }
    }

    /**
     * Receives hints. Called from a transport thread; implementations return quickly.
     */
    interface Listener {

        /**
         * Hints another process published.
         *
         * @param buckets bucket ids, each {@code >= 0} or
         *     {@value io.outbox.OutboxCommitNotifier#UNKNOWN_BUCKET}; not null; may repeat
         */
        void onHints(int[] buckets);

        /**
         * The subscription was down and is back: hints may have been missed meanwhile.
         */
        default void onReconnected() {
        }

        /**
         * The listening connection went down or came back (N6). Called once per change, from the
         * transport's thread, before {@link #onReconnected()} for a recovery; never once per
         * reconnect attempt.
         *
         * @param state the new state; not null
         */
        default void onStateChanged(State state) {
        }
    }

    /**
     * The provider name of this transport, for logs.
     *
     * @return for example {@code redis}
     */
    String name();

    /**
     * Broadcasts hints to every listener on the channel. Called from one thread at a time.
     *
     * @param buckets the buckets, each {@code >= 0} or {@code -1}; not null, not empty; not
     *     retained after the call
     * @throws Exception if the broadcast failed or timed out; the hints are then dropped
     */
    void publish(int[] buckets) throws Exception;

    /**
     * Sends hints inside a JDBC transaction, delivered by the database exactly when it commits
     * (PostgreSQL {@code NOTIFY}, rule N5). Transports that cannot return false and do nothing.
     *
     * @param connection the writer's connection, inside its transaction; not null; never
     *     committed or closed here
     * @param buckets the buckets; not null
     * @return true if the commit delivers the hints, false if {@link #publish} must be used
     * @throws SQLException if the statement failed; the caller rolls back
     */
    default boolean publishInTransaction(Connection connection, int[] buckets) throws SQLException {
        return false;
    }

    /**
     * Starts listening; returns at once. The transport keeps reconnecting until the returned
     * handle or the transport is closed. At most one listener per transport.
     *
     * @param listener not null
     * @return closes the subscription; idempotent
     * @throws IllegalStateException if a listener is already registered or the transport is closed
     */
    AutoCloseable listen(Listener listener);

    /**
     * The listening connection's state now (N6). Thread-safe and cheap: no network call.
     *
     * @return not null; not connected before {@link #listen(Listener)} has connected and after
     *     {@link #close()}
     */
    State state();

    /**
     * Stops listening and releases the connections. Idempotent; never throws.
     */
    @Override
    void close();
}
