package io.outbox.store.jdbc;

import io.outbox.spi.DeadLetter;
import io.outbox.spi.DeadLetterFailure;
import io.outbox.spi.DeadLetters;
import io.outbox.spi.OutboxMisconfigurationException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
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
 * transaction back. Thread-safe.
 */
final class JdbcDeadLetters {

    /** Appended to the messages table's name for the dead-letter table. */
    static final String SUFFIX = "_dead";

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

    /** The DDL of the dead-letter table, idempotent; part of {@link JdbcDialect#createStatements}. */
    static List<String> createStatements(JdbcDialect d, JdbcOutboxTables tables) {
        String table = d.qualified(tables, tableName(tables));
        String c = "\n    ";
        boolean mysql = d == JdbcDialect.MYSQL;
        String binary = switch (d) {
            case POSTGRESQL -> "BYTEA";
            case MYSQL -> "LONGBLOB";
            case H2 -> "VARBINARY";
        };
        String text = mysql ? " CHARACTER SET utf8mb4" : "";
        return List.of("CREATE TABLE IF NOT EXISTS " + table + " (" + c
                + d.quote("message_id") + (mysql ? " CHAR(36) CHARACTER SET ascii" : " UUID") + " NOT NULL," + c
                + d.quote("bucket") + " INTEGER NOT NULL," + c
                + d.quote("topic") + " VARCHAR(249)" + (mysql ? " CHARACTER SET ascii" : "") + " NOT NULL," + c
                + d.quote("record_key") + " " + binary + " NULL," + c
                + d.quote("record_value") + " " + binary + " NULL," + c
                + d.quote("headers") + " " + binary + " NOT NULL," + c
                + d.quote("kafka_partition") + " INTEGER NULL," + c
                + d.quote("created_at") + " BIGINT NOT NULL," + c
                + d.quote("reason") + " VARCHAR(" + DeadLetterFailure.MAX_REASON_LENGTH + ")" + text + " NOT NULL," + c
                + d.quote("cause_class") + " VARCHAR(" + DeadLetterFailure.MAX_CAUSE_CLASS_LENGTH + ")" + text
                + " NOT NULL," + c
                + d.quote("attempts") + " INTEGER NOT NULL," + c
                + d.quote("first_failure_at") + " BIGINT NOT NULL," + c
                + d.quote("last_failure_at") + " BIGINT NOT NULL," + c
                + d.quote("relay_id") + (mysql ? " VARBINARY(512)" : " VARCHAR(128)") + " NOT NULL," + c
                + d.quote("dead_lettered_at") + " BIGINT NOT NULL," + c
                + "PRIMARY KEY (" + d.quote("message_id") + ")\n)" + (mysql ? " ENGINE=InnoDB" : ""));
    }

    /** Drops the dead-letter table if it exists; part of {@link JdbcDialect#dropStatements}. */
    static String dropStatement(JdbcDialect d, JdbcOutboxTables tables) {
        return "DROP TABLE IF EXISTS " + d.qualified(tables, tableName(tables));
    }

    boolean move(int bucket, UUID messageId, DeadLetterFailure failure) {
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
                    if (exists(c, d, dead, messageId)) {
                        throw new IllegalStateException("a dead letter with message id " + messageId + " exists already "
                                + "in " + dead + "; the pending message stays in bucket " + bucket);
                    }
                    try (PreparedStatement insert = c.prepareStatement("INSERT INTO " + dead + " (" + q(d, COLUMNS)
                            + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
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
                        insert.setString(9, failure.reason());
                        insert.setString(10, failure.causeClass());
                        insert.setInt(11, failure.attempts());
                        insert.setLong(12, failure.firstFailureAt().toEpochMilli());
                        insert.setLong(13, failure.lastFailureAt().toEpochMilli());
                        d.setRelayId(insert, 14, failure.relayId());
                        insert.setLong(15, clock.millis());
                        insert.executeUpdate();
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

    List<DeadLetter> list(UUID after, int limit) {
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

    Optional<DeadLetter> get(UUID messageId) {
        Objects.requireNonNull(messageId, "messageId must not be null");
        return inTransaction("reading dead letter " + messageId, (c, d) -> Optional.ofNullable(select(c, d, messageId,
                false)));
    }

    boolean replay(UUID messageId) {
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

    boolean purge(UUID messageId) {
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

    private static boolean exists(Connection c, JdbcDialect d, String dead, UUID messageId) throws SQLException {
        try (PreparedStatement select = c.prepareStatement("SELECT 1 FROM " + dead + " WHERE " + d.quote("message_id")
                + " = ?")) {
            d.setMessageId(select, 1, messageId);
            try (ResultSet rs = select.executeQuery()) {
                return rs.next();
            }
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
                        + tableName(tables) + (tables.schema() == null ? "" : " in schema " + tables.schema())
                        + " (capability C4) or a column of it does not exist: " + e.getMessage().strip()
                        + ". Create it with JdbcOutboxStore.createSchema() or the DDL of JdbcDialect."
                        + d.name() + ".schemaScript(tables)", e);
            }
            throw new JdbcOutboxException(what + " failed (dead-letter table " + tableName(tables) + ")", e);
        }
    }
}
