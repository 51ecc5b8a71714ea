package io.outbox.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.outbox.OutboxMessage;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** Transactional enqueue, lease races, chunking and schema against embedded H2, in memory. */
class H2EmbeddedJdbcTest extends JdbcDatabaseTestBase {

    @Override
    TestDatabase database() {
        return TestDatabase.h2();
    }

    @Override
    JdbcDialect expectedDialect() {
        return JdbcDialect.H2;
    }

    /** S1 in the time of a batch, not of the bucket: the read follows the (bucket, id) index and stops at the limit. */
    @Test
    void S1_aBatchIsReadInIndexOrderWithoutScanningTheWholeBucket() throws SQLException {
        String prefix = TestDatabase.uniquePrefix();
        database().createTables(prefix);
        JdbcOutboxTables tables = JdbcOutboxTables.withPrefix(prefix);
        try (HikariDataSource pool = database().newPool(1)) {
            JdbcOutboxStore store = JdbcOutboxStore.builder(pool).tablePrefix(prefix).build();
            List<OutboxMessage> messages = IntStream.range(0, 2_000).mapToObj(i -> new OutboxMessage(
                    UUID.randomUUID(), i % 2, "orders", ("k" + i).getBytes(StandardCharsets.UTF_8), new byte[10],
                    List.of(), null, Instant.parse("2030-01-01T00:00:00Z"))).toList();
            try (Connection c = pool.getConnection()) {
                c.setAutoCommit(false);
                store.writer().enqueue(c, messages);
                c.commit();
            }
            String plan;
            try (Connection c = pool.getConnection();
                 PreparedStatement explain = c.prepareStatement("EXPLAIN ANALYZE "
                         + new Sql(JdbcDialect.H2, tables).selectBatch)) {
                explain.setInt(1, 1);
                explain.setInt(2, 10);
                try (ResultSet row = explain.executeQuery()) {
                    row.next();
                    plan = row.getString(1);
                }
            }
            assertThat(plan).contains("/* index sorted */", "/* scanCount: 10 */");
            assertThat(store.nextBatch(1, 10)).extracting(OutboxMessage::messageId).containsExactlyElementsOf(
                    IntStream.range(0, 10).mapToObj(i -> messages.get(2 * i + 1).messageId()).toList());
        } finally {
            database().dropTables(prefix);
        }
    }
}
