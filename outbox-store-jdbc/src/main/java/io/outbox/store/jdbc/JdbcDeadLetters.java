package io.outbox.store.jdbc;

import io.outbox.spi.DeadLetter;
import io.outbox.spi.DeadLetterConflictException;
import io.outbox.spi.DeadLetterFailure;
import io.outbox.spi.DeadLetters;
import io.outbox.spi.HeadFailure;
import io.outbox.spi.LeaseRequest;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.support.StoreArguments;
import io.outbox.store.jdbc.JdbcTable.Column;
import io.outbox.store.jdbc.JdbcTable.Key;
import io.outbox.store.jdbc.JdbcTable.Need;
import io.outbox.store.jdbc.JdbcTable.Type;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Supplier;
import javax.sql.DataSource;

/**
 * Capability C4 of {@link JdbcOutboxStore}: the dead-letter table {@code <messages>_dead}, one
 * row per message id, beside the messages table. Every change is one transaction on one
 * connection: the move reads the pending row with {@code SELECT ... FOR UPDATE}, inserts its
 * columns as stored (the header blob is copied, not decoded) with the failure, and deletes it;
 * replay inserts the columns back as a new messages row (a new auto-increment id, so after what
 * is pending now) and deletes the dead letter. A failure at any step rolls the whole
 * transaction back. A move whose message id has a dead letter already compares the two records:
 * the same record (a repeat) updates the dead letter's failure and deletes the pending row; a
 * different one is refused with {@link DeadLetterConflictException}.
 *
 * <p>The failing heads' records ({@link DeadLetters#recordHeadFailure}) live in
 * {@code <messages>_failing}, one row per bucket, replaced by each record (delete and insert in
 * one transaction). A row counts only while its message id is the bucket's head's, so a
 * published head needs no delete on the publishing path; a move deletes the bucket's row of the
 * moved message in its transaction. Thread-safe.
 */
final class JdbcDeadLetters implements DeadLetters {

    /** Appended to the messages table's name for the dead-letter table. */
    static final String SUFFIX = "_dead";

    /** Appended to the messages table's name for the failing heads' table. */
    static final String FAILING_SUFFIX = "_failing";

    private static final String FAILING_COLUMNS = "bucket, message_id, reason, cause_class, attempts, "
            + "first_failure_at, last_failure_at, relay_id";

    private static final String COLUMNS = "message_id, bucket, topic, record_key, record_value, headers, "
            + "kafka_partition, created_at, reason, cause_class, attempts, first_failure_at, last_failure_at, "
            + "relay_id, dead_lettered_at";

    private final DataSource dataSource;
    private final JdbcOutboxTables tables;
    private final Supplier<JdbcDialect> dialect;
    private final Clock clock;

    JdbcDeadLetters(DataSource dataSource, JdbcOutboxTables tables, Supplier<JdbcDialect> dialect, Clock clock) {
        this.dataSource = dataSource;
        this.tables = tables;
        this.dialect = dialect;
        this.clock = clock;
    }

    /** The dead-letter table's name: {@code <messages>_dead}. */
    static String tableName(JdbcOutboxTables tables) {
        return tables.messages() + SUFFIX;
    }

    /** The failing heads' table's name: {@code <messages>_failing}. */
    static String failingTableName(JdbcOutboxTables tables) {
        return tables.messages() + FAILING_SUFFIX;
    }

    /** The dead-letter and failing heads' tables; part of {@link JdbcDialect#tables}. */
    static List<JdbcTable> tables(JdbcOutboxTables tables) {
        List<Column> failure = List.of(
                Column.notNull("reason", Type.TEXT, DeadLetterFailure.MAX_REASON_LENGTH),
                Column.notNull("cause_class", Type.TEXT, DeadLetterFailure.MAX_CAUSE_CLASS_LENGTH),
                Column.notNull("attempts", Type.INTEGER),
                Column.notNull("first_failure_at", Type.BIGINT),
                Column.notNull("last_failure_at", Type.BIGINT),
                Column.notNull("relay_id", Type.NAME, LeaseRequest.MAX_RELAY_ID_LENGTH));
        List<Column> dead = new ArrayList<>(List.of(Column.notNull("message_id", Type.UUID),
                Column.notNull("bucket", Type.INTEGER)));
        dead.addAll(JdbcDialect.RECORD_COLUMNS);
        dead.addAll(failure);
        dead.add(Column.notNull("dead_lettered_at", Type.BIGINT));
        List<Column> failing = new ArrayList<>(List.of(Column.notNull("bucket", Type.INTEGER),
                Column.notNull("message_id", Type.UUID)));
        failing.addAll(failure);
        return List.of(new JdbcTable(tables.schema(), tableName(tables), dead,
                        List.of(Key.primary(null, Need.UNIQUE, "one dead letter per message id: moves, replays and "
                                + "purges find a dead letter by its id, and the list pages through it", "message_id")),
                        List.of()),
                new JdbcTable(tables.schema(), failingTableName(tables), failing,
                        List.of(Key.primary(null, Need.UNIQUE, "one failing head per bucket, found by it", "bucket")),
                        List.of()));
    }

    /** Drops the dead-letter and failing heads' tables if they exist; part of {@link JdbcDialect#dropStatements}. */
    static List<String> dropStatements(JdbcDialect d, JdbcOutboxTables tables) {
        return List.of("DROP TABLE IF EXISTS " + d.qualified(tables, tableName(tables)),
                "DROP TABLE IF EXISTS " + d.qualified(tables, failingTableName(tables)));
    }

    /**
     * {@inheritDoc}
     *
     * <p>One transaction on the dead-letter table {@code <messages>_dead}: the pending row is read
     * with {@code SELECT ... FOR UPDATE}, copied as stored and deleted.
     */
    @Override
    public boolean moveToDeadLetters(int bucket, UUID messageId, DeadLetterFailure failure) {
        if (bucket < 0) {
            throw new IllegalArgumentException("bucket must be >= 0 but was " + bucket);
        }
        Objects.requireNonNull(messageId, "messageId must not be null");
        Objects.requireNonNull(failure, "failure must not be null");
        return inTransaction("moving message " + messageId + " of bucket " + bucket + " to the dead letters",
                (c, d) -> {
                    String messages = d.qualified(tables, tables.messages());
                    String dead = d.qualified(tables, tableName(tables));
                    Long id = null;
                    Object[] row = new Object[6];
                    try (PreparedStatement select = c.prepareStatement("SELECT " + q(d, "id", "topic", "record_key",
                            "record_value", "headers", "kafka_partition", "created_at") + " FROM " + messages
                            + " WHERE " + d.quote("bucket") + " = ? AND " + d.quote("message_id") + " = ? ORDER BY "
                            + d.quote("bucket") + ", " + d.quote("id") + " LIMIT 1 FOR UPDATE")) {
                        select.setInt(1, bucket);
                        d.setMessageId(select, 2, messageId);
                        try (ResultSet rs = select.executeQuery()) {
                            if (rs.next()) {
                                id = rs.getLong(1);
                                row[0] = rs.getString(2);
                                row[1] = rs.getBytes(3);
                                row[2] = rs.getBytes(4);
                                row[3] = rs.getBytes(5);
                                int partition = rs.getInt(6);
                                row[4] = rs.wasNull() ? null : partition;
                                row[5] = rs.getLong(7);
                            }
                        }
                    }
                    if (id == null) {
                        return false;
                    }
                    DeadLetter existing = select(c, d, messageId, true);
                    if (existing != null && !existing.sameRecord((String) row[0], (byte[]) row[1], (byte[]) row[2],
                            (byte[]) row[3], (Integer) row[4])) {
                        throw new DeadLetterConflictException(bucket, messageId, dead);
                    }
                    if (existing != null) {
                        updateFailure(c, d, dead, bucket, messageId, failure); // a repeat: one dead letter
                    } else {
                        try (PreparedStatement insert = c.prepareStatement("INSERT INTO " + dead + " ("
                                + q(d, COLUMNS) + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
                            d.setMessageId(insert, 1, messageId);
                            insert.setInt(2, bucket);
                            insert.setString(3, (String) row[0]);
                            insert.setBytes(4, (byte[]) row[1]);
                            insert.setBytes(5, (byte[]) row[2]);
                            insert.setBytes(6, (byte[]) row[3]);
                            if (row[4] == null) {
                                insert.setNull(7, Types.INTEGER);
                            } else {
                                insert.setInt(7, (Integer) row[4]);
                            }
                            insert.setLong(8, (Long) row[5]);
                            setFailure(insert, 9, d, failure);
                            insert.setLong(15, clock.millis());
                            insert.executeUpdate();
                        }
                    }
                    try (PreparedStatement forget = c.prepareStatement("DELETE FROM " + d.qualified(tables,
                            failingTableName(tables)) + " WHERE " + d.quote("bucket") + " = ? AND "
                            + d.quote("message_id") + " = ?")) {
                        forget.setInt(1, bucket);
                        d.setMessageId(forget, 2, messageId);
                        forget.executeUpdate();
                    }
                    try (PreparedStatement delete = c.prepareStatement("DELETE FROM " + messages + " WHERE "
                            + d.quote("bucket") + " = ? AND " + d.quote("id") + " = ?")) {
                        delete.setInt(1, bucket);
                        delete.setLong(2, id);
                        if (delete.executeUpdate() != 1) {
                            throw new Rollback(); // published meanwhile: nothing is moved
                        }
                    }
                    return true;
                });
    }

    /** Sets reason, cause class, attempts, first and last failure and relay id from {@code index} on. */
    private static void setFailure(PreparedStatement statement, int index, JdbcDialect d, DeadLetterFailure failure)
            throws SQLException {
        statement.setString(index, failure.reason());
        statement.setString(index + 1, failure.causeClass());
        statement.setInt(index + 2, failure.attempts());
        statement.setLong(index + 3, failure.firstFailureAt().toEpochMilli());
        statement.setLong(index + 4, failure.lastFailureAt().toEpochMilli());
        d.setRelayId(statement, index + 5, failure.relayId());
    }

    private void updateFailure(Connection c, JdbcDialect d, String dead, int bucket, UUID messageId,
                               DeadLetterFailure failure) throws SQLException {
        try (PreparedStatement update = c.prepareStatement("UPDATE " + dead + " SET " + d.quote("reason") + " = ?, "
                + d.quote("cause_class") + " = ?, " + d.quote("attempts") + " = ?, " + d.quote("first_failure_at")
                + " = ?, " + d.quote("last_failure_at") + " = ?, " + d.quote("relay_id") + " = ?, "
                + d.quote("dead_lettered_at") + " = ?, " + d.quote("bucket") + " = ? WHERE " + d.quote("message_id")
                + " = ?")) {
            setFailure(update, 1, d, failure);
            update.setLong(7, clock.millis());
            update.setInt(8, bucket);
            d.setMessageId(update, 9, messageId);
            update.executeUpdate();
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>One transaction on the failing heads' table {@code <messages>_failing} (one row per
     * bucket): the bucket's row is deleted and the new one inserted, after checking that the
     * message is pending.
     */
    @Override
    public boolean recordHeadFailure(int bucket, UUID messageId, DeadLetterFailure failure) {
        if (bucket < 0) {
            throw new IllegalArgumentException("bucket must be >= 0 but was " + bucket);
        }
        Objects.requireNonNull(messageId, "messageId must not be null");
        Objects.requireNonNull(failure, "failure must not be null");
        return inTransaction("recording the failures of message " + messageId + " of bucket " + bucket, (c, d) -> {
            try (PreparedStatement pending = c.prepareStatement("SELECT 1 FROM " + d.qualified(tables,
                    tables.messages()) + " WHERE " + d.quote("bucket") + " = ? AND " + d.quote("message_id")
                    + " = ? LIMIT 1")) {
                pending.setInt(1, bucket);
                d.setMessageId(pending, 2, messageId);
                try (ResultSet rs = pending.executeQuery()) {
                    if (!rs.next()) {
                        return false;
                    }
                }
            }
            String failing = d.qualified(tables, failingTableName(tables));
            try (PreparedStatement delete = c.prepareStatement("DELETE FROM " + failing + " WHERE "
                    + d.quote("bucket") + " = ?")) {
                delete.setInt(1, bucket);
                delete.executeUpdate();
            }
            try (PreparedStatement insert = c.prepareStatement("INSERT INTO " + failing + " (" + q(d, FAILING_COLUMNS)
                    + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?)")) {
                insert.setInt(1, bucket);
                d.setMessageId(insert, 2, messageId);
                setFailure(insert, 3, d, failure);
                insert.executeUpdate();
            }
            return true;
        });
    }

    /**
     * {@inheritDoc}
     *
     * <p>One query: the buckets' rows of {@code <messages>_failing} whose message id is the
     * bucket's head's (the lowest id of the bucket, through the (bucket, id) key).
     */
    @Override
    public List<HeadFailure> headFailures(List<Integer> buckets) {
        List<Integer> asked = StoreArguments.requireBuckets(buckets);
        if (asked.isEmpty()) {
            return List.of();
        }
        return inTransaction("reading the failing heads", (c, d) -> {
            String messages = d.qualified(tables, tables.messages());
            String sql = "SELECT " + q(d, FAILING_COLUMNS).replace(d.quote("bucket"), "f." + d.quote("bucket"))
                    .replace(d.quote("message_id"), "f." + d.quote("message_id")) + " FROM "
                    + d.qualified(tables, failingTableName(tables)) + " f WHERE f." + d.quote("bucket") + " IN ("
                    + String.join(", ", Collections.nCopies(asked.size(), "?")) + ") AND f."
                    + d.quote("message_id") + " = (SELECT h." + d.quote("message_id") + " FROM " + messages
                    + " h WHERE h." + d.quote("bucket") + " = f." + d.quote("bucket") + " ORDER BY h."
                    + d.quote("bucket") + ", h." + d.quote("id") + " LIMIT 1) ORDER BY f." + d.quote("bucket");
            List<HeadFailure> found = new ArrayList<>();
            try (PreparedStatement select = c.prepareStatement(sql)) {
                for (int i = 0; i < asked.size(); i++) {
                    select.setInt(i + 1, asked.get(i));
                }
                try (ResultSet rs = select.executeQuery()) {
                    while (rs.next()) {
                        found.add(new HeadFailure(rs.getInt(1), d.getMessageId(rs, 2), new DeadLetterFailure(
                                rs.getString(3), rs.getString(4), rs.getInt(5), Instant.ofEpochMilli(rs.getLong(6)),
                                Instant.ofEpochMilli(rs.getLong(7)), d.getRelayId(rs, 8))));
                    }
                }
            }
            return List.copyOf(found);
        });
    }

    @Override
    public List<DeadLetter> deadLetters(UUID after, int limit) {
        DeadLetters.requireLimit(limit);
        return inTransaction("listing dead letters", (c, d) -> {
            String sql = "SELECT " + q(d, COLUMNS) + " FROM " + d.qualified(tables, tableName(tables))
                    + (after == null ? "" : " WHERE " + d.quote("message_id") + " > ?") + " ORDER BY "
                    + d.quote("message_id") + " LIMIT ?";
            List<DeadLetter> page = new ArrayList<>();
            try (PreparedStatement select = c.prepareStatement(sql)) {
                int i = 1;
                if (after != null) {
                    d.setMessageId(select, i++, after);
                }
                select.setInt(i, limit);
                try (ResultSet rs = select.executeQuery()) {
                    while (rs.next()) {
                        page.add(read(d, rs));
                    }
                }
            }
            return List.copyOf(page);
        });
    }

    @Override
    public Optional<DeadLetter> deadLetter(UUID messageId) {
        Objects.requireNonNull(messageId, "messageId must not be null");
        return inTransaction("reading dead letter " + messageId, (c, d) -> Optional.ofNullable(select(c, d, messageId,
                false)));
    }

    @Override
    public boolean replayDeadLetter(UUID messageId) {
        Objects.requireNonNull(messageId, "messageId must not be null");
        return inTransaction("replaying dead letter " + messageId, (c, d) -> {
            DeadLetter dead = select(c, d, messageId, true);
            if (dead == null) {
                return false;
            }
            try (PreparedStatement insert = c.prepareStatement("INSERT INTO " + d.qualified(tables, tables.messages())
                    + " (" + q(d, "bucket", "message_id", "topic", "record_key", "record_value", "headers",
                    "kafka_partition", "created_at") + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?)")) {
                insert.setInt(1, dead.bucket());
                d.setMessageId(insert, 2, messageId);
                insert.setString(3, dead.topic());
                insert.setBytes(4, dead.key());
                insert.setBytes(5, dead.value());
                insert.setBytes(6, dead.headers());
                if (dead.partition() == null) {
                    insert.setNull(7, Types.INTEGER);
                } else {
                    insert.setInt(7, dead.partition());
                }
                insert.setLong(8, dead.createdAt().toEpochMilli());
                insert.executeUpdate();
            }
            if (delete(c, d, messageId) != 1) {
                throw new Rollback();
            }
            return true;
        });
    }

    @Override
    public boolean purgeDeadLetter(UUID messageId) {
        Objects.requireNonNull(messageId, "messageId must not be null");
        return inTransaction("purging dead letter " + messageId, (c, d) -> delete(c, d, messageId) == 1);
    }

    private int delete(Connection c, JdbcDialect d, UUID messageId) throws SQLException {
        try (PreparedStatement delete = c.prepareStatement("DELETE FROM " + d.qualified(tables, tableName(tables))
                + " WHERE " + d.quote("message_id") + " = ?")) {
            d.setMessageId(delete, 1, messageId);
            return delete.executeUpdate();
        }
    }

    private DeadLetter select(Connection c, JdbcDialect d, UUID messageId, boolean forUpdate) throws SQLException {
        try (PreparedStatement select = c.prepareStatement("SELECT " + q(d, COLUMNS) + " FROM "
                + d.qualified(tables, tableName(tables)) + " WHERE " + d.quote("message_id") + " = ?"
                + (forUpdate ? " FOR UPDATE" : ""))) {
            d.setMessageId(select, 1, messageId);
            try (ResultSet rs = select.executeQuery()) {
                return rs.next() ? read(d, rs) : null;
            }
        }
    }

    private static DeadLetter read(JdbcDialect d, ResultSet rs) throws SQLException {
        UUID messageId = d.getMessageId(rs, 1);
        int partition = rs.getInt(7);
        Integer partitionOrNull = rs.wasNull() ? null : partition;
        DeadLetterFailure failure = new DeadLetterFailure(rs.getString(9), rs.getString(10), rs.getInt(11),
                Instant.ofEpochMilli(rs.getLong(12)), Instant.ofEpochMilli(rs.getLong(13)), d.getRelayId(rs, 14));
        return new DeadLetter(messageId, rs.getInt(2), rs.getString(3), rs.getBytes(4), rs.getBytes(5),
                rs.getBytes(6), partitionOrNull, Instant.ofEpochMilli(rs.getLong(8)), failure,
                Instant.ofEpochMilli(rs.getLong(15)));
    }

    private static String q(JdbcDialect d, String... columns) {
        List<String> names = new ArrayList<>();
        for (String list : columns) {
            for (String column : list.split(",\\s*")) {
                names.add(d.quote(column.strip()));
            }
        }
        return String.join(", ", names);
    }

    /** Undoes the transaction and makes the call return false. */
    private static final class Rollback extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Rollback() {
            super(null, null, false, false);
        }
    }

    @FunctionalInterface
    private interface Work<T> {
        T run(Connection connection, JdbcDialect dialect) throws SQLException;
    }

    @SuppressWarnings("unchecked")
    private <T> T inTransaction(String what, Work<T> work) {
        JdbcDialect d = dialect.get();
        try (Connection c = dataSource.getConnection()) {
            boolean autoCommit = c.getAutoCommit();
            c.setAutoCommit(false);
            try {
                T result = work.run(c, d);
                c.commit();
                return result;
            } catch (Rollback e) {
                c.rollback();
                return (T) Boolean.FALSE;
            } catch (SQLException | RuntimeException e) {
                try {
                    c.rollback();
                } catch (SQLException suppressed) {
                    e.addSuppressed(suppressed);
                }
                throw e;
            } finally {
                c.setAutoCommit(autoCommit);
            }
        } catch (SQLException e) {
            if (JdbcOutboxStore.isMissingSchemaObject(e)) {
                throw new OutboxMisconfigurationException(what + " failed: the dead-letter table "
                        + tableName(tables) + " or the failing heads' table " + failingTableName(tables)
                        + (tables.schema() == null ? "" : " in schema " + tables.schema())
                        + " (capability C4) or a column of it does not exist: " + e.getMessage().strip()
                        + ". Create it with JdbcOutboxStore.createSchema() or the DDL of JdbcDialect."
                        + d.name() + ".schemaScript(tables)", e);
            }
            throw new JdbcOutboxException(what + " failed (dead-letter table " + tableName(tables) + ")", e);
        }
    }
}
