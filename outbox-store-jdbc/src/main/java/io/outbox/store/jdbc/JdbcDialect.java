package io.outbox.store.jdbc;

import io.outbox.OutboxMessage;
import io.outbox.spi.LeaseRequest;
import io.outbox.store.jdbc.JdbcTable.Check;
import io.outbox.store.jdbc.JdbcTable.Column;
import io.outbox.store.jdbc.JdbcTable.Key;
import io.outbox.store.jdbc.JdbcTable.Need;
import io.outbox.store.jdbc.JdbcTable.Type;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * The SQL dialects the JDBC store speaks: the quoting, column types, upsert and insert-if-absent
 * syntax of each database family, and the schema DDL.
 *
 * <p>The DDL each dialect renders for the default tables ships in this module as a resource,
 * {@link #schemaResource()}, for review by a DBA or a migration tool;
 * {@link JdbcOutboxStore#createSchema()} runs exactly {@link #createStatements(JdbcOutboxTables)}
 * (a test checks that the two never drift apart). Times are {@code BIGINT} epoch milliseconds
 * everywhere (rule S11), so creation times from 1970 to far beyond 2038 round-trip exactly (S10)
 * and every backend compares lease expiries the same way.
 *
 * <p>Constants are immutable and thread-safe.
 */
public enum JdbcDialect {

    /** PostgreSQL 10 or newer (identity columns, {@code ON CONFLICT}); tested on 15. */
    POSTGRESQL("postgresql"),

    /**
     * MySQL 8 and MariaDB 10.3 or newer, InnoDB tables; tested on MariaDB 10.11. Relay ids are
     * stored as {@code VARBINARY} so that they compare exactly, whatever the server's collation
     * (no case folding, trailing spaces significant).
     */
    MYSQL("mysql"),

    /** H2 2.x, embedded or server; tested on 2.5.252. */
    H2("h2");

    /** The columns of a message's record, as pending and as dead-lettered: topic to creation time. */
    static final List<Column> RECORD_COLUMNS = List.of(
            Column.notNull("topic", Type.ASCII_TEXT, OutboxMessage.MAX_TOPIC_LENGTH),
            Column.nullable("record_key", Type.BINARY),
            Column.nullable("record_value", Type.BINARY),
            Column.notNull("headers", Type.BINARY),
            Column.nullable("kafka_partition", Type.INTEGER),
            Column.notNull("created_at", Type.BIGINT));

    private final String configName;

    JdbcDialect(String configName) {
        this.configName = configName;
    }

    /**
     * The name the provider's {@code dialect} setting uses.
     *
     * @return {@code postgresql}, {@code mysql} or {@code h2}
     */
    public String configName() {
        return configName;
    }

    /**
     * The dialect of a name as the provider's {@code dialect} setting accepts it.
     *
     * @param name {@code postgresql}, {@code mysql}, {@code mariadb} or {@code h2}, any case;
     *     not null
     * @return the dialect
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException naming the value and the accepted names if it is none of them
     */
    public static JdbcDialect forName(String name) {
        Objects.requireNonNull(name, "dialect name must not be null");
        return switch (name.trim().toLowerCase(Locale.ROOT)) {
            case "postgresql", "postgres" -> POSTGRESQL;
            case "mysql", "mariadb" -> MYSQL;
            case "h2" -> H2;
            default -> throw new IllegalArgumentException("unknown JDBC outbox dialect '" + name
                    + "'; use one of postgresql, mysql, mariadb, h2");
        };
    }

    /**
     * The dialect a JDBC URL names.
     *
     * @param jdbcUrl a JDBC URL such as {@code jdbc:postgresql://host/db}; not null
     * @return the dialect for {@code jdbc:postgresql:}, {@code jdbc:mysql:},
     *     {@code jdbc:mariadb:} or {@code jdbc:h2:} URLs
     * @throws NullPointerException if {@code jdbcUrl} is null
     * @throws IllegalArgumentException if the URL names none of them (set the dialect explicitly
     *     then)
     */
    public static JdbcDialect forUrl(String jdbcUrl) {
        Objects.requireNonNull(jdbcUrl, "jdbcUrl must not be null");
        String url = jdbcUrl.toLowerCase(Locale.ROOT);
        if (url.startsWith("jdbc:postgresql:")) {
            return POSTGRESQL;
        }
        if (url.startsWith("jdbc:mysql:") || url.startsWith("jdbc:mariadb:")) {
            return MYSQL;
        }
        if (url.startsWith("jdbc:h2:")) {
            return H2;
        }
        String shown = jdbcUrl.length() > 30 ? jdbcUrl.substring(0, 30) + "..." : jdbcUrl;
        throw new IllegalArgumentException("cannot tell the SQL dialect from the JDBC URL '" + shown
                + "': expected jdbc:postgresql:, jdbc:mysql:, jdbc:mariadb: or jdbc:h2:; set the dialect explicitly");
    }

    /**
     * The dialect of the database a connection is open to, from
     * {@link java.sql.DatabaseMetaData#getDatabaseProductName()}.
     *
     * @param connection an open connection; not null; not closed or changed
     * @return the dialect
     * @throws SQLException if the metadata cannot be read
     * @throws IllegalArgumentException if the database is none of PostgreSQL, MySQL, MariaDB, H2
     */
    public static JdbcDialect detect(Connection connection) throws SQLException {
        String product = connection.getMetaData().getDatabaseProductName();
        String p = product == null ? "" : product.toLowerCase(Locale.ROOT);
        if (p.contains("postgresql")) {
            return POSTGRESQL;
        }
        if (p.contains("mysql") || p.contains("mariadb")) {
            return MYSQL;
        }
        if (p.equals("h2")) {
            return H2;
        }
        throw new IllegalArgumentException("the JDBC outbox store does not support the database '" + product
                + "'; supported: PostgreSQL, MySQL, MariaDB, H2");
    }

    /**
     * Quotes an identifier for this dialect. The identifier must already be valid (as
     * {@link JdbcOutboxTables} checks); this method does not escape anything.
     *
     * @param identifier a validated identifier; not null
     * @return {@code "identifier"} (backticks for MySQL/MariaDB)
     */
    public String quote(String identifier) {
        char q = this == MYSQL ? '`' : '"';
        return q + identifier + q;
    }

    /**
     * A table's quoted, schema-qualified name.
     *
     * @param tables the table names; not null
     * @param table one of the names in {@code tables}; not null
     * @return {@code "schema"."table"}, or {@code "table"} without a schema
     */
    String qualified(JdbcOutboxTables tables, String table) {
        return tables.schema() == null ? quote(table) : quote(tables.schema()) + "." + quote(table);
    }

    /**
     * The statements that create the tables and the index if they are absent; running them again
     * changes nothing.
     *
     * @param tables the table names; not null
     * @return the statements, in order, without trailing semicolons; immutable
     */
    public List<String> createStatements(JdbcOutboxTables tables) {
        return tables(tables).stream().flatMap(table -> table.createStatements(this).stream()).toList();
    }

    /**
     * The store's tables as its statements need them, in creation order: messages, leases, relays,
     * then the dead letters' two ({@link JdbcDeadLetters}). What {@link #createStatements} creates
     * and {@link JdbcOutboxStore#verifySchema()} checks.
     */
    List<JdbcTable> tables(JdbcOutboxTables tables) {
        Objects.requireNonNull(tables, "tables must not be null");
        String batches = "a bucket's batch is read in (bucket, id) order and deleted by (bucket, id) through it, and "
                + "without it every read scans the table";
        // PostgreSQL: the primary key is (bucket, id) and there is no index on id alone, since a
        // planner that had one chose it for a bucket's batch once statistics were gathered and read
        // past every other bucket's rows, filtering. MySQL/MariaDB: the primary key is (bucket, id)
        // too; AUTO_INCREMENT needs an index leading with id. H2: an id primary key is the table's
        // own row key, so the (bucket, id) index is the only one besides it.
        List<Key> messageKeys = switch (this) {
            case POSTGRESQL -> List.of(Key.primary(tables.messagesIndex(), Need.ORDERED, batches, "bucket", "id"));
            case MYSQL -> List.of(Key.primary(null, Need.ORDERED, batches, "bucket", "id"),
                    Key.index(tables.messagesIdIndex(), Need.NONE, "AUTO_INCREMENT needs it", "id"));
            case H2 -> List.of(Key.primary(null, Need.NONE, "the row key", "id"),
                    Key.index(tables.messagesIndex(), Need.ORDERED, batches, "bucket", "id"));
        };
        List<Column> messageColumns = Stream.concat(Stream.of(Column.notNull("id", Type.IDENTITY),
                Column.notNull("bucket", Type.INTEGER), Column.notNull("message_id", Type.UUID)),
                RECORD_COLUMNS.stream()).toList();
        List<JdbcTable> all = new ArrayList<>(List.of(
                new JdbcTable(tables.schema(), tables.messages(), messageColumns,
                        messageKeys, List.of(new Check(tables.messagesBucketCheck(), "bucket", ">= 0"))),
                new JdbcTable(tables.schema(), tables.leases(), List.of(
                        Column.notNull("bucket", Type.INTEGER),
                        Column.nullable("owner", Type.NAME, LeaseRequest.MAX_RELAY_ID_LENGTH),
                        Column.notNull("expires_at", Type.BIGINT)),
                        List.of(Key.primary(null, Need.UNIQUE, "one lease row per bucket, inserted if absent on it",
                                "bucket")), List.of()),
                new JdbcTable(tables.schema(), tables.relays(), List.of(
                        Column.notNull("relay_id", Type.NAME, LeaseRequest.MAX_RELAY_ID_LENGTH),
                        Column.notNull("last_seen", Type.BIGINT)),
                        List.of(Key.primary(null, Need.UNIQUE, "one heartbeat row per relay, upserted on it",
                                "relay_id")), List.of())));
        all.addAll(JdbcDeadLetters.tables(tables));
        return List.copyOf(all);
    }

    /**
     * The statements that drop the tables (and with them the index), if they exist: for tests
     * and for uninstalling. Every pending message is lost.
     *
     * @param tables the table names; not null
     * @return the statements, without trailing semicolons; immutable
     */
    public List<String> dropStatements(JdbcOutboxTables tables) {
        Objects.requireNonNull(tables, "tables must not be null");
        List<String> all = new ArrayList<>(List.of("DROP TABLE IF EXISTS " + qualified(tables, tables.messages()),
                "DROP TABLE IF EXISTS " + qualified(tables, tables.leases()),
                "DROP TABLE IF EXISTS " + qualified(tables, tables.relays())));
        all.addAll(JdbcDeadLetters.dropStatements(this, tables));
        return List.copyOf(all);
    }

    /**
     * The schema as an SQL script: a comment describing the tables, then
     * {@link #createStatements(JdbcOutboxTables)}, each ended by a semicolon. For the default
     * tables this is exactly the content of {@link #schemaResource()}.
     *
     * @param tables the table names; not null
     * @return the script, UTF-8 text ending with a newline
     */
    public String schemaScript(JdbcOutboxTables tables) {
        StringBuilder sb = new StringBuilder()
                .append("-- Outbox JDBC store schema, ").append(productName()).append(" dialect.\n")
                .append("-- Generated by JdbcDialect.").append(name()).append(".schemaScript(tables);\n")
                .append("-- JdbcOutboxStore.createSchema() runs the same statements. Every statement is idempotent.\n")
                .append("--\n")
                .append("-- ").append(tables.messages()).append(": pending messages, deleted once the broker acknowledged them.\n")
                .append("--   id: enqueue order within a bucket; bucket: ordering bucket (rule E2), never negative (S8);\n")
                .append("--   record_key, record_value: serialized Kafka key and value, NULL and empty differ;\n")
                .append("--   headers: OutboxHeaderCodec version 1; kafka_partition: explicit partition or NULL;\n")
                .append("--   created_at: creation time, epoch milliseconds UTC.\n")
                .append("-- ").append(tables.leases()).append(": one row per bucket; owner is the relay id or NULL,\n")
                .append("--   expires_at the lease expiry in epoch milliseconds from the relays' clocks.\n")
                .append("-- ").append(tables.relays()).append(": one row per relay; last_seen is its last heartbeat, epoch milliseconds.\n")
                .append("-- ").append(JdbcDeadLetters.tableName(tables)).append(": dead letters (capability C4), one row per message id: the\n")
                .append("--   message's columns as they were pending, why the relay gave up on it, and when (epoch milliseconds).\n")
                .append("-- ").append(JdbcDeadLetters.failingTableName(tables)).append(": failing heads (capability C4), one row per bucket: the\n")
                .append("--   message stalling it and its counted failures; a row counts only while that message is the bucket's head.\n");
        for (String statement : createStatements(tables)) {
            sb.append('\n').append(statement).append(";\n");
        }
        return sb.toString();
    }

    /**
     * Where the script for the default tables ({@link JdbcOutboxTables#defaults()}) ships on the
     * class path.
     *
     * @return for example {@code io/outbox/store/jdbc/schema-postgresql.sql}
     */
    public String schemaResource() {
        return "io/outbox/store/jdbc/schema-" + configName + ".sql";
    }

    private String productName() {
        return switch (this) {
            case POSTGRESQL -> "PostgreSQL";
            case MYSQL -> "MySQL/MariaDB";
            case H2 -> "H2";
        };
    }

    private String q(String column) {
        return quote(column);
    }

    // ---- statements whose syntax differs between dialects ----

    /** Upsert of a heartbeat; parameters: relay id, last seen, (MySQL: last seen again). */
    String upsertHeartbeat(String relays) {
        return switch (this) {
            case POSTGRESQL -> "INSERT INTO " + relays + " (" + q("relay_id") + ", " + q("last_seen")
                    + ") VALUES (?, ?) ON CONFLICT (" + q("relay_id") + ") DO UPDATE SET " + q("last_seen")
                    + " = EXCLUDED." + q("last_seen");
            case MYSQL -> "INSERT INTO " + relays + " (" + q("relay_id") + ", " + q("last_seen")
                    + ") VALUES (?, ?) ON DUPLICATE KEY UPDATE " + q("last_seen") + " = ?";
            case H2 -> "MERGE INTO " + relays + " (" + q("relay_id") + ", " + q("last_seen") + ") KEY ("
                    + q("relay_id") + ") VALUES (?, ?)";
        };
    }

    /** Binds the heartbeat upsert's parameters. */
    void bindHeartbeat(PreparedStatement statement, String relayId, long nowMillis) throws SQLException {
        setRelayId(statement, 1, relayId);
        statement.setLong(2, nowMillis);
        if (this == MYSQL) {
            statement.setLong(3, nowMillis);
        }
    }

    /** Inserts a free lease row unless the bucket has one; parameter: bucket. */
    String insertLeaseIfAbsent(String leases) {
        String columns = " (" + q("bucket") + ", " + q("owner") + ", " + q("expires_at") + ")";
        return switch (this) {
            case POSTGRESQL -> "INSERT INTO " + leases + columns + " VALUES (?, NULL, 0) ON CONFLICT ("
                    + q("bucket") + ") DO NOTHING";
            case MYSQL -> "INSERT IGNORE INTO " + leases + columns + " VALUES (?, NULL, 0)";
            case H2 -> "MERGE INTO " + leases + " t USING (VALUES (CAST(? AS INTEGER))) s(" + q("b") + ") ON t."
                    + q("bucket") + " = s." + q("b") + " WHEN NOT MATCHED THEN INSERT" + columns + " VALUES (s."
                    + q("b") + ", NULL, 0)";
        };
    }

    /**
     * Binds a relay id. MySQL/MariaDB keep it as UTF-8 bytes in a VARBINARY column, so it compares
     * exactly whatever the collation.
     */
    void setRelayId(PreparedStatement statement, int index, String relayId) throws SQLException {
        if (this == MYSQL) {
            statement.setBytes(index, relayId.getBytes(StandardCharsets.UTF_8));
        } else {
            statement.setString(index, relayId);
        }
    }

    /** Reads a relay id written by {@link #setRelayId}; null stays null. */
    String getRelayId(ResultSet row, int index) throws SQLException {
        if (this == MYSQL) {
            byte[] bytes = row.getBytes(index);
            return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
        }
        return row.getString(index);
    }

    /** Binds a message id: native UUID on PostgreSQL and H2, text on MySQL/MariaDB. */
    void setMessageId(PreparedStatement statement, int index, UUID messageId) throws SQLException {
        if (this == MYSQL) {
            statement.setString(index, messageId.toString());
        } else {
            statement.setObject(index, messageId);
        }
    }

    /** Reads a message id written by {@link #setMessageId}. */
    UUID getMessageId(ResultSet row, int index) throws SQLException {
        return this == MYSQL ? UUID.fromString(row.getString(index)) : row.getObject(index, UUID.class);
    }
}
