package io.outbox.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import io.outbox.spi.OutboxMessage;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.OutboxStore;
import io.outbox.spi.OutboxStores;
import java.sql.Connection;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
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
        assertRefused(settings("url", "jdbc:oracle:thin:@db:1521/app"), "dialect", "jdbc:oracle");
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
        OutboxStore opened = OutboxStores.open("jdbc", settings("table.prefix", prefix, "create.schema", "true",
                "user", "sa", "password", "", "max.payload.bytes", "64", "pool.size", "2"));
        try {
            JdbcOutboxStore store = (JdbcOutboxStore) opened;
            assertThat(store.dialect()).isEqualTo(JdbcDialect.H2);
            assertThat(store.maxPayloadBytes()).isEqualTo(64);
            assertThat(store.tables()).isEqualTo(JdbcOutboxTables.withPrefix(prefix));
            OutboxMessage m = new OutboxMessage(UUID.randomUUID(), 0, "t", null, new byte[] {1}, List.of(), null,
                    Instant.parse("2030-01-01T00:00:00Z"));
            try (Connection c = store.dataSource().getConnection()) {
                c.setAutoCommit(false);
                store.writer().enqueue(c, m);
                c.commit();
            }
            assertThat(store.nextBatch(0, 10)).extracting(OutboxMessage::messageId).containsExactly(m.messageId());
            store.close();
            assertThat(((HikariDataSource) store.dataSource()).isClosed()).as("the provider's pool").isTrue();
        } finally {
            ((AutoCloseable) opened).close();
            TestDatabase.h2().dropTables(prefix);
        }
    }
}
