package io.outbox.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.OutboxStores;
import io.outbox.store.jdbc.JdbcTable.Column;
import io.outbox.store.jdbc.JdbcTable.Key;
import io.outbox.store.jdbc.JdbcTable.Need;
import io.outbox.store.jdbc.JdbcTable.Type;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import liquibase.Scope;
import liquibase.changelog.ChangeLogParameters;
import liquibase.command.CommandScope;
import liquibase.command.core.UpdateCommandStep;
import liquibase.command.core.helpers.DatabaseChangelogCommandStep;
import liquibase.command.core.helpers.DbUrlConnectionArgumentsCommandStep;
import liquibase.database.Database;
import liquibase.database.DatabaseFactory;
import liquibase.database.jvm.JdbcConnection;
import liquibase.resource.ClassLoaderResourceAccessor;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The schema on one database: what {@code verifySchema()} finds missing (rules R6, R13: a table,
 * column, key or index the statements need is a misconfiguration, fatal at start), and the shipped
 * Flyway and Liquibase migrations, applied here and compared with what {@code createSchema()} makes.
 */
abstract class JdbcSchemaTestBase {

    /** The changelog the jar ships. */
    static final String CHANGELOG = "db/outbox/liquibase/outbox.changelog.xml";

    private final List<String> prefixes = new ArrayList<>();
    private final List<String> extraTables = new ArrayList<>();
    private final List<HikariDataSource> pools = new ArrayList<>();
    private HikariDataSource pool;
    private JdbcDialect dialect;

    /** The database this run uses. */
    abstract TestDatabase database();

    @BeforeEach
    void connect() throws SQLException {
        database().requireReachable();
        pool = database().newPool(2);
        pools.add(pool);
        try (Connection c = pool.getConnection()) {
            dialect = JdbcDialect.detect(c);
        }
    }

    @AfterEach
    void dropEverything() throws SQLException {
        for (String prefix : prefixes) {
            database().dropTables(prefix);
            extraTables.add(prefix + "inbox");
        }
        try (Connection c = database().connect(); Statement s = c.createStatement()) {
            for (String table : extraTables) {
                s.execute("DROP TABLE IF EXISTS " + dialect.quote(table));
                s.execute("DROP TABLE IF EXISTS " + table); // as Liquibase names it: unquoted
            }
        }
        pools.forEach(HikariDataSource::close);
    }

    private String freshPrefix() {
        String prefix = TestDatabase.uniquePrefix();
        prefixes.add(prefix);
        return prefix;
    }

    /** The dialect detected on the database. */
    JdbcDialect dialect() {
        return dialect;
    }

    /** A prefix for fresh tables, dropped after the test. */
    String freshTables() {
        String prefix = freshPrefix();
        database().createTables(prefix);
        return prefix;
    }

    HikariDataSource pool() {
        return pool;
    }

    private JdbcOutboxStore store(String prefix) {
        return JdbcOutboxStore.builder(pool).tablePrefix(prefix).build();
    }

    private JdbcInbox inbox(String prefix) {
        return JdbcInbox.builder(pool).table(prefix + "inbox").build();
    }

    void execute(String... statements) throws SQLException {
        try (Connection c = pool.getConnection()) {
            TestDatabase.execute(c, List.of(statements));
        }
    }

    // ---------------------------------------------------------------------------------------
    // R13: keys and indexes
    // ---------------------------------------------------------------------------------------

    /**
     * R13: each key or index a statement needs, dropped on its own, fails {@code verifySchema()}
     * with one line naming the table, the columns and the DDL that creates it; that DDL, run, makes
     * the check pass again.
     */
    @Test
    void R13_eachKeyOrIndexAStatementNeedsIsCheckedAndItsAbsenceNamesTableColumnsAndDdl() throws SQLException {
        List<String> dropped = new ArrayList<>();
        int count = needed(dialect.tables(JdbcOutboxTables.defaults())).size();
        for (int i = 0; i < count; i++) {
            String prefix = freshPrefix();
            JdbcOutboxStore store = store(prefix);
            Needed needed = needed(dialect.tables(store.tables())).get(i);
            JdbcTable table = needed.table();
            Key key = needed.key();
            store.createSchema();
            store.verifySchema();
            dropKey(table, key);
            assertThatThrownBy(store::verifySchema)
                    .isInstanceOf(OutboxMisconfigurationException.class)
                    .hasMessageContaining("outbox table " + table.qualified(dialect) + " has no ")
                    .hasMessageContaining("(" + String.join(", ", key.columns()) + ")")
                    .hasMessageContaining("whatever its name")
                    .hasMessageContaining("create it with: " + table.addStatement(dialect, key))
                    .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
            execute(table.addStatement(dialect, key));
            store.verifySchema();
            dropped.add(table.name().substring(prefix.length()) + key.columns());
        }
        assertThat(dropped).as("the keys checked").contains("messages[bucket, id]", "leases[bucket]",
                "relays[relay_id]", "messages_dead[message_id]", "messages_failing[bucket]");
    }

    /** R13 for the inbox: its primary key (I1) and its {@code seen_at} index (I2). */
    @Test
    void R13_theInboxsPrimaryKeyAndSeenAtIndexAreChecked() throws SQLException {
        for (String columns : List.of("consumer, message_id", "seen_at")) {
            String prefix = freshPrefix();
            JdbcInbox inbox = inbox(prefix);
            inbox.createSchema();
            inbox.verifySchema();
            JdbcTable table = inbox.tableSpec();
            Key key = table.keys().stream().filter(k -> String.join(", ", k.columns()).equals(columns)).findFirst()
                    .orElseThrow();
            dropKey(table, key);
            assertThatThrownBy(inbox::verifySchema)
                    .isInstanceOf(OutboxMisconfigurationException.class)
                    .hasMessageContaining("inbox table " + table.qualified(dialect) + " has no ")
                    .hasMessageContaining("(" + columns + ")")
                    .hasMessageContaining("create it with: " + table.addStatement(dialect, key));
            execute(table.addStatement(dialect, key));
            inbox.verifySchema();
        }
    }

    /**
     * R13: an index counts by its columns, whatever its name: the leading columns for an ordered
     * read, exactly the columns of a primary key or unique index for a uniqueness the statements
     * rely on.
     */
    @Test
    void R13_anIndexCountsByItsColumnsWhateverItsName() throws SQLException {
        String prefix = freshPrefix();
        JdbcOutboxStore store = store(prefix);
        store.createSchema();
        List<JdbcTable> tables = dialect.tables(store.tables());
        JdbcTable messages = tables.get(0);
        JdbcTable leases = tables.get(1);
        dropKey(messages, orderedKey(messages));
        String messagesTable = messages.qualified(dialect);
        execute("CREATE INDEX " + dialect.quote(prefix + "other_order") + " ON " + messagesTable + " ("
                + dialect.quote("id") + ", " + dialect.quote("bucket") + ")");
        assertThatThrownBy(store::verifySchema).hasMessageContaining("index whose leading columns are (bucket, id)");
        execute("CREATE INDEX " + dialect.quote(prefix + "renamed") + " ON " + messagesTable + " ("
                + dialect.quote("bucket") + ", " + dialect.quote("id") + ", " + dialect.quote("created_at") + ")");
        store.verifySchema();

        dropKey(leases, leases.keys().get(0));
        execute("CREATE INDEX " + dialect.quote(prefix + "not_unique") + " ON " + leases.qualified(dialect) + " ("
                + dialect.quote("bucket") + ")");
        assertThatThrownBy(store::verifySchema)
                .hasMessageContaining("outbox table " + leases.qualified(dialect) + " has no primary key or unique index on "
                        + "exactly (bucket)");
        execute("CREATE UNIQUE INDEX " + dialect.quote(prefix + "unique_bucket") + " ON " + leases.qualified(dialect)
                + " (" + dialect.quote("bucket") + ")");
        store.verifySchema();
    }

    /** R13: the provider, told not to create the schema, refuses tables without a needed index at start. */
    @Test
    void R13_theProviderRefusesToOpenAStoreWhoseTablesLackAnIndex() throws SQLException {
        String prefix = freshPrefix();
        database().createTables(prefix);
        JdbcTable messages = dialect.tables(JdbcOutboxTables.withPrefix(prefix)).get(0);
        dropKey(messages, orderedKey(messages));
        assertThatThrownBy(() -> OutboxStores.open(JdbcOutboxStoreProvider.NAME, database().providerConfig(prefix)))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("outbox table " + messages.qualified(dialect) + " has no index whose leading "
                        + "columns are (bucket, id)");
    }

    // ---------------------------------------------------------------------------------------
    // R6: columns of usable types
    // ---------------------------------------------------------------------------------------

    /**
     * R6: a column of a type the store cannot use, or NOT NULL where the store writes NULL, fails
     * the check naming the table, the column and the type the store's DDL gives it.
     */
    @Test
    void R6_aColumnOfAnUnusableTypeOrNotNullWhereTheStoreWritesNullIsRefused() throws SQLException {
        String prefix = freshPrefix();
        JdbcOutboxStore store = store(prefix);
        store.createSchema();
        JdbcOutboxTables names = store.tables();
        Column relayId = Column.notNull("relay_id", Type.NAME, 128);
        Column owner = Column.notNull("owner", Type.NAME, 128);
        execute("DROP TABLE " + dialect.quote(names.relays()), "DROP TABLE " + dialect.quote(names.leases()),
                "CREATE TABLE " + dialect.quote(names.relays()) + " (" + relayId.definition(dialect) + ", "
                        + dialect.quote("last_seen") + " VARCHAR(20) NOT NULL, PRIMARY KEY (" + dialect.quote("relay_id")
                        + "))",
                "CREATE TABLE " + dialect.quote(names.leases()) + " (" + dialect.quote("bucket") + " INTEGER NOT NULL, "
                        + owner.definition(dialect) + ", " + dialect.quote("expires_at") + " BIGINT NOT NULL, PRIMARY KEY ("
                        + dialect.quote("bucket") + "))");
        assertThatThrownBy(store::verifySchema)
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("outbox table " + dialect.quote(names.relays()) + ": column last_seen is ")
                .hasMessageContaining("where the store needs BIGINT")
                .hasMessageContaining("outbox table " + dialect.quote(names.leases()) + ": column owner is NOT NULL but "
                        + "the store writes NULL into it");
    }

    // ---------------------------------------------------------------------------------------
    // Migrations
    // ---------------------------------------------------------------------------------------

    /** The shipped Flyway migrations make tables that {@code verifySchema()} accepts, under any prefix. */
    @Test
    void theFlywayMigrationsMakeTablesTheStoreAccepts() {
        String prefix = freshPrefix();
        flyway(prefix);
        store(prefix).verifySchema();
    }

    /** The shipped Liquibase changelog makes tables that {@code verifySchema()} accepts, under any prefix. */
    @Test
    void theLiquibaseChangelogMakesTablesTheStoreAccepts() throws Exception {
        String prefix = freshPrefix();
        liquibase(prefix);
        store(prefix).verifySchema();
    }

    /**
     * The migrations are the history of {@code createSchema()}: the schema they make (tables,
     * columns with types, sizes and nullability, primary keys, indexes by columns and uniqueness) is
     * the one it makes. A column added to the store's DDL without a migration fails here.
     */
    @Test
    void theMigrationsMakeExactlyTheSchemaCreateSchemaMakes() throws Exception {
        String created = freshPrefix();
        store(created).createSchema();
        Map<String, Object> expected = describe(created);
        String byFlyway = freshPrefix();
        flyway(byFlyway);
        assertThat(describe(byFlyway)).as("Flyway's schema").isEqualTo(expected);
        String byLiquibase = freshPrefix();
        liquibase(byLiquibase);
        assertThat(describe(byLiquibase)).as("Liquibase's schema").isEqualTo(expected);
    }

    /** The comparison above is not blind: a column added on one side shows. */
    @Test
    void theSchemaComparisonSeesAnAddedColumn() throws SQLException {
        String one = freshPrefix();
        String other = freshPrefix();
        store(one).createSchema();
        store(other).createSchema();
        assertThat(describe(other)).isEqualTo(describe(one));
        execute("ALTER TABLE " + dialect.quote(other + "relays") + " ADD " + dialect.quote("extra") + " INTEGER");
        assertThat(describe(other)).isNotEqualTo(describe(one));
    }

    /**
     * As docs/store-jdbc.md says to run them beside an application's own migrations: a history table of
     * their own, and a baseline at version 0 so that V1 runs in a schema that has other tables.
     */
    private void flyway(String prefix) {
        String history = prefix + "flyway";
        extraTables.add(history);
        Flyway.configure()
                .dataSource(database().url(), database().user(), database().password())
                .locations("classpath:db/outbox/flyway/" + dialect.configName())
                .placeholders(Map.of("outbox_prefix", prefix))
                .table(history)
                .baselineOnMigrate(true)
                .baselineVersion("0")
                .load()
                .migrate();
    }

    private void liquibase(String prefix) throws Exception {
        String history = prefix + "changelog";
        extraTables.add(history);
        extraTables.add(history + "_lock");
        try (Connection c = database().connect()) {
            liquibase(c, history, prefix);
        }
    }

    /**
     * Applies the shipped changelog on a connection, with its own history tables.
     *
     * @param prefix the value of outbox_prefix, or null to leave the changelog's default
     */
    static void liquibase(Connection c, String history, String prefix) throws Exception {
        Database db = DatabaseFactory.getInstance().findCorrectDatabaseImplementation(new JdbcConnection(c));
        db.setDatabaseChangeLogTableName(history);
        db.setDatabaseChangeLogLockTableName(history + "_lock");
        ChangeLogParameters parameters = new ChangeLogParameters(db);
        if (prefix != null) {
            parameters.set("outbox_prefix", prefix);
        }
        Scope.child(Scope.Attr.resourceAccessor.name(), new ClassLoaderResourceAccessor(), () ->
                new CommandScope(UpdateCommandStep.COMMAND_NAME)
                        .addArgumentValue(DbUrlConnectionArgumentsCommandStep.DATABASE_ARG, db)
                        .addArgumentValue(UpdateCommandStep.CHANGELOG_FILE_ARG, CHANGELOG)
                        .addArgumentValue(DatabaseChangelogCommandStep.CHANGELOG_PARAMETERS, parameters)
                        .execute());
    }

    /**
     * The store's tables with this prefix as the database describes them, names without the
     * prefix: per table its columns (type, size, octet length, nullability, auto-increment), primary
     * key and indexes (columns, uniqueness, name: the prefix's, or {@code <database's>}).
     */
    private Map<String, Object> describe(String prefix) throws SQLException {
        Map<String, Object> schema = new TreeMap<>();
        try (Connection c = pool.getConnection()) {
            DatabaseMetaData md = c.getMetaData();
            String catalog = dialect == JdbcDialect.MYSQL ? c.getCatalog() : null;
            String schemaName = dialect == JdbcDialect.MYSQL ? null : c.getSchema();
            for (JdbcTable table : dialect.tables(JdbcOutboxTables.withPrefix(prefix))) {
                List<String> columns = new ArrayList<>();
                try (ResultSet r = md.getColumns(catalog, schemaName, table.name(), "%")) {
                    while (r.next()) {
                        columns.add(r.getString("COLUMN_NAME") + " " + r.getString("TYPE_NAME") + "("
                                + r.getString("COLUMN_SIZE") + ", " + r.getString("DECIMAL_DIGITS") + ", octets "
                                + r.getString("CHAR_OCTET_LENGTH") + ") nullable=" + r.getString("IS_NULLABLE")
                                + " auto=" + r.getString("IS_AUTOINCREMENT"));
                    }
                }
                Map<Short, String> primary = new TreeMap<>();
                try (ResultSet r = md.getPrimaryKeys(catalog, schemaName, table.name())) {
                    while (r.next()) {
                        primary.put(r.getShort("KEY_SEQ"), r.getString("COLUMN_NAME"));
                    }
                }
                Map<String, Map<Short, String>> indexColumns = new TreeMap<>();
                Map<String, Boolean> unique = new TreeMap<>();
                try (ResultSet r = md.getIndexInfo(catalog, schemaName, table.name(), false, false)) {
                    while (r.next()) {
                        if (r.getShort("TYPE") == DatabaseMetaData.tableIndexStatistic) {
                            continue;
                        }
                        String name = r.getString("INDEX_NAME");
                        indexColumns.computeIfAbsent(name, n -> new TreeMap<>()).put(r.getShort("ORDINAL_POSITION"),
                                r.getString("COLUMN_NAME"));
                        unique.put(name, !r.getBoolean("NON_UNIQUE"));
                    }
                }
                TreeSet<String> indexes = new TreeSet<>();
                indexColumns.forEach((name, cols) -> indexes.add((name.startsWith(prefix) ? "<p>"
                        + name.substring(prefix.length()) : "<database's>") + " " + cols.values()
                        + (unique.get(name) ? " unique" : "")));
                schema.put(table.name().substring(prefix.length()), List.of(columns, primary.values().toString(),
                        indexes));
            }
        }
        return schema;
    }

    // ---------------------------------------------------------------------------------------
    // Helpers
    // ---------------------------------------------------------------------------------------

    /** A key a statement needs, and its table. */
    private record Needed(JdbcTable table, Key key) {
    }

    private static List<Needed> needed(List<JdbcTable> tables) {
        List<Needed> needed = new ArrayList<>();
        for (JdbcTable table : tables) {
            for (Key key : table.keys()) {
                if (key.need() != Need.NONE) {
                    needed.add(new Needed(table, key));
                }
            }
        }
        return needed;
    }

    private static Key orderedKey(JdbcTable table) {
        return table.keys().stream().filter(k -> k.need() == Need.ORDERED).findFirst().orElseThrow();
    }

    /** Drops a primary key (by the name the database gave it) or an index. */
    private void dropKey(JdbcTable table, Key key) throws SQLException {
        String qualified = table.qualified(dialect);
        if (key.primary()) {
            if (dialect == JdbcDialect.POSTGRESQL) {
                String constraint;
                try (Connection c = pool.getConnection();
                     ResultSet r = c.getMetaData().getPrimaryKeys(null, c.getSchema(), table.name())) {
                    assertThat(r.next()).as("primary key of %s", table.name()).isTrue();
                    constraint = r.getString("PK_NAME");
                }
                execute("ALTER TABLE " + qualified + " DROP CONSTRAINT " + dialect.quote(constraint));
            } else {
                execute("ALTER TABLE " + qualified + " DROP PRIMARY KEY");
            }
        } else if (dialect == JdbcDialect.MYSQL) {
            execute("DROP INDEX " + dialect.quote(key.name()) + " ON " + qualified);
        } else {
            execute("DROP INDEX " + dialect.quote(key.name()));
        }
    }
}
