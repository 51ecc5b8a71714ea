package io.outbox.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.OutboxCommitNotifier;
import io.outbox.OutboxMessage;
import io.outbox.store.jdbc.JdbcOutboxStore;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.IllegalTransactionStateException;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The transactional {@link Outbox} on a real (H2) database: writes join the Spring transaction
 * (rule E4), the buckets written are handed over only after a commit (N1), never in auto-commit.
 */
class JdbcTransactionalOutboxTest {

    JdbcDataSource dataSource;
    JdbcOutboxStore store;
    List<int[]> notified;
    Outbox outbox;
    TransactionTemplate tx;
    JdbcTemplate jdbc;

    @BeforeEach
    void setUp() {
        dataSource = h2();
        store = JdbcOutboxStore.builder(dataSource).build();
        store.createSchema();
        notified = new CopyOnWriteArrayList<>();
        outbox = new JdbcTransactionalOutbox(dataSource, store.writer(), 8, notified::add);
        tx = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
        jdbc = new JdbcTemplate(dataSource);
    }

    static JdbcDataSource h2() {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL("jdbc:h2:mem:tx" + UUID.randomUUID().toString().replace("-", "") + ";DB_CLOSE_DELAY=-1");
        return ds;
    }

    int pending() {
        return jdbc.queryForObject("SELECT COUNT(*) FROM \"outbox_messages\"", Integer.class);
    }

    @Test
    void n1_commitHandsTheBucketsWrittenOverOnce() {
        List<OutboxMessage> written = tx.execute(s -> List.of(outbox.enqueue("t", "a", "1"),
                outbox.enqueue("t", "b", "2"), outbox.enqueue("t", "a", "3")));
        assertThat(pending()).isEqualTo(3);
        assertThat(notified).hasSize(1);
        assertThat(notified.get(0)).containsExactly(
                written.stream().mapToInt(OutboxMessage::bucket).distinct().sorted().toArray());
    }

    @Test
    void n1_rollbackWritesAndNotifiesNothing() {
        tx.executeWithoutResult(s -> {
            outbox.enqueue("t", "a", "1");
            s.setRollbackOnly();
        });
        assertThatThrownBy(() -> tx.executeWithoutResult(s -> {
            outbox.enqueue("t", "a", "2");
            throw new IllegalStateException("business failure after enqueue");
        })).hasMessage("business failure after enqueue");
        assertThat(pending()).isZero();
        assertThat(notified).isEmpty();
    }

    @Test
    void e4_outsideATransactionFails_nothingWritten() {
        assertThatThrownBy(() -> outbox.enqueue("t", "a", "1"))
                .isInstanceOf(IllegalTransactionStateException.class)
                .hasMessageContaining("none is active");
        assertThat(pending()).isZero();
        assertThat(notified).isEmpty();
    }

    @Test
    void e4_aTransactionOnAnotherDataSourceFails_neverAutoCommit() {
        TransactionTemplate other = new TransactionTemplate(new DataSourceTransactionManager(h2()));
        assertThatThrownBy(() -> other.executeWithoutResult(s -> outbox.enqueue("t", "a", "1")))
                .isInstanceOf(IllegalTransactionStateException.class)
                .hasMessageContaining("not one on the outbox's DataSource");
        assertThat(pending()).isZero();
    }

    @Test
    void n1_innerRequiresNewNotifiesOnItsOwnCommit_outerRollbackNotifiesNothing() {
        TransactionTemplate inner = new TransactionTemplate(tx.getTransactionManager());
        inner.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
        int[] innerBucket = new int[1];
        tx.executeWithoutResult(s -> {
            outbox.enqueue("t", "outer", "1");
            inner.executeWithoutResult(i -> innerBucket[0] = outbox.enqueue("t", "inner", "2").bucket());
            s.setRollbackOnly();
        });
        assertThat(pending()).isEqualTo(1);
        assertThat(notified).hasSize(1);
        assertThat(notified.get(0)).containsExactly(innerBucket[0]);
    }

    @Test
    void n5_aNotificationPutIntoTheTransactionCommitsWithIt_thenOnlyLocalRelaysAreTold() {
        jdbc.execute("CREATE TABLE notes (buckets VARCHAR(100))");
        List<int[]> local = new CopyOnWriteArrayList<>();
        Outbox inTransaction = new JdbcTransactionalOutbox(dataSource, store.writer(), 8, new OutboxCommitNotifier() {
            @Override
            public void committed(int[] buckets) {
                notified.add(buckets);
            }

            @Override
            public boolean beforeCommit(java.sql.Connection connection, int[] buckets) throws java.sql.SQLException {
                try (var st = connection.prepareStatement("INSERT INTO notes VALUES (?)")) {
                    st.setString(1, java.util.Arrays.toString(buckets));
                    st.executeUpdate();
                }
                return true;
            }

            @Override
            public void committedLocally(int[] buckets) {
                local.add(buckets);
            }
        });
        int bucket = tx.execute(s -> inTransaction.enqueue("t", "a", "1").bucket());
        assertThat(local).hasSize(1);
        assertThat(local.get(0)).containsExactly(bucket);
        assertThat(notified).as("the commit told the other processes: committed() is not called").isEmpty();
        assertThat(jdbc.queryForList("SELECT buckets FROM notes", String.class)).containsExactly("[" + bucket + "]");

        tx.executeWithoutResult(s -> {
            inTransaction.enqueue("t", "a", "2");
            s.setRollbackOnly();
        });
        assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM notes", Integer.class)).isEqualTo(1);
        assertThat(local).hasSize(1);
    }

    @Test
    void aMessageOfAnotherBucketCountIsRefused() {
        OutboxMessage m = null;
        for (int i = 0; m == null || m.bucket() < 8; i++) {
            m = OutboxMessage.create("t", "k" + i, "v", new org.apache.kafka.common.serialization.StringSerializer(),
                    new org.apache.kafka.common.serialization.StringSerializer(), 1024);
        }
        OutboxMessage other = m;
        assertThatThrownBy(() -> tx.executeWithoutResult(s -> outbox.enqueue(other)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("outbox.bucket-count is 8");
        assertThat(pending()).isZero();
    }
}
