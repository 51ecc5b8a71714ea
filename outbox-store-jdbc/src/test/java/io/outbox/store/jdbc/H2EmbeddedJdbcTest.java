package io.outbox.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import io.outbox.OutboxMessage;
import io.outbox.spi.CorruptMessageException;
import io.outbox.spi.Pending;
import io.outbox.spi.support.StoredMessages;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.IntFunction;
import java.util.function.IntUnaryOperator;
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
            List<OutboxMessage> messages = enqueued(pool, store, 2_000, i -> i % 2, i -> new byte[10]);
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
            assertThat(store.nextBatch(1, 10)).extracting(p -> p.message().messageId()).containsExactlyElementsOf(
                    IntStream.range(0, 10).mapToObj(i -> messages.get(2 * i + 1).messageId()).toList());
        } finally {
            database().dropTables(prefix);
        }
    }

    /**
     * C5 on H2: the read ahead skips the rows in flight by row id before decoding them (a row in
     * flight that no longer decodes is not read again, one not in flight fails as in nextBatch),
     * leaves out ids in flight wherever they are, keeps the limit and order, and takes more ids
     * than one statement would name.
     */
    @Test
    void C5_theReadAheadSkipsTheRowsInFlightWithoutDecodingThem() throws SQLException {
        String prefix = TestDatabase.uniquePrefix();
        database().createTables(prefix);
        JdbcOutboxTables tables = JdbcOutboxTables.withPrefix(prefix);
        try (HikariDataSource pool = database().newPool(1)) {
            JdbcOutboxStore store = JdbcOutboxStore.builder(pool).tablePrefix(prefix).build();
            List<OutboxMessage> messages = enqueued(pool, store, 2 * JdbcOutboxStore.DELETE_CHUNK + 203, i -> 5,
                    i -> new byte[] {(byte) i});
            List<Pending> first = store.nextBatch(5, JdbcOutboxStore.DELETE_CHUNK + 200);
            try (Connection c = pool.getConnection();
                 PreparedStatement corrupt = c.prepareStatement("UPDATE " + JdbcDialect.H2.qualified(tables,
                         tables.messages()) + " SET " + JdbcDialect.H2.quote("headers") + " = X'07' WHERE "
                         + JdbcDialect.H2.quote("id") + " = ?")) {
                corrupt.setLong(1, ((JdbcOutboxStore.Row) first.get(3).handle()).id());
                assertThat(corrupt.executeUpdate()).isOne();
            }

            assertThat(store.nextBatchExcluding(5, first, 500)).extracting(p -> p.message().messageId())
                    .containsExactlyElementsOf(messages.subList(700, 1_200).stream().map(OutboxMessage::messageId)
                            .toList());
            List<Pending> evenFrom4 = IntStream.range(4, 40).filter(i -> i % 2 == 0).mapToObj(first::get)
                    .toList();
            List<Pending> withTheUndecodable = new ArrayList<>(evenFrom4);
            withTheUndecodable.add(first.get(3));
            assertThat(store.nextBatchExcluding(5, withTheUndecodable, 6)).extracting(p -> p.message().messageId())
                    .as("rows 0-2, then the odd rows from 5").containsExactly(messages.get(0).messageId(),
                            messages.get(1).messageId(), messages.get(2).messageId(), messages.get(5).messageId(),
                            messages.get(7).messageId(), messages.get(9).messageId());
            assertThatThrownBy(() -> store.nextBatchExcluding(5, evenFrom4, 6)).as("row 3 is not in flight")
                    .isInstanceOfSatisfying(CorruptMessageException.class, e -> assertThat(e.messagesBefore())
                            .extracting(p -> p.message().messageId()).containsExactly(messages.get(0).messageId(),
                                    messages.get(1).messageId(), messages.get(2).messageId()));
        } finally {
            database().dropTables(prefix);
        }
    }

    /** {@code count} messages, message i in bucket {@code bucket(i)} with value {@code value(i)}, enqueued in one transaction. */
    private static List<OutboxMessage> enqueued(HikariDataSource pool, JdbcOutboxStore store, int count,
                                                IntUnaryOperator bucket, IntFunction<byte[]> value) throws SQLException {
        List<OutboxMessage> messages = IntStream.range(0, count).mapToObj(i -> StoredMessages.rebuild(UUID.randomUUID(),
                bucket.applyAsInt(i), "orders", ("k" + i).getBytes(StandardCharsets.UTF_8), value.apply(i), List.of(),
                null, Instant.parse("2030-01-01T00:00:00Z"))).toList();
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(false);
            store.writer().enqueue(c, messages);
            c.commit();
        }
        return messages;
    }
}
