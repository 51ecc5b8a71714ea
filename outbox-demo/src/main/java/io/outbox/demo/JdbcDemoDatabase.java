package io.outbox.demo;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.outbox.OutboxCommitNotifier;
import io.outbox.OutboxMessage;
import io.outbox.relay.RelayOptions;
import io.outbox.spi.CloseableOutboxStore;
import io.outbox.spi.OutboxStores;
import io.outbox.store.jdbc.JdbcDialect;
import io.outbox.store.jdbc.JdbcOutboxStore;
import io.outbox.store.jdbc.JdbcOutboxStoreProvider;
import io.outbox.store.jdbc.JdbcOutboxTables;
import io.outbox.store.jdbc.JdbcOutboxTransactions;
import io.outbox.store.jdbc.JdbcOutboxWriter;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The demo on a relational database (PostgreSQL, MySQL/MariaDB, H2): an {@code orders} table
 * and the JDBC store's three tables, all named with the run's prefix. An order is one JDBC
 * transaction: the {@code INSERT} into {@code orders}, then {@link JdbcOutboxWriter#enqueue} on
 * the same connection, then {@code commit}.
 */
final class JdbcDemoDatabase implements DemoDatabase {

    private final String url;
    private final String user;
    private final String password;
    private final boolean embedded;
    private final String prefix;
    private final String ordersTable;
    private final JdbcDialect dialect;
    private final HikariDataSource pool;
    private final JdbcOutboxStore store;
    private final JdbcOutboxWriter writer;
    private final String insertOrder;

    /**
     * @param url the JDBC URL
     * @param user the user, or null
     * @param password the password, or null
     * @param embedded whether the URL is the demo's own in-memory H2 database (shut down on close)
     * @param prefix the run's table prefix
     * @param connections the writers' pool size
     */
    JdbcDemoDatabase(String url, String user, String password, boolean embedded, String prefix, int connections) {
        this.url = url;
        this.user = user;
        this.password = password;
        this.embedded = embedded;
        this.prefix = prefix;
        this.ordersTable = prefix + "orders";
        this.dialect = JdbcDialect.forUrl(url);
        HikariConfig config = new HikariConfig();
        config.setPoolName("demo-writers");
        config.setJdbcUrl(url);
        config.setUsername(user);
        config.setPassword(password);
        config.setMaximumPoolSize(connections);
        config.setConnectionTimeout(10_000);
        config.setAutoCommit(false); // every order is an explicit transaction
        config.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
        this.pool = new HikariDataSource(config);
        this.store = JdbcOutboxStore.builder(pool).tablePrefix(prefix).dialect(dialect).build();
        this.writer = store.writer();
        this.insertOrder = "INSERT INTO " + ordersTable
                + " (customer_id, order_seq, amount_cents, placed_at_micros, message_id) VALUES (?, ?, ?, ?, ?)";
    }

    @Override
    public String describe() {
        try (Connection c = pool.getConnection()) {
            DatabaseMetaData meta = c.getMetaData();
            String where = embedded ? "embedded, in memory" : StoreOptions.redactor(password, url).redact(meta.getURL());
            return "jdbc: " + meta.getDatabaseProductName() + " " + meta.getDatabaseProductVersion() + " (" + where + ")";
        } catch (SQLException e) {
            return "jdbc: " + dialect.configName() + " (" + StoreOptions.redactor(password, url).redact(e.getMessage())
                    + ")";
        }
    }

    @Override
    public List<String> objectNames() {
        JdbcOutboxTables tables = store.tables();
        return List.of(ordersTable, tables.messages(), tables.leases(), tables.relays());
    }

    @Override
    public void createSchema() throws SQLException {
        store.createSchema();
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE " + ordersTable + " (customer_id INT NOT NULL, order_seq INT NOT NULL,"
                    + " amount_cents BIGINT NOT NULL, placed_at_micros BIGINT NOT NULL, message_id CHAR(36) NOT NULL,"
                    + " PRIMARY KEY (customer_id, order_seq))");
            c.commit();
        }
    }

    @Override
    public void placeOrder(Order order, OutboxMessage message) throws SQLException {
        try (Connection c = pool.getConnection()) {
            try {
                insertOrder(c, order, message);
                writer.enqueue(c, message); // after the business row, in the same transaction (E4)
                c.commit();
            } catch (SQLException | RuntimeException e) {
                rollback(c, e);
                throw e;
            }
        }
    }

    /**
     * The order in one transaction through {@link JdbcOutboxTransactions}: commit, then notify; a
     * notifier on PostgreSQL {@code LISTEN}/{@code NOTIFY} issues its {@code NOTIFY} inside the
     * transaction (N5).
     */
    @Override
    public void placeOrder(Order order, OutboxMessage message, OutboxCommitNotifier notifier) throws Exception {
        try (Connection c = pool.getConnection()) {
            JdbcOutboxTransactions.of(writer, notifier).run(c, outbox -> {
                insertOrder(c, order, message);
                outbox.enqueue(message);
                return null;
            });
        }
    }

    private void insertOrder(Connection c, Order order, OutboxMessage message) throws SQLException {
        try (PreparedStatement insert = c.prepareStatement(insertOrder)) {
            insert.setInt(1, order.customer());
            insert.setInt(2, order.seq());
            insert.setLong(3, order.amountCents());
            insert.setLong(4, order.placedAtMicros());
            insert.setString(5, message.messageId().toString());
            insert.executeUpdate();
        }
    }

    @Override
    public void enqueue(List<OutboxMessage> messages) throws SQLException {
        try (Connection c = pool.getConnection()) {
            try {
                writer.enqueue(c, messages);
                c.commit();
            } catch (SQLException | RuntimeException e) {
                rollback(c, e);
                throw e;
            }
        }
    }

    private static void rollback(Connection c, Exception cause) {
        try {
            c.rollback();
        } catch (SQLException e) {
            cause.addSuppressed(e);
        }
    }

    @Override
    public int maxMessagesPerTransaction() {
        return 500;
    }

    @Override
    public CloseableOutboxStore openRelayStore() {
        return openRelayStore(RelayOptions.DEFAULT_STORE_CONCURRENCY);
    }

    /** A pool of {@code storeConcurrency} connections plus one for lease calls and one for renewal. */
    @Override
    public CloseableOutboxStore openRelayStore(int storeConcurrency) {
        Map<String, String> config = new HashMap<>();
        config.put(JdbcOutboxStoreProvider.POOL_SIZE, Integer.toString(storeConcurrency + 2));
        config.put(JdbcOutboxStoreProvider.URL, url);
        if (user != null) {
            config.put(JdbcOutboxStoreProvider.USER, user);
        }
        if (password != null) {
            config.put(JdbcOutboxStoreProvider.PASSWORD, password);
        }
        config.put(JdbcOutboxStoreProvider.TABLE_PREFIX, prefix);
        return OutboxStores.open(JdbcOutboxStoreProvider.NAME, config);
    }

    /**
     * A relay's store on a pool configured as {@link JdbcOutboxStoreProvider} configures its own
     * (auto-commit, {@code READ COMMITTED}, {@code storeConcurrency + 2} connections), whose
     * physical connections {@code meter} counts.
     */
    @Override
    public CloseableOutboxStore openMeteredRelayStore(int storeConcurrency, JdbcMeter meter) {
        HikariConfig config = new HikariConfig();
        config.setPoolName("bench-metered-relay");
        config.setDataSource(meter.dataSource(url, user, password));
        config.setMaximumPoolSize(storeConcurrency + 2);
        config.setAutoCommit(true);
        config.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
        HikariDataSource dataSource = new HikariDataSource(config);
        JdbcOutboxStore relayStore = JdbcOutboxStore.builder(dataSource).tablePrefix(prefix).dialect(dialect)
                .closeDataSource(true).build();
        try {
            relayStore.verifySchema();
        } catch (RuntimeException e) {
            dataSource.close();
            throw e;
        }
        return relayStore;
    }

    @Override
    public List<String> tableNames() {
        JdbcOutboxTables tables = store.tables();
        return List.of(tables.messages(), tables.leases(), tables.relays());
    }

    @Override
    public DemoInbox openInbox() {
        return new JdbcDemoInbox(pool, dialect, prefix);
    }

    @Override
    public void dropSchema() throws SQLException {
        List<String> drops = new ArrayList<>(dialect.dropStatements(store.tables()));
        drops.add("DROP TABLE IF EXISTS " + ordersTable);
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            for (String drop : drops) {
                s.execute(drop);
            }
            c.commit();
        }
    }

    @Override
    public void close() {
        try {
            if (embedded) {
                try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
                    s.execute("SHUTDOWN"); // frees the in-memory database, which DB_CLOSE_DELAY=-1 keeps
                }
            }
        } catch (SQLException e) {
            // already gone
        } finally {
            pool.close();
        }
    }
}
