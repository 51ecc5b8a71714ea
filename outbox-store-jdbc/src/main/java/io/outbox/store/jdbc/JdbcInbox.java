package io.outbox.store.jdbc;

import io.outbox.InboxRetention;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.support.InboxArguments;
import io.outbox.store.jdbc.JdbcTable.Column;
import io.outbox.store.jdbc.JdbcTable.Key;
import io.outbox.store.jdbc.JdbcTable.Need;
import io.outbox.store.jdbc.JdbcTable.Type;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * The consumer-side inbox on a relational database (rules I1, I2): inside the consumer's own
 * transaction, {@link #firstDelivery(Connection, String, UUID)} records the marker
 * {@code (consumer, message id)} and says whether this is the first time, so the business effect
 * and the marker commit or roll back together.
 *
 * <pre>{@code
 * JdbcInbox inbox = JdbcInbox.builder(dataSource).retention(Duration.ofDays(7)).build();
 * inbox.createSchema();                                       // or run inbox.createStatements(...)
 * try (Connection c = dataSource.getConnection()) {
 *     c.setAutoCommit(false);
 *     if (inbox.firstDelivery(c, "billing", MessageIdReader.messageId(record))) {
 *         chargeCustomer(c, order);                            // the business effect, same transaction
 *     }
 *     c.commit();                                              // marker and effect, or neither
 * }
 * }</pre>
 *
 * <h2>Statements (one round trip, no exception on a repeat)</h2>
 * <ul>
 *   <li>PostgreSQL: {@code INSERT ... ON CONFLICT (consumer, message_id) DO NOTHING}; one row
 *       inserted means first delivery.</li>
 *   <li>MySQL/MariaDB: {@code INSERT IGNORE}; since {@code IGNORE} turns other errors into
 *       warnings too, the statement's warnings are checked: a duplicate-key warning (1062) is the
 *       repeat, any other warning fails the call with an {@link SQLException}.</li>
 *   <li>H2: {@code MERGE INTO ... USING (VALUES ...) WHEN NOT MATCHED THEN INSERT}. When two
 *       transactions insert the same marker at once, H2 makes the second wait for the first and
 *       then reports a duplicate key (23505): that, and only that, is read as a repeat. H2 undoes
 *       only the failed statement, so the caller's transaction goes on.</li>
 * </ul>
 * On every database a second transaction inserting a marker that an open transaction already
 * inserted waits for it on the primary key: when the first commits the second sees a repeat; when
 * it rolls back the second is the first delivery. So exactly one transaction per
 * {@code (consumer, message id)} commits a first delivery, whatever the concurrency (I1). Under
 * {@code REPEATABLE READ} or {@code SERIALIZABLE} on PostgreSQL a marker committed after the
 * caller's snapshot makes the insert fail with a serialization failure (SQLState 40001): roll
 * back and retry the whole delivery, as for any such failure.
 *
 * <h2>Table</h2>
 * One table, default {@value #DEFAULT_TABLE}: {@code consumer} (VARCHAR(100), on MySQL/MariaDB
 * VARBINARY(400) so that names compare exactly whatever the collation), {@code message_id} (UUID,
 * on MySQL/MariaDB CHAR(36) ASCII), {@code seen_at} (BIGINT epoch milliseconds from the inbox's
 * clock), primary key {@code (consumer, message_id)}, and an index {@code <table>_seen_at} for the
 * retention cleanup. Names are validated identifiers, always quoted.
 *
 * <h2>Retention (I2)</h2>
 * Markers are deleted only by {@link #deleteExpired()} / {@link #deleteExpiredBatch()}, which the
 * application schedules; each batch is one {@code DELETE} of at most
 * {@link #cleanupBatchSize()} markers with {@code seen_at < now - retention}, in auto-commit on a
 * connection of the inbox's data source. A repeat that arrives after its marker was deleted is
 * accepted as a first delivery again.
 *
 * <p>Instances are immutable and thread-safe. The data source serves only the schema methods and
 * the cleanup; {@code firstDelivery} uses the caller's connection and never commits, rolls back,
 * closes or reconfigures it.
 */
public final class JdbcInbox implements InboxRetention {

    /** The table name unless another is set. */
    public static final String DEFAULT_TABLE = "outbox_inbox";

    /** MySQL/MariaDB's duplicate-entry code, the warning {@code INSERT IGNORE} leaves for a repeat. */
    private static final int MYSQL_DUPLICATE_ENTRY = 1062;
    private static final String INDEX_SUFFIX = "_seen_at";
    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    private final DataSource dataSource;
    private final String schema;
    private final String table;
    private final JdbcDialect configuredDialect;
    private final Clock clock;
    private final Duration retention;
    private final int cleanupBatchSize;

    private JdbcInbox(Builder builder) {
        this.dataSource = builder.dataSource;
        this.schema = builder.schema;
        this.table = builder.table;
        this.configuredDialect = builder.dialect;
        this.clock = builder.clock;
        this.retention = builder.retention;
        this.cleanupBatchSize = builder.cleanupBatchSize;
    }

    /**
     * Starts building an inbox.
     *
     * @param dataSource where the schema methods and the cleanup borrow connections; not null
     * @return a builder with the defaults: table {@value #DEFAULT_TABLE} in the connection's
     *     current schema, the dialect read from each connection, the system UTC clock, 7 days'
     *     retention, batches of 1,000
     * @throws NullPointerException if {@code dataSource} is null
     */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    /**
     * Records that {@code consumerName} has received {@code messageId}, in the caller's
     * transaction, and says whether this is the first time (I1). Process the message only when it
     * returns true, on the same connection, before committing; when the caller rolls back, the
     * marker goes too, and the next delivery is a first one again.
     *
     * @param connection the caller's connection with auto-commit off; not null; never committed,
     *     rolled back, closed or reconfigured here
     * @param consumerName who consumes: the same message counts once per consumer name; see
     *     {@link InboxArguments#requireConsumerName(String)}
     * @param messageId the outbox message id ({@link io.outbox.MessageIdReader}); not null
     * @return true if no marker existed (this transaction now holds it), false for a repeat
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the consumer name is not allowed
     * @throws IllegalStateException if the connection is in auto-commit mode: the marker would
     *     commit on its own, apart from the business effect
     * @throws SQLException if the insert fails (absent table, lost connection, serialization
     *     failure, an unexpected warning on MySQL/MariaDB); the caller should roll back
     */
    public boolean firstDelivery(Connection connection, String consumerName, UUID messageId) throws SQLException {
        Objects.requireNonNull(connection, "connection must not be null");
        InboxArguments.requireConsumerName(consumerName);
        InboxArguments.requireMessageId(messageId);
        if (connection.getAutoCommit()) {
            throw new IllegalStateException("the connection is in auto-commit mode: the inbox marker would commit on"
                    + " its own, apart from the business effect (rule I1); call connection.setAutoCommit(false) and"
                    + " commit after the effect");
        }
        JdbcDialect dialect = configuredDialect != null ? configuredDialect : JdbcDialect.detect(connection);
        try (PreparedStatement insert = connection.prepareStatement(insertIfAbsent(dialect))) {
            if (dialect == JdbcDialect.MYSQL) {
                insert.setBytes(1, consumerName.getBytes(StandardCharsets.UTF_8));
            } else {
                insert.setString(1, consumerName);
            }
            dialect.setMessageId(insert, 2, messageId);
            insert.setLong(3, clock.millis());
            return switch (dialect) {
                case POSTGRESQL -> insert.executeUpdate() == 1;
                case MYSQL -> insertIgnoreChecked(insert);
                case H2 -> mergeRaceTolerant(insert);
            };
        }
    }

    private static boolean insertIgnoreChecked(PreparedStatement insert) throws SQLException {
        int inserted = insert.executeUpdate();
        boolean duplicate = false;
        for (SQLWarning w = insert.getWarnings(); w != null; w = w.getNextWarning()) {
            if (w.getErrorCode() == MYSQL_DUPLICATE_ENTRY && inserted == 0) {
                duplicate = true;
            } else {
                throw new SQLException("recording the inbox marker left a warning that INSERT IGNORE would otherwise"
                        + " hide: " + w.getMessage() + " (code " + w.getErrorCode() + ")", w.getSQLState(),
                        w.getErrorCode(), w);
            }
        }
        if (inserted == 0 && !duplicate) {
            throw new SQLException("INSERT IGNORE of the inbox marker inserted nothing and reported no duplicate key");
        }
        return inserted == 1;
    }

    private static boolean mergeRaceTolerant(PreparedStatement insert) throws SQLException {
        try {
            return insert.executeUpdate() == 1;
        } catch (SQLException e) {
            if ("23505".equals(e.getSQLState())) {
                return false; // a concurrent transaction committed the same marker while this one waited
            }
            throw e;
        }
    }

    @Override
    public Duration retention() {
        return retention;
    }

    @Override
    public int cleanupBatchSize() {
        return cleanupBatchSize;
    }

    /**
     * {@inheritDoc}
     *
     * @throws OutboxMisconfigurationException if the table does not exist
     * @throws JdbcOutboxException on another database error
     */
    @Override
    public int deleteExpiredBatch() {
        return deleteBatch(InboxArguments.cutoffMillis(clock.millis(), retention));
    }

    /**
     * {@inheritDoc}
     *
     * @throws OutboxMisconfigurationException if the table does not exist
     * @throws JdbcOutboxException on another database error
     */
    @Override
    public long deleteExpired() {
        return InboxArguments.deleteInBatches(
                InboxArguments.cutoffMillis(clock.millis(), retention), cleanupBatchSize, this::deleteBatch);
    }

    private int deleteBatch(long cutoffMillis) {
        return run("deleting expired inbox markers", (c, dialect) -> {
            try (PreparedStatement delete = c.prepareStatement(deleteExpiredSql(dialect))) {
                delete.setLong(1, cutoffMillis);
                delete.setInt(2, cleanupBatchSize);
                return delete.executeUpdate();
            }
        });
    }

    /**
     * Creates the table and its {@code seen_at} index unless they exist; idempotent, safe to call
     * from several processes.
     *
     * @throws OutboxMisconfigurationException if the schema named does not exist
     * @throws JdbcOutboxException on another database error (a missing privilege, say)
     */
    public void createSchema() {
        run("creating the inbox table", (c, dialect) -> {
            for (String ddl : createStatements(dialect)) {
                try (Statement s = c.createStatement()) {
                    try {
                        s.execute(ddl);
                    } catch (SQLException raced) {
                        // Two processes creating at once: PostgreSQL may report a duplicate type.
                        s.execute(ddl);
                    }
                }
            }
            return null;
        });
    }

    /**
     * Checks that the table exists with the columns, types, primary key and {@code seen_at} index
     * the inbox's statements need, from the database's metadata (an index counts by its leading
     * columns, whatever its name). Reads no row.
     *
     * @throws OutboxMisconfigurationException on one line, naming the table and what it lacks, and
     *     for a missing key or index its columns and the DDL that creates it
     * @throws JdbcOutboxException on another database error
     */
    public void verifySchema() {
        run("checking the inbox table", (c, dialect) -> {
            JdbcTable.verify("inbox", c, dialect, List.of(tableSpec()), 0, "create it with JdbcInbox.createSchema() "
                    + "or the DDL of JdbcInbox.createStatements");
            return null;
        });
    }

    /**
     * The statements that create the table and its index if absent, for a migration tool.
     *
     * @param dialect the database's dialect; not null
     * @return the statements, without trailing semicolons; immutable
     */
    public List<String> createStatements(JdbcDialect dialect) {
        Objects.requireNonNull(dialect, "dialect must not be null");
        return tableSpec().createStatements(dialect);
    }

    /** The table as the inbox's statements need it: what {@link #createStatements} creates, {@link #verifySchema()} checks. */
    JdbcTable tableSpec() {
        return new JdbcTable(schema, table, List.of(
                Column.notNull("consumer", Type.NAME, InboxArguments.MAX_CONSUMER_NAME_LENGTH),
                Column.notNull("message_id", Type.UUID),
                Column.notNull("seen_at", Type.BIGINT)),
                List.of(Key.primary(null, Need.UNIQUE, "exactly one first delivery per consumer and message id (rule I1)"
                                + " rests on it", "consumer", "message_id"),
                        Key.index(table + INDEX_SUFFIX, Need.ORDERED, "the retention cleanup (rule I2) finds expired "
                                + "markers through it", "seen_at")),
                List.of());
    }

    /**
     * The statement that drops the table, if it exists: for tests and uninstalling.
     *
     * @param dialect the dialect; not null
     * @return the statement
     */
    public String dropStatement(JdbcDialect dialect) {
        return "DROP TABLE IF EXISTS " + qualified(Objects.requireNonNull(dialect, "dialect must not be null"));
    }

    /**
     * The table's name.
     *
     * @return the unquoted table name
     */
    public String table() {
        return table;
    }

    /**
     * The schema holding the table.
     *
     * @return the schema, or null for the connection's current one
     */
    public String schema() {
        return schema;
    }

    @Override
    public String toString() {
        return "JdbcInbox[" + (schema == null ? "" : schema + ".") + table + ", retention=" + retention
                + ", cleanupBatchSize=" + cleanupBatchSize + "]";
    }

    // ---- SQL ----

    private String qualified(JdbcDialect dialect) {
        return schema == null ? dialect.quote(table) : dialect.quote(schema) + "." + dialect.quote(table);
    }

    private String insertIfAbsent(JdbcDialect dialect) {
        String t = qualified(dialect);
        String consumer = dialect.quote("consumer");
        String messageId = dialect.quote("message_id");
        String columns = " (" + consumer + ", " + messageId + ", " + dialect.quote("seen_at") + ")";
        return switch (dialect) {
            case POSTGRESQL -> "INSERT INTO " + t + columns + " VALUES (?, ?, ?) ON CONFLICT (" + consumer + ", "
                    + messageId + ") DO NOTHING";
            case MYSQL -> "INSERT IGNORE INTO " + t + columns + " VALUES (?, ?, ?)";
            case H2 -> "MERGE INTO " + t + " t USING (VALUES (CAST(? AS VARCHAR("
                    + InboxArguments.MAX_CONSUMER_NAME_LENGTH + ")), CAST(? AS UUID), CAST(? AS BIGINT))) s(c, m, a)"
                    + " ON t." + consumer + " = s.c AND t." + messageId + " = s.m WHEN NOT MATCHED THEN INSERT"
                    + columns + " VALUES (s.c, s.m, s.a)";
        };
    }

    private String deleteExpiredSql(JdbcDialect dialect) {
        String t = qualified(dialect);
        String seenAt = dialect.quote("seen_at");
        return switch (dialect) {
            case POSTGRESQL -> "DELETE FROM " + t + " WHERE (" + dialect.quote("consumer") + ", "
                    + dialect.quote("message_id") + ") IN (SELECT " + dialect.quote("consumer") + ", "
                    + dialect.quote("message_id") + " FROM " + t + " WHERE " + seenAt + " < ? LIMIT ?)";
            case MYSQL -> "DELETE FROM " + t + " WHERE " + seenAt + " < ? LIMIT ?";
            case H2 -> "DELETE FROM " + t + " WHERE " + seenAt + " < ? FETCH FIRST ? ROWS ONLY";
        };
    }

    // ---- plumbing ----

    @FunctionalInterface
    private interface Work<T> {
        T run(Connection connection, JdbcDialect dialect) throws SQLException;
    }

    /** Work on one borrowed connection, in auto-commit. */
    private <T> T run(String what, Work<T> work) {
        try (Connection c = dataSource.getConnection()) {
            boolean autoCommit = c.getAutoCommit();
            if (!autoCommit) {
                c.setAutoCommit(true);
            }
            try {
                return work.run(c, configuredDialect != null ? configuredDialect : JdbcDialect.detect(c));
            } finally {
                if (!autoCommit) {
                    c.setAutoCommit(false);
                }
            }
        } catch (SQLException e) {
            String where = "inbox table " + (schema == null ? "" : schema + ".") + table;
            if (JdbcOutboxStore.isMissingSchemaObject(e)) {
                throw new OutboxMisconfigurationException(what + " failed: " + where + " (or its schema or a column)"
                        + " does not exist: " + e.getMessage().strip().replaceAll("\\s*\\R\\s*", " ")
                        + "; create it with JdbcInbox.createSchema() or the DDL of JdbcInbox.createStatements", e);
            }
            throw new JdbcOutboxException(what + " failed (" + where + ")", e);
        }
    }

    private static String requireIdentifier(String what, String name, int maxLength) {
        Objects.requireNonNull(name, what + " must not be null");
        if (name.length() > maxLength || !IDENTIFIER.matcher(name).matches()) {
            throw new IllegalArgumentException(what + " '" + name.replaceAll("\\p{Cntrl}", "?") + "' is not allowed:"
                    + " use 1 to " + maxLength + " ASCII letters, digits and '_', not starting with a digit");
        }
        return name;
    }

    /**
     * Builds a {@link JdbcInbox}. Setters validate at once, naming the bad value; not thread-safe;
     * {@link #build()} may be called more than once.
     */
    public static final class Builder {

        private final DataSource dataSource;
        private String schema;
        private String table = DEFAULT_TABLE;
        private JdbcDialect dialect;
        private Clock clock = Clock.systemUTC();
        private Duration retention = InboxArguments.DEFAULT_RETENTION;
        private int cleanupBatchSize = InboxArguments.DEFAULT_CLEANUP_BATCH_SIZE;

        private Builder(DataSource dataSource) {
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource must not be null");
        }

        /**
         * Sets the table name.
         *
         * @param table 1 to {@value JdbcOutboxTables#MAX_NAME_LENGTH} minus 8 ASCII letters, digits and
         *     {@code _}, not starting with a digit (the index {@code <table>_seen_at} must fit too);
         *     default {@value #DEFAULT_TABLE}
         * @return this builder
         * @throws NullPointerException if it is null
         * @throws IllegalArgumentException naming the value otherwise
         */
        public Builder table(String table) {
            this.table = requireIdentifier("inbox table name", table,
                    JdbcOutboxTables.MAX_NAME_LENGTH - INDEX_SUFFIX.length());
            return this;
        }

        /**
         * Sets the schema (MySQL/MariaDB: the database) holding the table; it must exist.
         *
         * @param schema an identifier like the table's, or null for the connection's current schema
         * @return this builder
         * @throws IllegalArgumentException naming the value if it is not an identifier
         */
        public Builder schema(String schema) {
            this.schema = schema == null ? null
                    : requireIdentifier("inbox schema name", schema, JdbcOutboxTables.MAX_NAME_LENGTH);
            return this;
        }

        /**
         * Fixes the dialect instead of reading it from each connection's metadata.
         *
         * @param dialect the dialect, or null to detect it
         * @return this builder
         */
        public Builder dialect(JdbcDialect dialect) {
            this.dialect = dialect;
            return this;
        }

        /**
         * Sets the clock markers' {@code seen_at} and the cleanup's cutoff come from.
         *
         * @param clock the clock; not null
         * @return this builder
         * @throws NullPointerException if it is null
         */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock must not be null");
            return this;
        }

        /**
         * Sets how long markers are kept at least (I2); size it above the longest time a repeat can
         * take to arrive (docs/inbox.md).
         *
         * @param retention at least 1 s; default 7 days
         * @return this builder
         * @throws NullPointerException if it is null
         * @throws IllegalArgumentException naming the value if it is shorter than 1 s
         */
        public Builder retention(Duration retention) {
            this.retention = InboxArguments.requireRetention(retention);
            return this;
        }

        /**
         * Sets the most markers one cleanup {@code DELETE} removes.
         *
         * @param batchSize 1 to {@value InboxArguments#MAX_CLEANUP_BATCH_SIZE}; default
         *     {@value InboxArguments#DEFAULT_CLEANUP_BATCH_SIZE}
         * @return this builder
         * @throws IllegalArgumentException naming the value if out of range
         */
        public Builder cleanupBatchSize(int batchSize) {
            this.cleanupBatchSize = InboxArguments.requireCleanupBatchSize(batchSize);
            return this;
        }

        /**
         * Builds the inbox; touches no database.
         *
         * @return the inbox
         */
        public JdbcInbox build() {
            return new JdbcInbox(this);
        }
    }
}
