package io.outbox.store.jdbc;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.UUID;

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
        Objects.requireNonNull(tables, "tables must not be null");
        String messages = qualified(tables, tables.messages());
        String leases = qualified(tables, tables.leases());
        String relays = qualified(tables, tables.relays());
        String c = "\n    ";
        if (this == MYSQL) {
            return withDeadLetters(tables, List.of(
                    "CREATE TABLE IF NOT EXISTS " + messages + " (" + c
                            + q("id") + " BIGINT NOT NULL AUTO_INCREMENT," + c
                            + q("bucket") + " INT NOT NULL," + c
                            + q("message_id") + " CHAR(36) CHARACTER SET ascii NOT NULL," + c
                            + q("topic") + " VARCHAR(249) CHARACTER SET ascii NOT NULL," + c
                            + q("record_key") + " LONGBLOB NULL," + c
                            + q("record_value") + " LONGBLOB NULL," + c
                            + q("headers") + " LONGBLOB NOT NULL," + c
                            + q("kafka_partition") + " INT NULL," + c
                            + q("created_at") + " BIGINT NOT NULL," + c
                            + "PRIMARY KEY (" + q("bucket") + ", " + q("id") + ")," + c
                            + "CONSTRAINT " + quote(tables.messagesBucketCheck()) + " CHECK (" + q("bucket")
                            + " >= 0)," + c
                            + "KEY " + quote(tables.messagesIdIndex()) + " (" + q("id") + ")\n"
                            + ") ENGINE=InnoDB",
                    "CREATE TABLE IF NOT EXISTS " + leases + " (" + c
                            + q("bucket") + " INT NOT NULL," + c
                            + q("owner") + " VARBINARY(512) NULL," + c
                            + q("expires_at") + " BIGINT NOT NULL," + c
                            + "PRIMARY KEY (" + q("bucket") + ")\n"
                            + ") ENGINE=InnoDB",
                    "CREATE TABLE IF NOT EXISTS " + relays + " (" + c
                            + q("relay_id") + " VARBINARY(512) NOT NULL," + c
                            + q("last_seen") + " BIGINT NOT NULL," + c
                            + "PRIMARY KEY (" + q("relay_id") + ")\n"
                            + ") ENGINE=InnoDB"));
        }
        String leasesTable = "CREATE TABLE IF NOT EXISTS " + leases + " (" + c
                + q("bucket") + " INTEGER NOT NULL PRIMARY KEY," + c
                + q("owner") + " VARCHAR(128)," + c
                + q("expires_at") + " BIGINT NOT NULL\n)";
        String relaysTable = "CREATE TABLE IF NOT EXISTS " + relays + " (" + c
                + q("relay_id") + " VARCHAR(128) NOT NULL PRIMARY KEY," + c
                + q("last_seen") + " BIGINT NOT NULL\n)";
        // PostgreSQL and H2 differ in the binary type and the keys. PostgreSQL: the primary key is
        // (bucket, id) and there is no index on id alone, since a planner that had one chose it for
        // a bucket's batch once statistics were gathered and read past every other bucket's rows,
        // filtering. H2: an id primary key is the table's own row key, so the (bucket, id) index
        // is the only one besides it.
        boolean postgres = this == POSTGRESQL;
        String binary = postgres ? "BYTEA" : "VARBINARY";
        String messagesTable = "CREATE TABLE IF NOT EXISTS " + messages + " (" + c
                + q("id") + " BIGINT GENERATED BY DEFAULT AS IDENTITY" + (postgres ? "," : " PRIMARY KEY,") + c
                + q("bucket") + " INTEGER NOT NULL," + c
                + q("message_id") + " UUID NOT NULL," + c
                + q("topic") + " VARCHAR(249) NOT NULL," + c
                + q("record_key") + " " + binary + "," + c
                + q("record_value") + " " + binary + "," + c
                + q("headers") + " " + binary + " NOT NULL," + c
                + q("kafka_partition") + " INTEGER," + c
                + q("created_at") + " BIGINT NOT NULL," + c
                + "CONSTRAINT " + quote(tables.messagesBucketCheck()) + " CHECK (" + q("bucket") + " >= 0)"
                + (postgres ? "," + c + "CONSTRAINT " + quote(tables.messagesIndex()) + " PRIMARY KEY ("
                        + q("bucket") + ", " + q("id") + ")" : "")
                + "\n)";
        if (postgres) {
            return withDeadLetters(tables, List.of(messagesTable, leasesTable, relaysTable));
        }
        return withDeadLetters(tables, List.of(messagesTable, "CREATE INDEX IF NOT EXISTS "
                + qualified(tables, tables.messagesIndex()) + " ON " + messages + " (" + q("bucket") + ", " + q("id")
                + ")", leasesTable, relaysTable));
    }

    /** The statements followed by the dead-letter table's (capability C4, {@link JdbcDeadLetters}). */
    private List<String> withDeadLetters(JdbcOutboxTables tables, List<String> statements) {
        List<String> all = new java.util.ArrayList<>(statements);
        all.addAll(JdbcDeadLetters.createStatements(this, tables));
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
        List<String> all = new java.util.ArrayList<>(List.of("DROP TABLE IF EXISTS " + qualified(tables, tables.messages()),
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
