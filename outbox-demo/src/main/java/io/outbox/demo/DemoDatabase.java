package io.outbox.demo;

import io.outbox.OutboxCommitNotifier;
import io.outbox.OutboxMessage;
import io.outbox.spi.CloseableOutboxStore;
import io.outbox.spi.OutboxStore;
import java.util.List;

/**
 * The database of the demo's order service, on one of the stores: it owns the tables of one run
 * (an {@code orders} table and the outbox's own), writes an order and its outbox message in one
 * transaction, and opens stores for relays.
 *
 * <p>Every name carries the run's prefix, so repeated runs and parallel tests never share a
 * table. Implementations are thread-safe: the writers place orders from several threads.
 */
interface DemoDatabase extends AutoCloseable {

    /** What the demo runs on, for the summary: product, version, where. No secrets. */
    String describe();

    /** The names of the run's tables or collections, for {@code --keep}. */
    List<String> objectNames();

    /** Creates the run's tables (the outbox's through the store's own create method). */
    void createSchema() throws Exception;

    /**
     * Places an order: writes the business row and the outbox message in one transaction, and
     * commits. Returns only after the commit; throws when nothing was committed.
     */
    void placeOrder(Order order, OutboxMessage message) throws Exception;

    /**
     * Places an order as {@link #placeOrder(Order, OutboxMessage)} does, then tells the notifier the
     * message's bucket (rule N1: only after the commit returned; nothing when it failed). The JDBC
     * database lets the notifier put its hint into the transaction (PostgreSQL {@code NOTIFY}, N5).
     *
     * @param notifier not null; {@link OutboxCommitNotifier#NONE} for none
     */
    default void placeOrder(Order order, OutboxMessage message, OutboxCommitNotifier notifier) throws Exception {
        placeOrder(order, message);
        notifier.committed(new int[] {message.bucket()});
    }

    /** Writes messages without business rows, in one transaction (the benchmark's pre-fill). */
    void enqueue(List<OutboxMessage> messages) throws Exception;

    /** The most messages {@link #enqueue} takes at once. */
    int maxMessagesPerTransaction();

    /**
     * Opens a store for one relay, with its own connection pool or client, as a relay in another
     * process would have; the caller closes it.
     */
    CloseableOutboxStore openRelayStore();

    /**
     * Opens a store for one relay that makes up to {@code storeConcurrency} store calls at once
     * (relay option {@code store.concurrency}); a store with a connection pool sizes it for them.
     * The default opens {@link #openRelayStore()}.
     *
     * @param storeConcurrency the relay's store threads, at least 1
     * @return the store; the caller closes it
     */
    default CloseableOutboxStore openRelayStore(int storeConcurrency) {
        return openRelayStore();
    }

    /**
     * Opens a relay's store as {@link #openRelayStore(int)} does, with its database work counted by
     * {@code meter} (the benchmark). The default returns null: this database counts nothing.
     *
     * @param storeConcurrency the relay's store threads, at least 1
     * @param meter what counts the statements, rows and bytes
     * @return the store, which the caller closes; null when this database cannot be metered
     */
    default CloseableOutboxStore openMeteredRelayStore(int storeConcurrency, JdbcMeter meter) {
        return null;
    }

    /** The outbox's table names, for a {@link JdbcMeter}; empty when not relational. */
    default List<String> tableNames() {
        return List.of();
    }

    /**
     * The consumer's inbox side for {@code --inbox}: the store's inbox and a counter per customer,
     * on this database's pool or client, with the run's prefix. The default says it has none.
     *
     * @throws UnsupportedOperationException if this database has no inbox
     */
    default DemoInbox openInbox() {
        throw new UnsupportedOperationException(describe() + " has no inbox for --inbox");
    }

    /** Drops (or, where the server cannot drop, empties) the run's tables. */
    void dropSchema() throws Exception;

    /** Closes the writers' pool or client. */
    @Override
    void close();

    /** Closes a store opened by {@link #openRelayStore()}, or a wrapper that holds resources. */
    static void closeStore(OutboxStore store) {
        if (store instanceof AutoCloseable closeable) {
            try {
                closeable.close();
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException("closing the store " + store + " failed: " + e, e);
            }
        }
    }
}
