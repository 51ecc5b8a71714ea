package io.outbox;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * Told which buckets a transaction wrote, once the transaction has committed, so that relays can
 * publish at once instead of at their next poll (rules N1, R8). The store helpers
 * ({@code JdbcOutboxTransactions}, {@code MongoOutboxTransactions},
 * {@code DynamoDbOutboxTransactions}) call it at the right moment, so an application never has to;
 * the relay module's {@code OutboxNotifier} implements it.
 *
 * <p>A notification is a hint (N2): it may be lost, repeated or reordered, and it never lets a
 * relay publish a bucket it holds no lease for. Bucket {@value #UNKNOWN_BUCKET} means "some bucket":
 * a relay receiving it looks for pending messages in every bucket it owns.
 *
 * <p>Implementations are thread-safe and return quickly: they are called on the committing thread
 * and must not wait for a network round trip.
 */
public interface OutboxCommitNotifier {

    /** The bucket id that stands for "unknown bucket: look in every owned bucket" (N2). */
    int UNKNOWN_BUCKET = -1;

    /** A notifier that does nothing: for writers without a relay to tell. */
    OutboxCommitNotifier NONE = buckets -> {
    };

    /**
     * Called after a confirmed commit (N1), with the buckets the transaction wrote. Never called
     * for a transaction that rolled back or whose commit failed.
     *
     * @param buckets the buckets written, each {@code >= 0} or {@value #UNKNOWN_BUCKET}; not null;
     *     may hold repeats; not retained after the call returns
     */
    void committed(int[] buckets);

    /**
     * Called on a JDBC connection inside the transaction, right before the commit, for a
     * notification that the database itself delivers on commit and drops on rollback (PostgreSQL
     * {@code NOTIFY}, rule N5). When this returns true the caller commits and then calls
     * {@link #committedLocally(int[])} in place of {@link #committed(int[])}, so the other
     * processes are not told twice.
     *
     * @param connection the caller's connection, in its transaction; not null; not committed,
     *     rolled back or closed here
     * @param buckets the buckets written; not null
     * @return true if other processes will be told by the commit itself; the default does nothing
     *     and returns false
     * @throws SQLException if the statement fails; the caller rolls back and nothing is notified
     */
    default boolean beforeCommit(Connection connection, int[] buckets) throws SQLException {
        return false;
    }

    /**
     * Called after a confirmed commit whose notification {@link #beforeCommit} already handed to
     * the database: tells only the relays of this process. The default calls
     * {@link #committed(int[])}.
     *
     * @param buckets the buckets written; not null
     */
    default void committedLocally(int[] buckets) {
        committed(buckets);
    }
}
