package io.outbox.store.jdbc;

import com.google.auto.service.AutoService;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.CloseableOutboxStore;
import io.outbox.spi.OutboxStoreProvider;
import io.outbox.spi.support.OutboxStoreConfig;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.DriverPropertyInfo;
import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.types.Password;

/**
 * Provider of {@link JdbcOutboxStore} under the name {@value #NAME}, for
 * {@code OutboxStores.open("jdbc", settings)}. The store it creates runs on the system UTC clock
 * and owns a HikariCP pool (auto-commit, {@code READ COMMITTED}), which
 * {@link JdbcOutboxStore#close()} closes. A JDBC driver on the class path must accept and parse the
 * URL, which is checked, without connecting, with the other settings: a URL that can never work
 * (no driver takes its scheme, or the driver cannot parse it, such as
 * {@code jdbc:mariadb://root:pw@host:3306/db}), or with a property value the driver does not list
 * for it ({@code sslmode=bogus}), or naming a class the driver cannot load ({@code socketFactory}),
 * or an H2 file path relative to the working directory, is an
 * {@link OutboxMisconfigurationException}, while a database that refuses connections, times out or
 * rejects the login is an ordinary exception the relay retries. A first connection that fails for
 * a reason no retry heals (a setting the driver refuses only when it connects, such as an H2
 * setting it does not know) is an {@link OutboxMisconfigurationException} too (R6). Settings:
 *
 * <table>
 *   <caption>Settings</caption>
 *   <tr><th>key</th><th>type</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>{@value #URL}</td><td>string</td><td>required</td><td>JDBC URL</td></tr>
 *   <tr><td>{@value #USER}</td><td>string</td><td>none</td><td>database user</td></tr>
 *   <tr><td>{@value #PASSWORD}</td><td>password</td><td>none</td><td>database password, never logged</td></tr>
 *   <tr><td>{@value #DIALECT}</td><td>string</td><td>from the URL</td><td>postgresql, mysql, mariadb or h2</td></tr>
 *   <tr><td>{@value #SCHEMA}</td><td>string</td><td>the connection's</td><td>schema (MySQL: database) of the tables</td></tr>
 *   <tr><td>{@value #TABLE_PREFIX}</td><td>string</td><td>{@value JdbcOutboxTables#DEFAULT_PREFIX}</td><td>prefix of the three table names;
 *       not empty (tables named {@code messages}, {@code leases}, {@code relays} would sit among the
 *       application's own; in code, {@link JdbcOutboxTables#withPrefix(String)} still takes "")</td></tr>
 *   <tr><td>{@value #POOL_SIZE}</td><td>int</td><td>{@value #DEFAULT_POOL_SIZE}</td><td>pool connections, 1 to
 *       100; a relay uses up to its {@code store.concurrency} plus two at once</td></tr>
 *   <tr><td>{@value #CREATE_SCHEMA}</td><td>boolean</td><td>false</td><td>create absent tables at start-up;
 *       when false, check at start-up that they exist with the columns, keys and indexes the store
 *       needs ({@link JdbcOutboxStore#verifySchema()})</td></tr>
 *   <tr><td>{@value #MAX_PAYLOAD_BYTES}</td><td>long</td><td>1000000</td><td>largest payload accepted, bytes</td></tr>
 * </table>
 *
 * <p>Unknown keys and malformed values are refused with
 * {@link OutboxMisconfigurationException} naming the key. Thread-safe.
 */
@AutoService(OutboxStoreProvider.class)
public final class JdbcOutboxStoreProvider implements OutboxStoreProvider {

    /** The provider name. */
    public static final String NAME = "jdbc";

    /** Setting: the JDBC URL, for example {@code jdbc:postgresql://db:5432/app}. Required. */
    public static final String URL = "url";

    /** Setting: the database user. */
    public static final String USER = "user";

    /** Setting: the database password (type password: never logged). */
    public static final String PASSWORD = "password";

    /** Setting: the SQL dialect; by default read from the URL. */
    public static final String DIALECT = "dialect";

    /** Setting: the schema (MySQL/MariaDB: database) holding the tables; by default the connection's. */
    public static final String SCHEMA = "schema";

    /** Setting: the prefix of the three table names. */
    public static final String TABLE_PREFIX = "table.prefix";

    /** Setting: the number of pooled connections. */
    public static final String POOL_SIZE = "pool.size";

    /**
     * Default of {@value #POOL_SIZE}: 6, a relay's default {@code store.concurrency} (4) plus one
     * connection for its lease calls and one for lease renewal.
     */
    public static final int DEFAULT_POOL_SIZE = 6;

    /** Setting: whether to create absent tables when the store is created. */
    public static final String CREATE_SCHEMA = "create.schema";

    /** Setting: the largest payload accepted, in bytes. */
    public static final String MAX_PAYLOAD_BYTES = "max.payload.bytes";

    private static final AtomicInteger POOLS = new AtomicInteger();

    private static final ConfigDef CONFIG = new ConfigDef()
            .define(URL, ConfigDef.Type.STRING, ConfigDef.NO_DEFAULT_VALUE, new DriverAcceptsUrl(),
                    ConfigDef.Importance.HIGH, "The JDBC URL of the database, for example "
                            + "jdbc:postgresql://db:5432/app, jdbc:mariadb://db:3306/app or jdbc:h2:./outbox; a JDBC "
                            + "driver on the class path must accept it. For MySQL use jdbc:mariadb: (MariaDB "
                            + "Connector/J talks to MySQL), or add MySQL Connector/J to the class path.")
            .define(USER, ConfigDef.Type.STRING, null, ConfigDef.Importance.HIGH, "The database user.")
            .define(PASSWORD, ConfigDef.Type.PASSWORD, null, ConfigDef.Importance.HIGH,
                    "The database password; never logged.")
            .define(DIALECT, ConfigDef.Type.STRING, "",
                    ConfigDef.ValidString.in("", "postgresql", "mysql", "mariadb", "h2"), ConfigDef.Importance.LOW,
                    "The SQL dialect: postgresql, mysql, mariadb (same as mysql) or h2; empty to read it from the URL.")
            .define(SCHEMA, ConfigDef.Type.STRING, "", JdbcOutboxStoreProvider::validateSchema,
                    ConfigDef.Importance.LOW, "The schema (on MySQL/MariaDB: the database) holding the tables, "
                            + "an identifier; it must exist. Empty for the connection's current schema.")
            .define(TABLE_PREFIX, ConfigDef.Type.STRING, JdbcOutboxTables.DEFAULT_PREFIX,
                    JdbcOutboxStoreProvider::validatePrefix, ConfigDef.Importance.MEDIUM,
                    "The prefix of the table names <prefix>messages, <prefix>leases and <prefix>relays: "
                            + "ASCII letters, digits and '_', not starting with a digit; not empty.")
            .define(POOL_SIZE, ConfigDef.Type.INT, DEFAULT_POOL_SIZE, ConfigDef.Range.between(1, 100),
                    ConfigDef.Importance.LOW, "The number of connections in the store's pool. A relay makes up "
                            + "to its store.concurrency (default 4) store calls at once, plus lease calls and "
                            + "renewal: give it at least store.concurrency + 2, or its store threads wait for "
                            + "connections.")
            .define(CREATE_SCHEMA, ConfigDef.Type.BOOLEAN, false, ConfigDef.Importance.LOW,
                    "Whether to create the tables and index, if absent, when the store is created. When false, "
                            + "the store checks that the tables exist with the columns, keys and indexes its "
                            + "statements need, and fails naming what is missing.")
            .define(MAX_PAYLOAD_BYTES, ConfigDef.Type.LONG, JdbcOutboxStore.DEFAULT_MAX_PAYLOAD_BYTES,
                    ConfigDef.Range.atLeast(0), ConfigDef.Importance.LOW,
                    "The largest payload (key + value + encoded headers) the store's writer accepts, in bytes. "
                            + "Raise it only together with Kafka's max.request.size and the broker's "
                            + "message.max.bytes; on MySQL/MariaDB keep it at least 64 KiB below max_allowed_packet.");

    /** Creates the provider; called by {@link java.util.ServiceLoader}. */
    public JdbcOutboxStoreProvider() {
    }

    @Override
    public String name() {
        return NAME;
    }

    /** {@inheritDoc} */
    @Override
    public Set<String> schemaChangingSettings() {
        return Set.of(CREATE_SCHEMA);
    }

    @Override
    public ConfigDef configDef() {
        return CONFIG;
    }

    /**
     * Validates the settings as {@link #create(Map)} does, without connecting: each setting
     * (the URL parsed by its driver), and the dialect told from the URL.
     *
     * @param config the settings; not null
     * @throws OutboxMisconfigurationException naming the bad setting, never a secret's value
     */
    @Override
    public void validate(Map<String, String> config) {
        settings(config);
    }

    /** The parsed settings with the dialect and tables they name. */
    private record Settings(OutboxStoreConfig parsed, JdbcDialect dialect, JdbcOutboxTables tables) {
    }

    private static Settings settings(Map<String, String> config) {
        OutboxStoreConfig parsed = OutboxStoreConfig.parse(NAME, CONFIG, config);
        String url = parsed.getString(URL);
        JdbcDialect dialect;
        try {
            String named = parsed.getString(DIALECT);
            dialect = named.isEmpty() ? JdbcDialect.forUrl(url) : JdbcDialect.forName(named);
        } catch (IllegalArgumentException e) {
            throw new OutboxMisconfigurationException("invalid setting for the '" + NAME + "' outbox store: " + DIALECT
                    + ": " + e.getMessage(), e);
        }
        String schema = parsed.getString(SCHEMA);
        JdbcOutboxTables tables = JdbcOutboxTables.withPrefix(parsed.getString(TABLE_PREFIX))
                .inSchema(schema.isEmpty() ? null : schema);
        return new Settings(parsed, dialect, tables);
    }

    /**
     * Creates a store with its own connection pool, owned by the store.
     *
     * @param config the settings listed in the class documentation; not null
     * @return a new store; close it to close its pool
     * @throws OutboxMisconfigurationException if a setting is unknown, missing or malformed, no
     *     JDBC driver on the class path accepts the URL, the dialect cannot be told from the URL, or, without {@value #CREATE_SCHEMA}, a table, one
     *     of its columns, or a key or index the statements need is absent
     *     ({@link JdbcOutboxStore#verifySchema()}), naming it
     * @throws OutboxMisconfigurationException also if the database the URL names does not exist, or
     *     the first connection fails for a reason no retry heals
     * @throws RuntimeException if the pool cannot connect or, with {@value #CREATE_SCHEMA}, the
     *     tables cannot be created
     */
    @Override
    public CloseableOutboxStore create(Map<String, String> config) {
        Settings settings = settings(config);
        OutboxStoreConfig parsed = settings.parsed();
        String url = parsed.getString(URL);
        JdbcDialect dialect = settings.dialect();
        JdbcOutboxTables tables = settings.tables();

        HikariConfig pool = new HikariConfig();
        pool.setPoolName("outbox-jdbc-" + POOLS.incrementAndGet());
        pool.setJdbcUrl(url);
        pool.setUsername(parsed.getString(USER));
        Password password = parsed.getPassword(PASSWORD);
        if (password != null) {
            pool.setPassword(password.value());
        }
        pool.setMaximumPoolSize(parsed.getInt(POOL_SIZE));
        pool.setAutoCommit(true);
        pool.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
        HikariDataSource dataSource;
        try {
            dataSource = new HikariDataSource(pool);
        } catch (RuntimeException e) {
            throw missingDatabase(e, url);
        }
        JdbcOutboxStore store = JdbcOutboxStore.builder(dataSource)
                .tables(tables)
                .dialect(dialect)
                .maxPayloadBytes(parsed.getLong(MAX_PAYLOAD_BYTES))
                .closeDataSource(true)
                .build();
        try {
            if (parsed.getBoolean(CREATE_SCHEMA)) {
                store.createSchema();
            } else {
                store.verifySchema();
            }
        } catch (RuntimeException e) {
            dataSource.close();
            throw e;
        }
        return store;
    }

    /**
     * Validates {@value #URL} without connecting: not empty, and accepted by a JDBC driver on the
     * class path ({@link DriverManager#getDriver(String)}), so that a URL no driver takes fails
     * at start-up and in a configuration check instead of on every connection attempt. Its
     * messages name the URL's scheme, never the URL, which may hold a password.
     */
    private static final class DriverAcceptsUrl implements ConfigDef.Validator {

        private static final ConfigDef.Validator NON_EMPTY = new ConfigDef.NonEmptyString();

        /** The schemes of the drivers the relay jar bundles, with their driver classes. */
        private static final Map<String, String> KNOWN_DRIVERS = Map.of(
                "jdbc:postgresql:", "org.postgresql.Driver",
                "jdbc:mariadb:", "org.mariadb.jdbc.Driver",
                "jdbc:h2:", "org.h2.Driver");

        @Override
        public void ensureValid(String name, Object value) {
            NON_EMPTY.ensureValid(name, value);
            String url = (String) value;
            Driver driver;
            try {
                driver = DriverManager.getDriver(url);
            } catch (SQLException e) {
                if (knownDriverLoaded(url)) {
                    // pgjdbc, MariaDB Connector/J and H2 refuse in acceptsURL a URL of their own scheme
                    // they cannot parse (a port that is not a number, say): the driver is there.
                    throw cannotParse(name, url);
                }
                boolean mysql = url.regionMatches(true, 0, "jdbc:mysql:", 0, 11);
                throw new ConfigException("Invalid value for configuration " + name + ": no JDBC driver on the "
                        + "class path accepts " + scheme(url) + (mysql ? "" : "; add the database's JDBC driver to "
                        + "the class path") + "; for MySQL use jdbc:mariadb: (MariaDB Connector/J, bundled in the "
                        + "relay jar, talks to MySQL) or add MySQL Connector/J to the class path");
            }
            DriverPropertyInfo[] properties;
            try {
                // Parses the URL as a connection would, without connecting: a URL the driver takes by
                // its prefix but can never parse is a misconfiguration, not a database that is down.
                properties = driver.getPropertyInfo(url, new Properties());
            } catch (SQLException | RuntimeException e) {
                throw cannotParse(name, url);
            }
            for (DriverPropertyInfo property : properties == null ? new DriverPropertyInfo[0]
                    : properties) {
                if (!isChoice(property)) {
                    // pgjdbc refuses such a value (sslmode=bogus) on every connection attempt, before it
                    // opens a socket: it can never work.
                    throw new ConfigException("Invalid value for configuration " + name + ": the JDBC driver "
                            + "accepts only " + String.join(", ", property.choices) + " for its property '"
                            + property.name + "' (value hidden)");
                }
                if (!classPresent(property, driver)) {
                    throw new ConfigException("Invalid value for configuration " + name + ": the class the JDBC "
                            + "driver's property '" + property.name + "' names is not on the class path (value "
                            + "hidden)");
                }
            }
            refuseRelativeH2File(name, url);
        }

        /** The drivers' properties that name a class to load (pgjdbc's, MariaDB Connector/J's). */
        private static final Set<String> CLASS_PROPERTIES = Set.of("socketfactory", "sslfactory",
                "sslhostnameverifier", "sslpasswordcallback", "authenticationpluginclassname");

        /** Whether a property that names a class names one the driver can load; other properties pass. */
        private static boolean classPresent(DriverPropertyInfo property, Driver driver) {
            if (property == null || property.name == null || property.value == null || property.value.isBlank()
                    || !CLASS_PROPERTIES.contains(property.name.toLowerCase(Locale.ROOT))
                    || !property.value.matches("[\\p{L}_$][\\p{L}\\p{N}_$]*(\\.[\\p{L}_$][\\p{L}\\p{N}_$]*)+")) {
                return true; // not a class name at all (a policy word such as sslhostnameverifier's): the driver decides
            }
            try {
                Class.forName(property.value, false, driver.getClass().getClassLoader());
                return true;
            } catch (ClassNotFoundException | LinkageError e) {
                return false;
            }
        }

        /**
         * H2 refuses, on every connection, a file path implicitly relative to the working directory
         * (its error 90011): asked of H2's own URL parser, without opening the database. Nothing is
         * checked when H2 is not on the class path or its parser is not the one expected.
         */
        private static void refuseRelativeH2File(String name, String url) {
            if (!url.regionMatches(true, 0, "jdbc:h2:", 0, 8)) {
                return;
            }
            Object info;
            try {
                Class<?> type = Class.forName("org.h2.engine.ConnectionInfo");
                info = type.getConstructor(String.class, Properties.class, String.class, Object.class)
                        .newInstance(url, new Properties(), null, null);
                if (!(Boolean) type.getMethod("isRemote").invoke(info)) {
                    String baseDir = System.getProperty("h2.baseDir"); // as H2's own connection applies it
                    if (baseDir != null) {
                        type.getMethod("setBaseDir", String.class).invoke(info, baseDir);
                    }
                    type.getMethod("getName").invoke(info);
                }
            } catch (InvocationTargetException e) {
                String message = String.valueOf(e.getCause() == null ? null : e.getCause().getMessage());
                if (message.contains("[90011-")) {
                    throw new ConfigException("Invalid value for configuration " + name + ": H2 refuses a file path "
                            + "that is implicitly relative to the working directory (its error 90011); use an "
                            + "absolute path, ~/name or ./name (value hidden)");
                }
            } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
                // No H2, or another one: the first connection tells.
            }
        }

        /**
         * Whether a property the URL sets is one of the values the driver lists for it (compared
         * ignoring case); properties without a list of text values are not checked.
         */
        private static boolean isChoice(DriverPropertyInfo property) {
            if (property == null || property.value == null || property.choices == null || property.choices.length == 0
                    || Arrays.stream(property.choices).allMatch(c -> c != null && c.matches("[0-9.]+"))) {
                return true;
            }
            return Arrays.stream(property.choices).anyMatch(property.value::equalsIgnoreCase);
        }

        /** Neither the URL nor the driver's message, which can quote it (a password, say), is shown. */
        private static ConfigException cannotParse(String name, String url) {
            return new ConfigException("Invalid value for configuration " + name + ": the JDBC driver cannot "
                    + "parse " + scheme(url) + " (value hidden; check host, port and database, and give "
                    + "credentials in " + USER + " and " + PASSWORD + ", not in the URL)");
        }

        /** Whether the URL's scheme is one of a bundled driver's and that driver is registered. */
        private static boolean knownDriverLoaded(String url) {
            String driverClass = KNOWN_DRIVERS.entrySet().stream()
                    .filter(known -> url.regionMatches(true, 0, known.getKey(), 0, known.getKey().length()))
                    .map(Map.Entry::getValue).findFirst().orElse(null);
            return driverClass != null && DriverManager.drivers()
                    .anyMatch(driver -> driver.getClass().getName().equals(driverClass));
        }

        /** What the URL starts with, up to its second ':' ({@code jdbc:mysql:}), without host or credentials. */
        private static String scheme(String url) {
            int colon = url.indexOf(':');
            int second = colon < 0 ? -1 : url.indexOf(':', colon + 1);
            if (!url.regionMatches(true, 0, "jdbc:", 0, 5) || second < 0) {
                return "it (a JDBC URL starts with jdbc:<driver>:)";
            }
            String scheme = url.substring(0, second + 1);
            return scheme.chars().allMatch(c -> Character.isLetterOrDigit(c) || c == ':' || c == '-' || c == '.')
                    ? "a " + scheme + " URL" : "it";
        }

        @Override
        public String toString() {
            return "a JDBC URL a driver on the class path accepts";
        }
    }

    /**
     * A database the URL names that does not exist cannot appear by retrying (R6), like absent
     * tables: PostgreSQL 3D000, MySQL/MariaDB 1049, H2 90146 and 90013. Anything else is returned
     * as it is, to be retried as an outage.
     */
    private static RuntimeException missingDatabase(RuntimeException e, String url) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof SQLException sql && ("3D000".equals(sql.getSQLState()) || sql.getErrorCode() == 1049
                    || sql.getErrorCode() == 90146 || sql.getErrorCode() == 90013)) {
                return new OutboxMisconfigurationException("the database named in " + URL + " does not exist ("
                        + "SQLState " + sql.getSQLState() + ", code " + sql.getErrorCode() + "; value hidden): create "
                        + "it, or correct " + URL + ", then start again", e);
            }
        }
        return cannotConnectEver(e, url);
    }

    /**
     * A first connection that failed for a reason no retry can heal is a misconfiguration (R6):
     * the driver refused a property value of the URL (pgjdbc's SQLState 22023, such as
     * {@code sslmode=bogus}, or H2's 90011, a relative file path), or a class the URL names is
     * absent ({@code socketFactory}). What can heal is returned as it is, to be retried: a refused
     * or broken connection and a timeout (SQLState class 08, {@link java.sql.SQLTransientException},
     * {@link java.sql.SQLRecoverableException}, a socket error), too many connections (53), a server
     * starting or shutting down (57), and any failure without an {@link SQLException}. A refused
     * login (28) or grant (42501; MariaDB/MySQL 1044, 1142, 1143, 1227) is returned as it is too: it
     * is no fault of the URL, and the relay's {@code io.outbox.relay.ErrorTable} says what it is
     * (rule R13).
     */
    private static RuntimeException cannotConnectEver(RuntimeException e, String url) {
        SQLException first = null;
        for (Throwable cause = e; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            if (cause instanceof ClassNotFoundException || cause instanceof LinkageError
                    || cause instanceof ClassCastException) {
                return neverWorks(cause, e, url);
            }
            if (cause instanceof IOException || cause instanceof SQLTransientException
                    || cause instanceof SQLRecoverableException) {
                return e;
            }
            if (cause instanceof SQLException sql && first == null) {
                first = sql;
            }
        }
        if (first == null) {
            return e;
        }
        String state = first.getSQLState() == null ? "" : first.getSQLState();
        boolean heals = state.startsWith("08") || state.startsWith("53") || state.startsWith("57")
                || state.startsWith("HYT") || state.equals("90020");
        int code = first.getErrorCode();
        boolean refused = state.startsWith("28") || state.equals("42501")
                || code == 1044 || code == 1142 || code == 1143 || code == 1227;
        return heals || refused ? e : neverWorks(first, e, url);
    }

    /** The driver's message with the URL, which may hold a password, taken out. */
    private static OutboxMisconfigurationException neverWorks(Throwable reason, RuntimeException e, String url) {
        String detail = reason instanceof SQLException sql ? "SQLState " + sql.getSQLState() + ", code "
                + sql.getErrorCode() : reason.getClass().getName();
        String message = String.valueOf(reason.getMessage()).replace(url, "<" + URL + ">")
                .replaceAll("[\\r\\n]+", " ");
        return new OutboxMisconfigurationException("Invalid value for configuration " + URL + ": the JDBC driver "
                + "refuses it on every connection, which no retry can change (" + detail + "; value hidden): "
                + message + "; correct it, then start again", e);
    }

    private static void validateSchema(String name, Object value) {
        String schema = (String) value;
        if (schema != null && !schema.isEmpty()) {
            validate(name, schema, () -> JdbcOutboxTables.defaults().inSchema(schema));
        }
    }

    private static void validatePrefix(String name, Object value) {
        if (value == null) {
            throw new ConfigException(name, null, "must not be null");
        }
        if (((String) value).isEmpty()) {
            // The tables would be named messages, leases and relays among the application's own.
            throw new ConfigException(name, value, "must not be empty: leave it unset for the default '"
                    + JdbcOutboxTables.DEFAULT_PREFIX + "'");
        }
        validate(name, value, () -> JdbcOutboxTables.withPrefix((String) value));
    }

    private static void validate(String name, Object value, Runnable check) {
        try {
            check.run();
        } catch (IllegalArgumentException e) {
            throw new ConfigException(name, value, e.getMessage());
        }
    }
}
