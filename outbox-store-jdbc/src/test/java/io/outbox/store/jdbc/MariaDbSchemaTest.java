package io.outbox.store.jdbc;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.spi.OutboxMisconfigurationException;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/** Schema checks and migrations on MariaDB 10.11 at OUTBOX_TEST_MARIADB_URL (default 127.0.0.1:3306/test). */
class MariaDbSchemaTest extends JdbcSchemaTestBase {

    @Override
    TestDatabase database() {
        return TestDatabase.mariadb();
    }

    /** R6: a BLOB (64 KiB) cannot hold the default payload limit; LONGBLOB can. */
    @Test
    void R6_binaryColumnsMustHoldThePayloadLimit() throws SQLException {
        String prefix = freshTables();
        execute("ALTER TABLE `" + prefix + "messages` MODIFY `headers` BLOB NOT NULL");
        JdbcOutboxStore store = JdbcOutboxStore.builder(pool()).tablePrefix(prefix).build();
        assertThatThrownBy(store::verifySchema).isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("outbox table `" + prefix + "messages`: column headers is BLOB(65535) where the "
                        + "store needs LONGBLOB (room for 1000000 bytes, the store's payload limit)");
    }
}
