package io.outbox.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import io.outbox.OutboxMessage;
import io.outbox.spi.CloseableOutboxStore;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.OutboxStores;
import io.outbox.spi.support.OutboxStoreConfig;
import io.outbox.spi.support.StoredMessages;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.DriverPropertyInfo;
import java.sql.SQLException;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.logging.Logger;
import org.apache.kafka.common.config.ConfigDef;
import org.junit.jupiter.api.Test;

/** The {@code jdbc} provider's settings, on embedded H2. */
class JdbcOutboxStoreProviderTest {

    private static final String H2_URL = TestDatabase.h2().url();

    private static Map<String, String> settings(String... keyValues) {
        Map<String, String> settings = new HashMap<>();
        settings.put(JdbcOutboxStoreProvider.URL, H2_URL);
        for (int i = 0; i < keyValues.length; i += 2) {
            settings.put(keyValues[i], keyValues[i + 1]);
        }
        return settings;
    }

    private static void assertRefused(Map<String, String> settings, String... fragments) {
        assertThatThrownBy(() -> OutboxStores.open("jdbc", settings))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContainingAll(fragments);
    }

    @Test
    void malformedSettingsAreRefusedNamingTheKey() {
        assertRefused(settings("table.prefx", "x_"), "unknown setting", "table.prefx");
        assertRefused(Map.of(), "url");
        assertRefused(settings("table.prefix", "x\"; DROP TABLE t; --"), "table.prefix");
        assertRefused(settings("schema", "app.s"), "schema");
        assertRefused(settings("dialect", "oracle"), "dialect");
        assertRefused(settings("pool.size", "0"), "pool.size");
        assertRefused(settings("max.payload.bytes", "-1"), "max.payload.bytes");
        assertRefused(settings("url", "jdbc:oracle:thin:@db:1521/app"), "url", "no JDBC driver",
                "a jdbc:oracle: URL");
    }

    @Test
    void aUrlThatADriverAcceptsButWhoseDialectCannotBeToldNeedsTheDialectSetting() throws SQLException {
        Driver anyUrl = new AcceptingDriver("jdbc:oracle:");
        DriverManager.registerDriver(anyUrl);
        try {
            assertRefused(settings("url", "jdbc:oracle:thin:@db:1521/app"), "dialect", "jdbc:oracle");
            assertThatThrownBy(() -> new JdbcOutboxStoreProvider().validate(settings("url",
                    "jdbc:oracle:thin:@db:1521/app"))).as("validate, which --check runs, refuses it too")
                    .isInstanceOf(OutboxMisconfigurationException.class).hasMessageContaining("dialect");
        } finally {
            DriverManager.deregisterDriver(anyUrl);
        }
    }

    @Test
    void R6_aUrlNoDriverOnTheClassPathAcceptsIsRefusedNamingItsSchemeNotTheUrl() {
        String mysql = "jdbc:mysql://db:3306/app?user=app&password=pw-4711";
        assertRefused(settings("url", mysql), "url", "no JDBC driver on the class path accepts a jdbc:mysql: URL",
                "for MySQL use jdbc:mariadb: (MariaDB Connector/J, bundled in the relay jar, talks to MySQL) or add "
                        + "MySQL Connector/J to the class path");
        assertThatThrownBy(() -> OutboxStores.open("jdbc", settings("url", mysql)))
                .hasMessageNotContaining("pw-4711").hasMessageNotContaining("db:3306");
        assertRefused(settings("url", "nosuch"), "url", "no JDBC driver on the class path accepts it",
                "add the database's JDBC driver to the class path");
        assertRefused(settings("url", "jdbc:nosuch://u:pw-4711@h/x"), "a jdbc:nosuch: URL");
        assertThatThrownBy(() -> OutboxStores.open("jdbc", settings("url", "jdbc:nosuch://u:pw-4711@h/x")))
                .hasMessageNotContaining("pw-4711");
    }

    @Test
    void R6_aUrlOfABundledDriversSchemeThatItCannotParseSaysSoNotThatTheDriverIsMissing() {
        for (String url : java.util.List.of("jdbc:postgresql://127.0.0.1:notaport/test",
                "jdbc:postgresql://u:pw-4711@127.0.0.1:notaport/test")) {
            assertRefused(settings("url", url), "url", "the JDBC driver cannot parse a jdbc:postgresql: URL",
                    "check host, port and database");
            assertThatThrownBy(() -> OutboxStores.open("jdbc", settings("url", url)))
                    .hasMessageNotContaining("no JDBC driver").hasMessageNotContaining("pw-4711")
                    .hasMessageNotContaining("notaport");
        }
    }

    @Test
    void R6_aDatabaseThatDoesNotExistIsAMisconfigurationNotARetriedOutage() {
        for (TestDatabase db : java.util.List.of(TestDatabase.postgres(), TestDatabase.mariadb())) {
            db.requireReachable();
            // The server's own database name replaced by one that does not exist.
            String url = db.url().replaceFirst("/[^/?;]+(?=$|[?;])", "/outbox_no_such_database");
            Map<String, String> settings = new java.util.HashMap<>(settings("url", url));
            if (db.user() != null) {
                settings.put("user", db.user());
            }
            if (db.password() != null) {
                settings.put("password", db.password());
            }
            assertThatThrownBy(() -> OutboxStores.open("jdbc", settings)).as(db.name())
                    .isInstanceOf(OutboxMisconfigurationException.class)
                    .hasMessageContainingAll("url", "database", "does not exist");
        }
    }

    @Test
    void theDriverCheckIsPartOfTheSettingsDefinitionSoACheckWithoutConnectingRunsIt() {
        ConfigDef definition = new JdbcOutboxStoreProvider().configDef();
        assertThatThrownBy(() -> OutboxStoreConfig.parse("jdbc", definition, Map.of("url", "jdbc:mysql://db/app")))
                .isInstanceOf(OutboxMisconfigurationException.class).hasMessageContaining("jdbc:mariadb:");
        assertThat(OutboxStoreConfig.parse("jdbc", definition,
                Map.of("url", "jdbc:mysql://nowhere.invalid:3306/app?permitMysqlScheme")).getString("url"))
                .as("MariaDB Connector/J takes jdbc:mysql: with permitMysqlScheme; nothing connects")
                .startsWith("jdbc:mysql:");
        assertThat(OutboxStoreConfig.parse("jdbc", definition, Map.of("url", "jdbc:mariadb://nowhere.invalid/app"))
                .getString("url")).startsWith("jdbc:mariadb:");
    }

    @Test
    void R6_aUrlTheDriverTakesButCanNeverParseIsAMisconfigurationAtOnceNotARetriedOutage() {
        String url = "jdbc:mariadb://root:pw-4711@127.0.0.1:3306/db";
        long start = System.nanoTime();
        assertRefused(settings("url", url), "url", "the JDBC driver cannot parse a jdbc:mariadb: URL",
                "value hidden", "user and password");
        assertThat(System.nanoTime() - start).as("refused without connecting").isLessThan(5_000_000_000L);
        assertThatThrownBy(() -> OutboxStores.open("jdbc", settings("url", url)))
                .hasMessageNotContaining("pw-4711").hasMessageNotContaining("127.0.0.1");
        assertThatThrownBy(() -> OutboxStoreConfig.parse("jdbc", new JdbcOutboxStoreProvider().configDef(),
                Map.of("url", "jdbc:mariadb://127.0.0.1:notaport/db")))
                .as("the settings check without connecting refuses it too")
                .isInstanceOf(OutboxMisconfigurationException.class).hasMessageContaining("cannot parse");
    }

    /**
     * R6: pgjdbc parses {@code sslmode=bogus} but refuses it on every connection, before it opens
     * a socket; the check without connecting refuses it, naming the property and the values the
     * driver lists, not the URL.
     */
    @Test
    void R6_aUrlPropertyValueTheDriverDoesNotListIsRefusedWithoutConnecting() {
        String url = "jdbc:postgresql://127.0.0.1:1/db?sslmode=bogus&password=pw-4712";
        assertThatThrownBy(() -> new JdbcOutboxStoreProvider().validate(Map.of("url", url)))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContainingAll("url", "'sslmode'", "verify-full", "value hidden")
                .hasMessageNotContaining("pw-4712").hasMessageNotContaining("bogus");
        assertThat(OutboxStoreConfig.parse("jdbc", new JdbcOutboxStoreProvider().configDef(),
                Map.of("url", "jdbc:postgresql://127.0.0.1:1/db?sslmode=VERIFY-FULL&targetServerType=primary"))
                .getString("url")).as("listed values, in any case, pass").contains("sslmode");
    }

    /**
     * R6: a first connection refused for a reason no retry heals is a misconfiguration: a class
     * the URL names that does not exist, a relative H2 file path. A refused connection stays an
     * outage, retried.
     */
    @Test
    void R6_aFirstConnectionThatCanNeverWorkIsAMisconfigurationAndARefusedConnectionIsNot() {
        // Passes the checks without connecting (H2 parses its settings only when it connects).
        OutboxStores.provider("jdbc").validate(settings("url", "jdbc:h2:mem:never;NO_SUCH_SETTING=pw-4713"));
        assertThatThrownBy(() -> OutboxStores.open("jdbc", settings("url",
                "jdbc:h2:mem:never;NO_SUCH_SETTING=pw-4713")))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContainingAll("url", "refuses it on every connection", "90113")
                .hasMessageNotContaining("pw-4713");
        assertThatThrownBy(() -> OutboxStores.open("jdbc", settings("url", "jdbc:postgresql://127.0.0.1:1/db")))
                .as("nothing listens on port 1: an outage, retried")
                .isNotInstanceOf(OutboxMisconfigurationException.class);
    }

    /**
     * Found without connecting, as {@code --check} finds them: a class a URL property names that is
     * absent, an H2 file path relative to the working directory.
     */
    @Test
    void R6_aMissingClassTheUrlNamesAndARelativeH2FileAreRefusedBeforeConnecting() {
        assertRefused(settings("url", "jdbc:postgresql://127.0.0.1:1/db?socketFactory=com.example.NoSuchFactory"),
                "url", "the class the JDBC driver's property 'socketFactory' names is not on the class path");
        assertRefused(settings("url", "jdbc:h2:relative_outbox_file"), "url", "implicitly relative", "90011");
        assertThatThrownBy(() -> OutboxStores.provider("jdbc").validate(settings("url",
                "jdbc:h2:relative_outbox_file"))).hasMessageNotContaining("relative_outbox_file");
        OutboxStores.provider("jdbc").validate(settings("url", "jdbc:postgresql://127.0.0.1:1/db?sslfactory="
                + "org.postgresql.ssl.DefaultJavaSSLFactory"));
        OutboxStores.provider("jdbc").validate(settings("url", "jdbc:h2:./relative_but_explicit"));
        OutboxStores.provider("jdbc").validate(settings("url", "jdbc:h2:mem:x"));
    }

    @Test
    void identifiersAreTakenAsWrittenNeverTrimmed() {
        assertRefused(settings("table.prefix", "abc "), "table.prefix='abc '", "starts or ends with whitespace");
        assertRefused(settings("table.prefix", " abc"), "table.prefix=' abc'");
        assertRefused(settings("table.prefix", "abc\u0000"), "table.prefix='abc\\u0000'", "control character");
        assertRefused(settings("table.prefix", "ab\tc"), "table.prefix", "control character");
        assertRefused(settings("schema", "public "), "schema='public '");
        assertRefused(settings("url", H2_URL + " "), "url=", "whitespace");
        assertRefused(settings("password", "pw-4711 "), "password=[hidden]");
        assertThatThrownBy(() -> OutboxStores.open("jdbc", settings("password", "pw-4711 ")))
                .hasMessageNotContaining("pw-4711");
    }

    @Test
    void anEmptyTablePrefixIsRefusedNamingTheSettingAndTheDefault() {
        assertRefused(settings("table.prefix", ""), "table.prefix", "must not be empty", "outbox_");
    }

    /** A driver that accepts the URLs with a prefix and connects to nothing. */
    private record AcceptingDriver(String prefix) implements Driver {

        @Override
        public Connection connect(String url, Properties info) throws SQLException {
            throw new SQLException("no connection in this test");
        }

        @Override
        public boolean acceptsURL(String url) {
            return url.startsWith(prefix);
        }

        @Override
        public DriverPropertyInfo[] getPropertyInfo(String url, Properties info) {
            return new DriverPropertyInfo[0];
        }

        @Override
        public int getMajorVersion() {
            return 1;
        }

        @Override
        public int getMinorVersion() {
            return 0;
        }

        @Override
        public boolean jdbcCompliant() {
            return false;
        }

        @Override
        public Logger getParentLogger() {
            return Logger.getGlobal();
        }
    }

    @Test
    void thePasswordIsASecret() {
        ConfigDef.ConfigKey password = new JdbcOutboxStoreProvider().configDef().configKeys()
                .get(JdbcOutboxStoreProvider.PASSWORD);
        assertThat(password.type).isEqualTo(ConfigDef.Type.PASSWORD);
    }

    @Test
    void createSchemaBuildsTheTablesAndTheStoreOwnsItsPool() throws Exception {
        String prefix = TestDatabase.uniquePrefix();
        CloseableOutboxStore opened = OutboxStores.open("jdbc", settings("table.prefix", prefix, "create.schema", "true",
                "user", "sa", "password", "", "max.payload.bytes", "64", "pool.size", "2"));
        try {
            JdbcOutboxStore store = (JdbcOutboxStore) opened;
            assertThat(store.dialect()).isEqualTo(JdbcDialect.H2);
            assertThat(store.maxPayloadBytes()).isEqualTo(64);
            assertThat(store.tables()).isEqualTo(JdbcOutboxTables.withPrefix(prefix));
            OutboxMessage m = StoredMessages.rebuild(UUID.randomUUID(), 0, "t", null, new byte[] {1}, List.of(), null,
                    Instant.parse("2030-01-01T00:00:00Z"));
            try (Connection c = store.dataSource().getConnection()) {
                c.setAutoCommit(false);
                store.writer().enqueue(c, m);
                c.commit();
            }
            assertThat(store.nextBatch(0, 10)).extracting(p -> p.message().messageId()).containsExactly(m.messageId());
            store.close();
            assertThat(((HikariDataSource) store.dataSource()).isClosed()).as("the provider's pool").isTrue();
        } finally {
            opened.close();
            TestDatabase.h2().dropTables(prefix);
        }
    }
}
