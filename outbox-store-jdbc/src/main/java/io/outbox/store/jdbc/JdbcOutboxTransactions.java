package io.outbox.store.jdbc;

import io.outbox.OutboxCommitNotifier;
import io.outbox.OutboxMessage;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Runs a business transaction with outbox enqueues on the caller's {@link Connection}, commits it
 * and only then tells the notifier which buckets it wrote (rule N1): a rollback, an exception of
 * the work or a failed commit notifies nothing.
 *
 * <pre>{@code
 * JdbcOutboxTransactions tx = JdbcOutboxTransactions.of(store.writer(), notifier);
 * try (Connection c = dataSource.getConnection()) {
 *     long id = tx.call(c, outbox -> {
 *         long orderId = insertOrder(c, order);                    // the business change
 *         outbox.enqueue(OutboxMessage.create("orders", ...));     // same transaction (E4)
 *         return orderId;
 *     });                                                          // committed, then notified
 * }
 * }</pre>
 *
 * <p>On PostgreSQL, a transaction that a failed statement aborted (the work caught the
 * exception and went on) cannot commit: PostgreSQL would roll it back on {@code COMMIT} without an
 * error, so the helper refuses it with an {@link SQLException} (SQL state {@code 25P02}) and
 * notifies nothing.
 *
 * <p>The connection's auto-commit mode is switched off for the transaction and restored after.
 * Before the commit the notifier may put its own statement into the transaction
 * ({@link OutboxCommitNotifier#beforeCommit}: PostgreSQL's {@code NOTIFY}, which the database
 * delivers exactly on commit, N5). Instances are immutable and thread-safe; the connection is used
 * by one thread at a time, as JDBC requires.
 */
public final class JdbcOutboxTransactions {

    /**
     * The transaction's body.
     *
     * @param <T> what it returns
     */
    @FunctionalInterface
    public interface Work<T> {

        /**
         * Runs inside the transaction.
         *
         * @param outbox enqueues messages in this transaction; valid during the call only
         * @return the result handed back by {@link #call}
         * @throws Exception any failure: the transaction rolls back and nothing is notified
         */
        T run(Outbox outbox) throws Exception;
    }

    /** Enqueues messages inside the running transaction and remembers their buckets. */
    public static final class Outbox {

        private final JdbcOutboxWriter writer;
        private final Connection connection;
        private final List<Integer> buckets = new ArrayList<>();
        private boolean open = true;

        private Outbox(JdbcOutboxWriter writer, Connection connection) {
            this.writer = writer;
            this.connection = connection;
        }

        /**
         * Writes messages in the transaction ({@link JdbcOutboxWriter#enqueue(Connection, List)}).
         *
         * @param messages in enqueue order; not null, no null element
         * @throws SQLException if the insert fails; let it propagate so the transaction rolls back
         * @throws IllegalStateException if the transaction is over
         */
        public void enqueue(List<OutboxMessage> messages) throws SQLException {
            if (!open) {
                throw new IllegalStateException("the transaction is over: enqueue inside the work only");
            }
            writer.enqueue(connection, messages);
            messages.forEach(m -> buckets.add(m.bucket()));
        }

        /**
         * Writes messages in the transaction.
         *
         * @param messages in enqueue order; no null element
         * @throws SQLException if the insert fails
         * @throws IllegalStateException if the transaction is over
         */
        public void enqueue(OutboxMessage... messages) throws SQLException {
            enqueue(List.of(messages));
        }

        private int[] buckets() {
            return buckets.stream().mapToInt(Integer::intValue).distinct().toArray();
        }
    }

    private final JdbcOutboxWriter writer;
    private final OutboxCommitNotifier notifier;

    private JdbcOutboxTransactions(JdbcOutboxWriter writer, OutboxCommitNotifier notifier) {
        this.writer = Objects.requireNonNull(writer, "writer must not be null");
        this.notifier = Objects.requireNonNull(notifier, "notifier must not be null");
    }

    /**
     * A helper writing with this writer and notifying this notifier.
     *
     * @param writer not null
     * @param notifier not null; {@link OutboxCommitNotifier#NONE} for none
     * @return the helper
     */
    public static JdbcOutboxTransactions of(JdbcOutboxWriter writer, OutboxCommitNotifier notifier) {
        return new JdbcOutboxTransactions(writer, notifier);
    }

    /**
     * Runs the work in one transaction on the connection and commits; after the commit returned,
     * notifies the buckets enqueued (none enqueued: no notification).
     *
     * @param connection the caller's open connection; not null; not closed here; its auto-commit
     *     mode is restored
     * @param work the body; not null
     * @param <T> the work's result type
     * @return what the work returned
     * @throws SQLException if a statement, the notifier's statement or the commit failed; the
     *     transaction was rolled back (or its commit failed) and nothing was notified
     * @throws Exception whatever the work threw, after the rollback
     */
    public <T> T call(Connection connection, Work<T> work) throws Exception {
        Objects.requireNonNull(connection, "connection must not be null");
        Objects.requireNonNull(work, "work must not be null");
        boolean autoCommit = connection.getAutoCommit();
        if (autoCommit) {
            connection.setAutoCommit(false);
        }
        Outbox outbox = new Outbox(writer, connection);
        int[] buckets;
        boolean sentInTransaction;
        T result;
        try {
            result = work.run(outbox);
            outbox.open = false;
            buckets = outbox.buckets();
            if (abortedOnPostgres(connection)) {
                // PostgreSQL turns COMMIT of an aborted transaction into a rollback without an error (pgjdbc's
                // default): the work swallowed a failed statement. Nothing was committed; say so, notify nothing.
                throw new SQLException("the transaction was aborted by an earlier failed statement (PostgreSQL "
                        + "would roll it back on commit); rolled back, nothing notified", "25P02");
            }
            sentInTransaction = buckets.length > 0 && notifier.beforeCommit(connection, buckets);
            connection.commit();
        } catch (Throwable e) {
            outbox.open = false;
            rollback(connection, e);
            throw e;
        } finally {
            if (autoCommit) {
                restoreAutoCommit(connection);
            }
        }
        if (buckets.length > 0) {
            if (sentInTransaction) {
                notifier.committedLocally(buckets);
            } else {
                notifier.committed(buckets);
            }
        }
        return result;
    }

    /**
     * Like {@link #call}, for work without a result.
     *
     * @param connection the caller's open connection; not null
     * @param work the body; not null; its return value is ignored
     * @throws Exception see {@link #call}
     */
    public void run(Connection connection, Work<?> work) throws Exception {
        call(connection, work);
    }

    /**
     * Whether the connection is a pgjdbc connection whose transaction is aborted, read from the
     * driver's own state (no round trip); false for any other driver or if the state is unreadable.
     */
    private static boolean abortedOnPostgres(Connection connection) {
        try {
            Class<?> base = Class.forName("org.postgresql.core.BaseConnection", false,
                    connection.getClass().getClassLoader());
            if (!connection.isWrapperFor(base)) {
                return false;
            }
            Object state = base.getMethod("getTransactionState").invoke(connection.unwrap(base));
            return state != null && state.toString().equals("FAILED");
        } catch (ReflectiveOperationException | SQLException | LinkageError | RuntimeException e) {
            return false;
        }
    }

    private static void rollback(Connection connection, Throwable cause) {
        try {
            connection.rollback();
        } catch (SQLException e) {
            cause.addSuppressed(e);
        }
    }

    private static void restoreAutoCommit(Connection connection) {
        try {
            connection.setAutoCommit(true);
        } catch (SQLException e) {
            // the connection is broken; the caller sees that at its next use
        }
    }
}
