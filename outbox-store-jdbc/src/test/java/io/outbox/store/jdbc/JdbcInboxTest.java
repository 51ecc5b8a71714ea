package io.outbox.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import io.outbox.spi.OutboxMisconfigurationException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** JdbcInbox's guards (I1) and schema methods, on H2 and, for INSERT IGNORE's hidden errors, MariaDB. */
class JdbcInboxTest {

    @Test
    void I1_aConnectionInAutoCommitIsRefused() throws SQLException {
        TestDatabase h2 = TestDatabase.h2();
        try (HikariDataSource pool = h2.newPool(2); Connection c = pool.getConnection()) {
            JdbcInbox inbox = JdbcInbox.builder(pool).table(TestDatabase.uniquePrefix() + "inbox").build();
            inbox.createSchema();
            c.setAutoCommit(true);
            assertThatThrownBy(() -> inbox.firstDelivery(c, "billing", UUID.randomUUID()))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("auto-commit");
            try (Statement s = c.createStatement()) {
                s.execute(inbox.dropStatement(JdbcDialect.H2));
            }
        }
    }

    @Test
    void I1_badConsumerNamesAndSettingsAreRefusedNamingTheValue() throws SQLException {
        TestDatabase h2 = TestDatabase.h2();
        try (HikariDataSource pool = h2.newPool(2); Connection c = pool.getConnection()) {
            c.setAutoCommit(false);
            JdbcInbox inbox = JdbcInbox.builder(pool).build();
            assertThatThrownBy(() -> inbox.firstDelivery(c, "", UUID.randomUUID()))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("consumerName");
            assertThatThrownBy(() -> inbox.firstDelivery(c, " billing", UUID.randomUUID()))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("white space");
            assertThatThrownBy(() -> inbox.firstDelivery(c, "bill\ning", UUID.randomUUID()))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("control character");
            assertThatThrownBy(() -> inbox.firstDelivery(c, "x".repeat(101), UUID.randomUUID()))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("101");
            assertThatThrownBy(() -> inbox.firstDelivery(c, "billing", null)).isInstanceOf(NullPointerException.class);
            c.rollback();
        }
        var builder = JdbcInbox.builder(new org.h2.jdbcx.JdbcDataSource());
        assertThatThrownBy(() -> builder.table("inbox; DROP TABLE x")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("inbox; DROP TABLE x");
        assertThatThrownBy(() -> builder.table("x".repeat(56))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> builder.schema("a.b")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> builder.retention(Duration.ofMillis(999))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("PT0.999S");
        assertThatThrownBy(() -> builder.cleanupBatchSize(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("0");
    }

    @Test
    void verifySchemaNamesAnAbsentTableAndCreateSchemaIsIdempotent() {
        try (HikariDataSource pool = TestDatabase.h2().newPool(1)) {
            String table = TestDatabase.uniquePrefix() + "inbox";
            JdbcInbox inbox = JdbcInbox.builder(pool).table(table).build();
            assertThatThrownBy(inbox::verifySchema).isInstanceOf(OutboxMisconfigurationException.class)
                    .hasMessageContaining(table).hasMessageContaining("createSchema");
            inbox.createSchema();
            inbox.createSchema();
            inbox.verifySchema();
            assertThat(inbox.deleteExpired()).isZero();
        }
    }

    /**
     * INSERT IGNORE turns errors other than a duplicate key into warnings; the inbox must not
     * accept them. A table whose consumer column is too short makes MariaDB truncate the name with
     * a warning (1265) instead of failing.
     */
    @Test
    void I1_mariaDbWarningsOtherThanADuplicateKeyFailTheCall() throws SQLException {
        TestDatabase mariadb = TestDatabase.mariadb();
        mariadb.requireReachable();
        String table = TestDatabase.uniquePrefix() + "inbox";
        try (HikariDataSource pool = mariadb.newPool(1); Connection c = pool.getConnection()) {
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE `" + table + "` (`consumer` VARBINARY(4) NOT NULL, `message_id` CHAR(36)"
                        + " CHARACTER SET ascii NOT NULL, `seen_at` BIGINT NOT NULL, PRIMARY KEY (`consumer`,"
                        + " `message_id`)) ENGINE=InnoDB");
            }
            try {
                JdbcInbox inbox = JdbcInbox.builder(pool).table(table).build();
                c.setAutoCommit(false);
                assertThat(inbox.firstDelivery(c, "bill", UUID.randomUUID())).isTrue();
                assertThatThrownBy(() -> inbox.firstDelivery(c, "billing", UUID.randomUUID()))
                        .isInstanceOf(SQLException.class).hasMessageContaining("INSERT IGNORE")
                        .hasMessageContaining("would otherwise hide").hasMessageContaining("consumer");
                c.rollback();
            } finally {
                c.setAutoCommit(true);
                try (Statement s = c.createStatement()) {
                    s.execute("DROP TABLE `" + table + "`");
                }
            }
        }
    }
}
