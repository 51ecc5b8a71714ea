package io.outbox.store.jdbc;

import java.util.Collections;

/**
 * The statements of one store: one dialect, one set of tables. Every identifier is quoted by the
 * dialect from names {@link JdbcOutboxTables} validated; values are always bound as parameters.
 * Immutable.
 */
final class Sql {

    /** The message columns a batch reads, in this order. */
    private static final String[] MESSAGE_COLUMNS =
            {"message_id", "topic", "record_key", "record_value", "headers", "kafka_partition", "created_at"};

    final JdbcDialect dialect;
    final String messages;
    final String leases;
    final String relays;

    final String insertMessage;
    final String selectBatch;
    final String bucketsOutside;
    final String pendingMetrics;
    final String upsertHeartbeat;
    final String selectHeartbeats;
    final String selectLeases;
    final String insertLeaseIfAbsent;
    final String keepLease;
    final String releaseLease;
    final String claimLease;
    final String claimFreeLease;
    final String deleteStaleHeartbeat;
    final String selectOwned;
    final String releaseAllLeases;
    final String deleteHeartbeat;

    Sql(JdbcDialect dialect, JdbcOutboxTables tables) {
        this.dialect = dialect;
        messages = dialect.qualified(tables, tables.messages());
        leases = dialect.qualified(tables, tables.leases());
        relays = dialect.qualified(tables, tables.relays());
        String bucket = q("bucket");
        String owner = q("owner");
        String expiresAt = q("expires_at");

        insertMessage = "INSERT INTO " + messages + " (" + bucket + ", " + columns(MESSAGE_COLUMNS) + ") VALUES ("
                + placeholders(MESSAGE_COLUMNS.length + 1) + ")";
        // Ordered by the whole (bucket, id) index, not by id alone: H2 then reads the batch in index
        // order and stops at the limit, instead of reading and sorting the whole bucket (S1).
        selectBatch = "SELECT " + q("id") + ", " + columns(MESSAGE_COLUMNS) + " FROM " + messages + " WHERE "
                + bucket + " = ? ORDER BY " + bucket + ", " + q("id") + " LIMIT ?";
        // Two index seeks on (bucket, id) in one statement, cheap enough for every acquire (S8):
        // the lowest bucket below 0 and the lowest at or above bucketCount. Parameter: bucketCount.
        bucketsOutside = "(SELECT " + bucket + " FROM " + messages + " WHERE " + bucket + " < 0 ORDER BY " + bucket
                + " LIMIT 1) UNION ALL (SELECT " + bucket + " FROM " + messages + " WHERE " + bucket + " >= ? ORDER BY "
                + bucket + " LIMIT 1)";
        pendingMetrics = "SELECT COUNT(*), MIN(" + q("created_at") + ") FROM " + messages;

        upsertHeartbeat = dialect.upsertHeartbeat(relays);
        selectHeartbeats = "SELECT " + q("relay_id") + ", " + q("last_seen") + " FROM " + relays;
        deleteStaleHeartbeat = "DELETE FROM " + relays + " WHERE " + q("relay_id") + " = ? AND " + q("last_seen")
                + " = ?";
        deleteHeartbeat = "DELETE FROM " + relays + " WHERE " + q("relay_id") + " = ?";

        selectLeases = "SELECT " + bucket + ", " + owner + ", " + expiresAt + " FROM " + leases + " WHERE " + bucket
                + " < ?";
        insertLeaseIfAbsent = dialect.insertLeaseIfAbsent(leases);
        // Keep, release and claim are fenced by the owner and expiry the relay saw (S5, S13: a claim
        // never compares clocks). The database evaluates each condition atomically on one row.
        keepLease = "UPDATE " + leases + " SET " + expiresAt + " = ? WHERE " + bucket + " = ? AND " + owner
                + " = ? AND " + expiresAt + " = ?";
        releaseLease = "UPDATE " + leases + " SET " + owner + " = NULL WHERE " + bucket + " = ? AND " + owner
                + " = ? AND " + expiresAt + " = ?";
        claimLease = "UPDATE " + leases + " SET " + owner + " = ?, " + expiresAt + " = ? WHERE " + bucket
                + " = ? AND " + owner + " = ? AND " + expiresAt + " = ?";
        claimFreeLease = "UPDATE " + leases + " SET " + owner + " = ?, " + expiresAt + " = ? WHERE " + bucket
                + " = ? AND " + owner + " IS NULL AND " + expiresAt + " = ?";
        selectOwned = "SELECT " + bucket + " FROM " + leases + " WHERE " + owner + " = ? AND " + expiresAt
                + " > ? AND " + bucket + " < ? ORDER BY " + bucket;
        releaseAllLeases = "UPDATE " + leases + " SET " + owner + " = NULL WHERE " + owner + " = ?";
    }

    /**
     * Renews the listed leases that the relay still holds; parameters: new expiry, owner, now,
     * then the buckets. Never shortens a lease and always changes it (S5, S13).
     */
    String renewLeases(int bucketCount) {
        String expiresAt = q("expires_at");
        return "UPDATE " + leases + " SET " + expiresAt + " = GREATEST(" + expiresAt + " + 1, ?) WHERE " + q("owner")
                + " = ? AND " + expiresAt + " > ? AND " + q("bucket") + " IN (" + placeholders(bucketCount) + ")";
    }

    /**
     * A batch that leaves out the given ids (C5); parameters: bucket, the ids (PostgreSQL: one
     * {@code bigint[]}, left out by an anti-join with {@code unnest}), the limit. Same order and
     * index as {@link #selectBatch}.
     */
    String selectBatchExcluding(int idCount) {
        if (dialect == JdbcDialect.POSTGRESQL) {
            // An anti-join (a merge over the primary key's order): "id <> ALL (?)" compares each row
            // with every id in flight, which doubled the database's CPU per message in the bench.
            return "SELECT " + q("id") + ", " + columns(MESSAGE_COLUMNS) + " FROM " + messages + " m WHERE "
                    + q("bucket") + " = ? AND NOT EXISTS (SELECT 1 FROM unnest(?::bigint[]) AS f(in_flight) WHERE "
                    + "f.in_flight = m." + q("id") + ") ORDER BY " + q("bucket") + ", " + q("id") + " LIMIT ?";
        }
        return "SELECT " + q("id") + ", " + columns(MESSAGE_COLUMNS) + " FROM " + messages + " WHERE "
                + q("bucket") + " = ? AND " + q("id") + " NOT IN (" + placeholders(idCount) + ") ORDER BY "
                + q("bucket") + ", " + q("id") + " LIMIT ?";
    }

    /**
     * A batch within a byte budget (S1), bounded in the database: the innermost query takes the
     * batch's rows by the {@code (bucket, id)} index, each with its size (key, value and header
     * bytes, {@code OCTET_LENGTH}, as {@code BatchBytes} counts them), one window sums the sizes
     * and counts the rows in id order, and only the rows within the budget (the first always) are
     * returned, so the driver receives only those. Parameters: bucket, the exclusion's parameters
     * when {@code excludedIds > 0} (as {@link #selectBatchExcluding}), the limit, the budget.
     *
     * <p>PostgreSQL carries the rows' columns through the window: one pass over the index and the
     * heap, the rows buffered by the window in the order the index gave them, no join back. That
     * join cost one more index probe per row, about a quarter of the read's server CPU, and with
     * statistics still showing the table empty (analyzed before a burst of messages) PostgreSQL
     * planned it as a nested loop that ran the window again for every row of the bucket: minutes
     * per read. MySQL and MariaDB materialize a derived table, which with {@code BLOB} columns
     * cannot stay in the memory engine, so there the inner query carries only the ids and sizes,
     * and the rows within the budget are joined back by their {@code (bucket, id)} key.
     */
    String selectBatchWithin(int excludedIds) {
        String id = q("id");
        String bucket = q("bucket");
        String size = "COALESCE(OCTET_LENGTH(" + q("record_key") + "), 0) + COALESCE(OCTET_LENGTH("
                + q("record_value") + "), 0) + COALESCE(OCTET_LENGTH(" + q("headers") + "), 0)";
        String exclusion = "";
        if (excludedIds > 0) {
            exclusion = dialect == JdbcDialect.POSTGRESQL
                    ? " AND NOT EXISTS (SELECT 1 FROM unnest(?::bigint[]) AS f(in_flight) WHERE f.in_flight = r." + id
                            + ")"
                    : " AND r." + id + " NOT IN (" + placeholders(excludedIds) + ")";
        }
        // One window definition for both functions, so that the database computes them in one pass.
        String running = " OVER (ORDER BY " + id + " ROWS UNBOUNDED PRECEDING)";
        String within = " WHERE w." + q("n") + " = 1 OR w." + q("upto") + " <= ?";
        if (dialect == JdbcDialect.POSTGRESQL) {
            StringBuilder carried = new StringBuilder("r." + id);
            StringBuilder selected = new StringBuilder("w." + id);
            for (String column : MESSAGE_COLUMNS) {
                carried.append(", r.").append(q(column));
                selected.append(", w.").append(q(column));
            }
            return "SELECT " + selected + " FROM (SELECT h.*, SUM(" + q("size") + ")" + running + " AS " + q("upto")
                    + ", COUNT(*)" + running + " AS " + q("n") + " FROM (SELECT " + carried + ", " + size + " AS "
                    + q("size") + " FROM " + messages + " r WHERE r." + bucket + " = ?" + exclusion + " ORDER BY r."
                    + bucket + ", r." + id + " LIMIT ?) h) w" + within + " ORDER BY w." + id;
        }
        StringBuilder selected = new StringBuilder("m." + id);
        for (String column : MESSAGE_COLUMNS) {
            selected.append(", m.").append(q(column));
        }
        return "SELECT " + selected + " FROM " + messages + " m JOIN (SELECT " + bucket + ", " + id + ", SUM("
                + q("size") + ")" + running + " AS " + q("upto") + ", COUNT(*)" + running + " AS " + q("n")
                + " FROM (SELECT r." + bucket + ", r." + id + ", " + size + " AS " + q("size") + " FROM " + messages
                + " r WHERE r." + bucket + " = ?" + exclusion + " ORDER BY r." + bucket + ", r." + id + " LIMIT ?) h) w"
                + " ON m." + bucket + " = w." + bucket + " AND m." + id + " = w." + id + within + " ORDER BY m."
                + bucket + ", m." + id;
    }

    /**
     * PostgreSQL: deletes rows of one bucket by id; parameters: bucket, then the ids as one
     * {@code bigint[]}. With an array the generic plan of the prepared statement seeks
     * {@code (bucket, id)} in the primary key; with a list of parameters it seeks the bucket and
     * filters all its rows.
     */
    String deleteMessagesInArray() {
        return "DELETE FROM " + messages + " WHERE " + q("bucket") + " = ? AND " + q("id") + " = ANY (?)";
    }

    /** Deletes rows of one bucket by id; parameters: bucket, then the ids. */
    String deleteMessages(int idCount) {
        return "DELETE FROM " + messages + " WHERE " + q("bucket") + " = ? AND " + q("id") + " IN ("
                + placeholders(idCount) + ")";
    }

    /**
     * Which of the given buckets hold a row: one index seek per bucket, in one statement (S3).
     * Parameters: the buckets.
     */
    String bucketsWithRows(int bucketCount) {
        String probe = "(SELECT " + q("bucket") + " FROM " + messages + " WHERE " + q("bucket") + " = ? LIMIT 1)";
        return String.join(" UNION ALL ", Collections.nCopies(bucketCount, probe));
    }

    private String q(String column) {
        return dialect.quote(column);
    }

    private String columns(String[] names) {
        StringBuilder sb = new StringBuilder();
        for (String name : names) {
            if (sb.length() > 0) {
                sb.append(", ");
            }
            sb.append(q(name));
        }
        return sb.toString();
    }

    private static String placeholders(int count) {
        return String.join(", ", Collections.nCopies(count, "?"));
    }
}
