package io.outbox.store.jdbc;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.spi.OutboxMisconfigurationException;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/** Schema checks and migrations on PostgreSQL 15 at OUTBOX_TEST_POSTGRES_URL (default 127.0.0.1:5432/test). */
class PostgresSchemaTest extends JdbcSchemaTestBase {

    @Override
    TestDatabase database() {
        return TestDatabase.postgres();
    }

    /** R13: a partial index serves only some rows, so it does not count for a bucket's batch. */
    @Test
    void R13_aPartialIndexDoesNotCount() throws SQLException {
        String prefix = freshTables();
        JdbcOutboxTables tables = JdbcOutboxTables.withPrefix(prefix);
        execute("ALTER TABLE \"" + tables.messages() + "\" DROP CONSTRAINT \"" + tables.messagesIndex() + "\"",
                "CREATE INDEX \"" + prefix + "partial\" ON \"" + tables.messages() + "\" (\"bucket\", \"id\") WHERE "
                        + "\"bucket\" < 4");
        JdbcOutboxStore store = JdbcOutboxStore.builder(pool()).tablePrefix(prefix).build();
        assertThatThrownBy(store::verifySchema).isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("index whose leading columns are (bucket, id)");
    }
}
