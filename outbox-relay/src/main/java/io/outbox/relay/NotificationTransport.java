package io.outbox.relay;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * Carries bucket hints between processes (rules N3-N5): an {@link OutboxNotifier} publishes the
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
 *   <li>Bucket {@value io.outbox.OutboxCommitNotifier#UNKNOWN_BUCKET} is carried like any other
 *       id.</li>
 * </ul>
 * Implementations are thread-safe: publishing and listening run concurrently.
 */
public interface NotificationTransport extends AutoCloseable {

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
     * Stops listening and releases the connections. Idempotent; never throws.
     */
    @Override
    void close();
}
