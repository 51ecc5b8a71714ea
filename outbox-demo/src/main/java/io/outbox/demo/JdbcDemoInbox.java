package io.outbox.demo;

import io.outbox.store.jdbc.JdbcDialect;
import io.outbox.store.jdbc.JdbcInbox;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The inbox side of the demo on a relational database: {@link JdbcInbox} on the writers' pool and
 * a {@code <prefix>counters} table; one delivery is one JDBC transaction.
 */
final class JdbcDemoInbox implements DemoInbox {

    private static final int ATTEMPTS = 10;
    /** Serialization failures and deadlocks (PostgreSQL, MySQL/MariaDB): the delivery is retried. */
    private static final Set<String> TRANSIENT_STATES = Set.of("40001", "40P01");

    private final DataSource pool;
    private final JdbcDialect dialect;
    private final JdbcInbox inbox;
    private final String counters;

    JdbcDemoInbox(DataSource pool, JdbcDialect dialect, String prefix) {
        this.pool = pool;
        this.dialect = dialect;
        this.inbox = JdbcInbox.builder(pool).table(prefix + "inbox").dialect(dialect).build();
        this.counters = prefix + "counters";
    }

    @Override
    public void createSchema() throws SQLException {
        inbox.createSchema();
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE " + counters + " (customer_id INT NOT NULL PRIMARY KEY, orders BIGINT NOT NULL)");
            c.commit();
        }
    }

    @Override
    public boolean apply(UUID messageId, Order order) throws SQLException {
        for (int attempt = 1; ; attempt++) {
            try (Connection c = pool.getConnection()) {
                try {
                    boolean first = inbox.firstDelivery(c, DemoInbox.CONSUMER, messageId);
                    if (first) {
                        increment(c, order.customer());
                    }
                    c.commit();
                    return first;
                } catch (SQLException | RuntimeException e) {
                    c.rollback();
                    if (attempt >= ATTEMPTS || !(e instanceof SQLException sql && isTransient(sql))) {
                        throw e;
                    }
                }
            }
        }
    }

    private void increment(Connection c, int customer) throws SQLException {
        try (PreparedStatement update = c.prepareStatement("UPDATE " + counters + " SET orders = orders + 1 WHERE"
                + " customer_id = ?")) {
            update.setInt(1, customer);
            if (update.executeUpdate() == 1) {
                return;
            }
        }
        // The customer's first order: a concurrent first insert makes this fail, and the delivery is retried.
        try (PreparedStatement insert = c.prepareStatement("INSERT INTO " + counters + " (customer_id, orders)"
                + " VALUES (?, 1)")) {
            insert.setInt(1, customer);
            insert.executeUpdate();
        }
    }

    private static boolean isTransient(SQLException e) {
        return TRANSIENT_STATES.contains(e.getSQLState()) || "23505".equals(e.getSQLState())
                || e.getErrorCode() == 1213 || e.getErrorCode() == 1062;
    }

    @Override
    public Map<Integer, Long> counters() throws SQLException {
        Map<Integer, Long> result = new HashMap<>();
        try (Connection c = pool.getConnection(); Statement s = c.createStatement();
             ResultSet rows = s.executeQuery("SELECT customer_id, orders FROM " + counters)) {
            while (rows.next()) {
                result.put(rows.getInt(1), rows.getLong(2));
            }
            c.commit();
        }
        return result;
    }

    @Override
    public List<String> objectNames() {
        return List.of(inbox.table(), counters);
    }

    @Override
    public void dropSchema() throws SQLException {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.execute(inbox.dropStatement(dialect));
            s.execute("DROP TABLE IF EXISTS " + counters);
            c.commit();
        }
    }
}
