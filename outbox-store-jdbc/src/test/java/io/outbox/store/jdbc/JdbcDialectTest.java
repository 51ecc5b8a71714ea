package io.outbox.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.sql.SQLTransactionRollbackException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class JdbcDialectTest {

    /**
     * The shipped DDL is what {@code createSchema()} runs: if this fails after a schema change,
     * write {@code JdbcDialect.X.schemaScript(JdbcOutboxTables.defaults())} to the resource.
     */
    @ParameterizedTest
    @EnumSource(JdbcDialect.class)
    void theShippedSchemaScriptIsWhatCreateSchemaRuns(JdbcDialect dialect) throws IOException {
        String shipped;
        try (InputStream in = getClass().getClassLoader().getResourceAsStream(dialect.schemaResource())) {
            assertThat(in).as("resource %s", dialect.schemaResource()).isNotNull();
            shipped = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertThat(shipped).isEqualTo(dialect.schemaScript(JdbcOutboxTables.defaults()));
        for (String statement : dialect.createStatements(JdbcOutboxTables.defaults())) {
            assertThat(shipped).contains(statement + ";\n");
        }
    }

    @Test
    void theDialectComesFromTheUrlOrTheName() {
        assertThat(JdbcDialect.forUrl("jdbc:postgresql://db/app")).isEqualTo(JdbcDialect.POSTGRESQL);
        assertThat(JdbcDialect.forUrl("jdbc:mariadb://db/app")).isEqualTo(JdbcDialect.MYSQL);
        assertThat(JdbcDialect.forUrl("JDBC:MYSQL://db/app")).isEqualTo(JdbcDialect.MYSQL);
        assertThat(JdbcDialect.forUrl("jdbc:h2:mem:x")).isEqualTo(JdbcDialect.H2);
        assertThatThrownBy(() -> JdbcDialect.forUrl("jdbc:oracle:thin:@db:1521/app"))
                .hasMessageContaining("set the dialect explicitly");
        assertThat(JdbcDialect.forName("MariaDB")).isEqualTo(JdbcDialect.MYSQL);
        assertThat(JdbcDialect.forName("postgresql")).isEqualTo(JdbcDialect.POSTGRESQL);
        assertThatThrownBy(() -> JdbcDialect.forName("oracle")).hasMessageContaining("postgresql, mysql, mariadb, h2");
    }

    @Test
    void schemaQualifiedDdl() {
        JdbcOutboxTables tables = JdbcOutboxTables.withPrefix("x_").inSchema("app");
        assertThat(JdbcDialect.POSTGRESQL.createStatements(tables).get(0))
                .startsWith("CREATE TABLE IF NOT EXISTS \"app\".\"x_messages\" (")
                .contains("CONSTRAINT \"x_messages_bucket_id\" PRIMARY KEY (\"bucket\", \"id\")")
                .doesNotContain("IDENTITY PRIMARY KEY");
        assertThat(JdbcDialect.POSTGRESQL.createStatements(tables)).hasSize(5).noneMatch(s -> s.startsWith("CREATE INDEX"))
                .anyMatch(s -> s.startsWith("CREATE TABLE IF NOT EXISTS \"app\".\"x_messages_failing\" ("));
        assertThat(JdbcDialect.MYSQL.createStatements(tables).get(0))
                .contains("PRIMARY KEY (`bucket`, `id`)", "KEY `x_messages_id` (`id`)");
        assertThat(JdbcDialect.H2.createStatements(tables).get(1))
                .startsWith("CREATE INDEX IF NOT EXISTS \"app\".\"x_messages_bucket_id\" ON \"app\".\"x_messages\"");
        assertThat(JdbcDialect.MYSQL.dropStatements(tables)).contains("DROP TABLE IF EXISTS `app`.`x_leases`",
                "DROP TABLE IF EXISTS `app`.`x_messages_failing`");
    }

    /** Lease operations retry what the databases report for deadlocks, serialization failures and lock timeouts. */
    @Test
    void lockConflictsAreRecognized() {
        assertThat(JdbcOutboxStore.isLockConflict(new SQLException("deadlock detected", "40P01"))).isTrue();
        assertThat(JdbcOutboxStore.isLockConflict(new SQLException("could not serialize", "40001"))).isTrue();
        assertThat(JdbcOutboxStore.isLockConflict(new SQLTransactionRollbackException("Deadlock found", "40001", 1213)))
                .isTrue();
        assertThat(JdbcOutboxStore.isLockConflict(new SQLException("Lock wait timeout exceeded", "HY000", 1205)))
                .isTrue();
        assertThat(JdbcOutboxStore.isLockConflict(new SQLException("Concurrent update", "90131", 90131))).isTrue();
        assertThat(JdbcOutboxStore.isLockConflict(new SQLException("duplicate key", "23505"))).isFalse();
        assertThat(JdbcOutboxStore.isLockConflict(new SQLException("relation does not exist", "42P01"))).isFalse();
    }
}
