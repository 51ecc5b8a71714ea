package io.outbox.store.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import io.outbox.InboxRetention;
import io.outbox.tck.InboxTck;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;

/**
 * The inbox kit on one database: a unique inbox table made by {@link JdbcInbox#createSchema()},
 * an effects table for the business writes, and one small HikariCP pool per fixture, as separate
 * consumer processes would have.
 */
abstract class JdbcInboxTckBase extends InboxTck {

    private static final int ATTEMPTS = 10;

    private String table;
    private String effects;

    /** The database this run uses. */
    abstract TestDatabase database();

    @Override
    protected void createStorage() throws SQLException {
        database().requireReachable();
        String prefix = TestDatabase.uniquePrefix();
        table = prefix + "inbox";
        effects = prefix + "effects";
        try (HikariDataSource pool = database().newPool(1)) {
            JdbcInbox.builder(pool).table(table).build().createSchema();
        }
        try (Connection c = database().connect(); Statement s = c.createStatement()) {
            JdbcDialect d = JdbcDialect.detect(c);
            s.execute("CREATE TABLE " + d.quote(effects) + " (" + d.quote("consumer_hex") + " VARCHAR(400) NOT NULL, "
                    + d.quote("message_id") + " CHAR(36) NOT NULL)");
        }
    }

    @Override
    protected InboxFixture open(Clock clock, Duration retention, int cleanupBatchSize) {
        HikariDataSource pool = database().newPool(2);
        JdbcInbox inbox = JdbcInbox.builder(pool).table(table).clock(clock).retention(retention)
                .cleanupBatchSize(cleanupBatchSize).build();
        return new Fixture(pool, inbox);
    }

    @Override
    protected void dropStorage() throws SQLException {
        if (table == null) {
            return;
        }
        try (Connection c = database().connect(); Statement s = c.createStatement()) {
            JdbcDialect d = JdbcDialect.detect(c);
            s.execute("DROP TABLE IF EXISTS " + d.quote(table));
            s.execute("DROP TABLE IF EXISTS " + d.quote(effects));
        }
    }

    private final class Fixture implements InboxFixture {

        private final HikariDataSource pool;
        private final JdbcInbox inbox;

        Fixture(HikariDataSource pool, JdbcInbox inbox) {
            this.pool = pool;
            this.inbox = inbox;
        }

        @Override
        public boolean deliver(String consumer, UUID messageId, Ending ending, Duration holdOpen) throws Exception {
            for (int attempt = 1; ; attempt++) {
                try (Connection c = pool.getConnection()) {
                    c.setAutoCommit(false);
                    try {
                        boolean first = inbox.firstDelivery(c, consumer, messageId);
                        if (first) {
                            JdbcDialect d = JdbcDialect.detect(c);
                            try (PreparedStatement insert = c.prepareStatement("INSERT INTO " + d.quote(effects)
                                    + " (" + d.quote("consumer_hex") + ", " + d.quote("message_id")
                                    + ") VALUES (?, ?)")) {
                                insert.setString(1, hex(consumer));
                                insert.setString(2, messageId.toString());
                                insert.executeUpdate();
                            }
                        }
                        Thread.sleep(holdOpen.toMillis());
                        if (ending == Ending.COMMIT) {
                            c.commit();
                        } else {
                            c.rollback();
                        }
                        return first;
                    } catch (SQLException e) {
                        c.rollback();
                        if (attempt >= ATTEMPTS || !isTransient(e)) {
                            throw e;
                        }
                    }
                }
            }
        }

        @Override
        public boolean hasMarker(String consumer, UUID messageId) throws SQLException {
            try (Connection c = pool.getConnection()) {
                JdbcDialect dialect = JdbcDialect.detect(c);
                try (PreparedStatement select = c.prepareStatement("SELECT COUNT(*) FROM " + dialect.quote(table)
                        + " WHERE " + dialect.quote("consumer") + " = ? AND " + dialect.quote("message_id") + " = ?")) {
                    if (dialect == JdbcDialect.MYSQL) {
                        select.setBytes(1, consumer.getBytes(StandardCharsets.UTF_8));
                    } else {
                        select.setString(1, consumer);
                    }
                    dialect.setMessageId(select, 2, messageId);
                    return count(select) > 0;
                }
            }
        }

        @Override
        public long effects(String consumer, UUID messageId) throws SQLException {
            try (Connection c = pool.getConnection()) {
                JdbcDialect d = JdbcDialect.detect(c);
                try (PreparedStatement select = c.prepareStatement("SELECT COUNT(*) FROM " + d.quote(effects)
                        + " WHERE " + d.quote("consumer_hex") + " = ? AND " + d.quote("message_id") + " = ?")) {
                    select.setString(1, hex(consumer));
                    select.setString(2, messageId.toString());
                    return count(select);
                }
            }
        }

        @Override
        public InboxRetention retention() {
            return inbox;
        }

        @Override
        public void close() {
            pool.close();
        }
    }

    private static long count(PreparedStatement select) throws SQLException {
        try (ResultSet row = select.executeQuery()) {
            row.next();
            return row.getLong(1);
        }
    }

    private static String hex(String consumer) {
        return HexFormat.of().formatHex(consumer.getBytes(StandardCharsets.UTF_8));
    }

    /** Serialization failures, deadlocks and lock wait timeouts: retry the whole delivery. */
    static boolean isTransient(SQLException e) {
        String state = e.getSQLState();
        return List.of("40001", "40P01").contains(state) || e.getErrorCode() == 1213 || e.getErrorCode() == 1205;
    }
}
