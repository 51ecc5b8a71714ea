package io.outbox.store.jdbc;

import static org.assertj.core.api.Assertions.fail;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * A database the tests run against: a real server found through {@code OUTBOX_TEST_*} variables
 * (which {@code scripts/test.sh} sets after starting the server), defaulting to the local
 * addresses, or embedded H2. An unreachable server fails the test with a message saying how to
 * start it; nothing is skipped.
 *
 * @param name what to call the database in messages
 * @param url the JDBC URL
 * @param user the user, or null
 * @param password the password, or null
 * @param hint how to make the server reachable
 */
record TestDatabase(String name, String url, String user, String password, String hint) {

    private static final ConcurrentMap<String, String> UNREACHABLE = new ConcurrentHashMap<>();
    private static final ConcurrentMap<String, Boolean> CHECKED = new ConcurrentHashMap<>();

    static TestDatabase postgres() {
        return new TestDatabase("PostgreSQL (real server)",
                env("OUTBOX_TEST_POSTGRES_URL", "jdbc:postgresql://127.0.0.1:5432/test"),
                env("OUTBOX_TEST_POSTGRES_USER", "postgres"), System.getenv("OUTBOX_TEST_POSTGRES_PASSWORD"),
                "run the tests with 'bash scripts/test.sh' (it starts PostgreSQL) or point OUTBOX_TEST_POSTGRES_URL"
                        + " and OUTBOX_TEST_POSTGRES_USER at a server");
    }

    static TestDatabase mariadb() {
        return new TestDatabase("MariaDB (real server)",
                env("OUTBOX_TEST_MARIADB_URL", "jdbc:mariadb://127.0.0.1:3306/test"),
                env("OUTBOX_TEST_MARIADB_USER", "root"), System.getenv("OUTBOX_TEST_MARIADB_PASSWORD"),
                "run the tests with 'bash scripts/test.sh' (it starts MariaDB) or point OUTBOX_TEST_MARIADB_URL"
                        + " and OUTBOX_TEST_MARIADB_USER at a server");
    }

    /** One in-memory H2 database per JVM, kept open until the JVM exits; tests use their own tables. */
    static TestDatabase h2() {
        return new TestDatabase("H2 (embedded, in memory)", "jdbc:h2:mem:outbox_test;DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000",
                "sa", "", "H2 runs in this JVM and needs no server");
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    /** Fails the calling test, once per database with the full reason, when the server is down. */
    void requireReachable() {
        CHECKED.computeIfAbsent(url, u -> {
            try (Connection c = connect()) {
                return c.isValid(5);
            } catch (SQLException e) {
                UNREACHABLE.put(u, e.toString());
                return false;
            }
        });
        String reason = UNREACHABLE.get(url);
        if (reason != null) {
            fail("%s is not reachable at %s as user %s (%s). These tests run against real servers and never skip: %s.",
                    name, url, user, reason, hint);
        }
    }

    Connection connect() throws SQLException {
        return DriverManager.getConnection(url, user, password);
    }

    /** A small pool of its own, as a separate relay process would have. */
    HikariDataSource newPool(int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setUsername(user);
        config.setPassword(password);
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(0);
        return new HikariDataSource(config);
    }

    /** Settings for the {@code jdbc} provider over the tables with this prefix. */
    Map<String, String> providerConfig(String prefix) {
        Map<String, String> config = new HashMap<>();
        config.put(JdbcOutboxStoreProvider.URL, url);
        if (user != null) {
            config.put(JdbcOutboxStoreProvider.USER, user);
        }
        if (password != null) {
            config.put(JdbcOutboxStoreProvider.PASSWORD, password);
        }
        config.put(JdbcOutboxStoreProvider.TABLE_PREFIX, prefix);
        config.put(JdbcOutboxStoreProvider.POOL_SIZE, "2");
        return Map.copyOf(config);
    }

    /** A table prefix no other run uses: parallel runs never clash. */
    static String uniquePrefix() {
        return "ob" + UUID.randomUUID().toString().replace("-", "").substring(0, 12) + "_";
    }

    /** Creates the tables the way an application would, with {@link JdbcOutboxStore#createSchema()}. */
    void createTables(String prefix) {
        try (HikariDataSource pool = newPool(1)) {
            JdbcOutboxStore.builder(pool).tablePrefix(prefix).build().createSchema();
        }
    }

    void dropTables(String prefix) throws SQLException {
        Objects.requireNonNull(prefix, "prefix");
        try (Connection c = connect()) {
            JdbcDialect dialect = JdbcDialect.detect(c);
            execute(c, dialect.dropStatements(JdbcOutboxTables.withPrefix(prefix)));
        }
    }

    static void execute(Connection c, Iterable<String> statements) throws SQLException {
        for (String sql : statements) {
            try (Statement s = c.createStatement()) {
                s.execute(sql);
            }
        }
    }
}
