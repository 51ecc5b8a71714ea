package io.outbox.store.jdbc;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import io.outbox.spi.OutboxMisconfigurationException;
import java.sql.Connection;
import org.junit.jupiter.api.Test;

/** Schema checks and migrations on embedded H2, in memory. */
class H2SchemaTest extends JdbcSchemaTestBase {

    @Override
    TestDatabase database() {
        return TestDatabase.h2();
    }

    /** R6: H2's VARBINARY holds 1,000,000,000 bytes, so a larger payload limit is refused at the check. */
    @Test
    void R6_binaryColumnsMustHoldThePayloadLimit() {
        String prefix = freshTables();
        JdbcOutboxStore.builder(pool()).tablePrefix(prefix).maxPayloadBytes(1_000_000_000L).build().verifySchema();
        JdbcOutboxStore store = JdbcOutboxStore.builder(pool()).tablePrefix(prefix).maxPayloadBytes(1_000_000_001L)
                .build();
        assertThatThrownBy(store::verifySchema).isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("outbox table \"" + prefix + "messages\": column record_key is BINARY VARYING("
                        + "1000000000)")
                .hasMessageContaining("room for 1000000001 bytes, the store's payload limit");
    }

    /** Without the parameter, the changelog names the tables with the default prefix, outbox_. */
    @Test
    void theLiquibaseChangelogsPrefixDefaultsToOutbox() throws Exception {
        // A database of its own, gone when the pool's last connection closes.
        String url = "jdbc:h2:mem:" + TestDatabase.uniquePrefix() + "default";
        try (HikariDataSource own = new HikariDataSource()) {
            own.setJdbcUrl(url);
            own.setMinimumIdle(1);
            try (Connection c = own.getConnection()) {
                liquibase(c, "changelog", null);
                JdbcOutboxStore.builder(own).build().verifySchema();
            }
        }
    }
}
