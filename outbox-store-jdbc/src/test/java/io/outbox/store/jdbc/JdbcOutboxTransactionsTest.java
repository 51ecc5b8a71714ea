package io.outbox.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.OutboxCommitNotifier;
import io.outbox.OutboxMessage;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The commit-then-notify helper (N1) on PostgreSQL 15 at OUTBOX_TEST_POSTGRES_URL. */
class JdbcOutboxTransactionsTest {

    private static final StringSerializer STRING = new StringSerializer();
    private final TestDatabase database = TestDatabase.postgres();
    private final List<String> events = new CopyOnWriteArrayList<>();
    private String prefix;
    private JdbcOutboxWriter writer;

    /** Records what it is told, and whether the transaction had committed by then. */
    private final OutboxCommitNotifier recording = new OutboxCommitNotifier() {
        @Override
        public void committed(int[] buckets) {
            events.add("committed " + java.util.Arrays.toString(buckets) + " rows=" + rows());
        }

        @Override
        public boolean beforeCommit(Connection connection, int[] buckets) {
            events.add("beforeCommit " + java.util.Arrays.toString(buckets) + " rows=" + rows());
            return false;
        }
    };

    @BeforeEach
    void setUp() throws SQLException {
        database.requireReachable();
        prefix = TestDatabase.uniquePrefix();
        database.createTables(prefix);
        writer = new JdbcOutboxWriter(JdbcOutboxTables.withPrefix(prefix), JdbcOutboxStore.DEFAULT_MAX_PAYLOAD_BYTES, null);
    }

    @AfterEach
    void tearDown() throws SQLException {
        database.dropTables(prefix);
    }

    /** Rows visible to another connection: committed rows only. */
    private long rows() {
        try (Connection c = database.connect(); Statement s = c.createStatement();
             var rs = s.executeQuery("SELECT count(*) FROM " + prefix + "messages")) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static OutboxMessage message(String key) {
        return OutboxMessage.create("orders", key, "v", STRING, STRING, 8);
    }

    @Test
    void n1_notifiesTheBucketsOnceAfterTheCommitAndRestoresAutoCommit() throws Exception {
        OutboxMessage a = message("a");
        OutboxMessage b = message("b");
        try (Connection c = database.connect()) {
            String result = JdbcOutboxTransactions.of(writer, recording).call(c, outbox -> {
                outbox.enqueue(a, b);
                return "done";
            });
            assertThat(result).isEqualTo("done");
            assertThat(c.getAutoCommit()).isTrue();
        }
        int[] expected = java.util.stream.IntStream.of(a.bucket(), b.bucket()).distinct().toArray();
        assertThat(events).containsExactly("beforeCommit " + java.util.Arrays.toString(expected) + " rows=0",
                "committed " + java.util.Arrays.toString(expected) + " rows=2");
    }

    @Test
    void n1_aFailingWorkRollsBackAndNotifiesNothing() throws Exception {
        try (Connection c = database.connect()) {
            assertThatThrownBy(() -> JdbcOutboxTransactions.of(writer, recording).run(c, outbox -> {
                outbox.enqueue(message("a"));
                throw new IllegalStateException("business rule broken");
            })).hasMessage("business rule broken");
        }
        assertThat(events).isEmpty();
        assertThat(rows()).isZero();
    }

    @Test
    void n1_aFailedCommitNotifiesNothing() throws Exception {
        try (Connection c = database.connect()) {
            assertThatThrownBy(() -> JdbcOutboxTransactions.of(writer, recording).run(c, outbox -> {
                outbox.enqueue(message("a"));
                try (Statement s = c.createStatement()) {
                    s.execute("SELECT 1/0"); // the transaction is now aborted: PostgreSQL refuses the commit's work
                } catch (SQLException expected) {
                    // swallowed by a careless caller: the commit must still not notify
                }
                return null;
            })).isInstanceOf(SQLException.class);
        }
        assertThat(events).noneMatch(e -> e.startsWith("committed"));
        assertThat(rows()).isZero();
    }

    @Test
    void n1_noMessageNoNotification() throws Exception {
        try (Connection c = database.connect()) {
            JdbcOutboxTransactions.of(writer, recording).run(c, outbox -> null);
        }
        assertThat(events).isEmpty();
    }
}
