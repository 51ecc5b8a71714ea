package io.outbox.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.outbox.OutboxMessage;
import io.outbox.spi.support.StoredMessages;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** Transactional enqueue, lease races, chunking and schema against PostgreSQL 15 at OUTBOX_TEST_POSTGRES_URL (default 127.0.0.1:5432/test). */
class PostgresRealServerJdbcTest extends JdbcDatabaseTestBase {

    @Override
    TestDatabase database() {
        return TestDatabase.postgres();
    }

    @Override
    JdbcDialect expectedDialect() {
        return JdbcDialect.POSTGRESQL;
    }

    /**
     * S1 in the time of a batch: once statistics are gathered, a bucket's batch is still read
     * through the (bucket, id) primary key, never by scanning an id order and filtering out the
     * other buckets' rows.
     */
    @Test
    void S1_aBatchIsReadThroughTheBucketIdKeyAfterAnalyze() throws SQLException {
        String prefix = TestDatabase.uniquePrefix();
        database().createTables(prefix);
        JdbcOutboxTables tables = JdbcOutboxTables.withPrefix(prefix);
        try (HikariDataSource pool = database().newPool(1)) {
            JdbcOutboxStore store = JdbcOutboxStore.builder(pool).tablePrefix(prefix).build();
            List<OutboxMessage> messages = IntStream.range(0, 40_000).mapToObj(i -> StoredMessages.rebuild(
                    UUID.randomUUID(), i % 8, "orders", ("k" + i).getBytes(StandardCharsets.UTF_8), new byte[100],
                    List.of(), null, Instant.parse("2030-01-01T00:00:00Z"))).toList();
            try (Connection c = pool.getConnection()) {
                c.setAutoCommit(false);
                store.writer().enqueue(c, messages);
                c.commit();
            }
            store.markPublished(3, store.nextBatch(3, 2_000));
            StringBuilder plan = new StringBuilder();
            try (Connection c = pool.getConnection()) {
                try (Statement analyze = c.createStatement()) {
                    analyze.execute("ANALYZE \"" + tables.messages() + "\"");
                }
                try (PreparedStatement explain = c.prepareStatement("EXPLAIN "
                        + new Sql(JdbcDialect.POSTGRESQL, tables).selectBatch)) {
                    explain.setInt(1, 3);
                    explain.setInt(2, 500);
                    try (ResultSet row = explain.executeQuery()) {
                        while (row.next()) {
                            plan.append(row.getString(1)).append('\n');
                        }
                    }
                }
            }
            assertThat(plan.toString()).as("plan").contains("Index Scan using " + tables.messagesIndex())
                    .doesNotContain("Filter:", "Sort");
            StringBuilder bounded = new StringBuilder();
            try (Connection c = pool.getConnection(); PreparedStatement explain = c.prepareStatement("EXPLAIN "
                    + new Sql(JdbcDialect.POSTGRESQL, tables).selectBatchWithin(0))) {
                explain.setInt(1, 3);
                explain.setInt(2, 500);
                explain.setLong(3, 4L << 20);
                try (ResultSet row = explain.executeQuery()) {
                    while (row.next()) {
                        bounded.append(row.getString(1)).append('\n');
                    }
                }
            }
            assertThat(bounded.toString()).as("the byte-bounded read's plan: one pass through the key, no join back")
                    .containsOnlyOnce("Index Scan using " + tables.messagesIndex()).containsOnlyOnce("WindowAgg")
                    .doesNotContain("Nested Loop", "Join", "Sort");
            assertThat(genericDeletePlan(pool, tables)).as("the delete's generic plan")
                    .containsPattern("Index Cond: \\(\\(bucket = \\$1\\) AND \\(id = ANY \\(\\$2\\)\\)\\)")
                    .doesNotContain("Filter:");
            assertThat(store.nextBatch(3, 5)).extracting(p -> p.message().messageId()).containsExactlyElementsOf(
                    IntStream.range(2_000, 2_005).mapToObj(i -> messages.get(8 * i + 3).messageId()).toList());
        } finally {
            database().dropTables(prefix);
        }
    }

    /** R2 in the time of a batch: the plan a prepared delete settles on seeks (bucket, id). */
    private static String genericDeletePlan(HikariDataSource pool, JdbcOutboxTables tables) throws SQLException {
        String delete = new Sql(JdbcDialect.POSTGRESQL, tables).deleteMessagesInArray()
                .replaceFirst("\\?", "\\$1").replaceFirst("\\?", "\\$2");
        StringBuilder plan = new StringBuilder();
        try (Connection c = pool.getConnection(); Statement sql = c.createStatement()) {
            sql.execute("SET plan_cache_mode = force_generic_plan");
            sql.execute("PREPARE outbox_delete (integer, bigint[]) AS " + delete);
            try (ResultSet row = sql.executeQuery("EXPLAIN EXECUTE outbox_delete (3, '{16003,16011}')")) {
                while (row.next()) {
                    plan.append(row.getString(1)).append('\n');
                }
            } finally {
                sql.execute("DEALLOCATE outbox_delete");
                sql.execute("RESET plan_cache_mode");
            }
        }
        return plan.toString();
    }
}
