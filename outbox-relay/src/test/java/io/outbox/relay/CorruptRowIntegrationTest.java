package io.outbox.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.OutboxMessage;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.spi.CorruptMessageException;
import io.outbox.spi.DeadLetter;
import io.outbox.store.jdbc.JdbcOutboxStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Rule R12 on PostgreSQL with a real broker: a row whose header blob cannot be decoded stays in
 * its bucket; the relay's other buckets drain at full speed meanwhile. The test prints the other
 * buckets' drain rate with and without the corrupt row.
 */
class CorruptRowIntegrationTest {

    private static final int BUCKETS = 8;
    private static final int MESSAGES = 8_000;
    private static final Duration WAIT = Duration.ofSeconds(180);

    @RegisterExtension
    static final KafkaBroker KAFKA = new KafkaBroker();

    private static PGSimpleDataSource dataSource() {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL(System.getenv().getOrDefault("OUTBOX_TEST_POSTGRES_URL", "jdbc:postgresql://127.0.0.1:5432/test"));
        ds.setUser(System.getenv().getOrDefault("OUTBOX_TEST_POSTGRES_USER", "postgres"));
        String password = System.getenv("OUTBOX_TEST_POSTGRES_PASSWORD");
        if (password != null) {
            ds.setPassword(password);
        }
        return ds;
    }

    private static RelayOptions options(String relayId, PoisonPolicy policy) {
        return RelayOptions.builder().relayId(relayId).bucketCount(BUCKETS).batchSize(100)
                .pollInterval(Duration.ofMillis(100)).errorBackoff(Duration.ofMillis(200))
                .maxErrorBackoff(Duration.ofSeconds(2)).poisonPolicy(policy).poisonMaxAttempts(2).build();
    }

    /** The outcome of one run: the other buckets' drain rate, and the bad message's id. */
    private record Run(double otherBucketsPerSecond, UUID bad, int badBucket, JdbcOutboxStore store, String prefix) {
    }

    private Run run(String name, boolean corrupt, PoisonPolicy policy) throws Exception {
        String prefix = "r12_" + name + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8) + "_";
        JdbcOutboxStore store = JdbcOutboxStore.builder(dataSource()).tablePrefix(prefix).build();
        store.createSchema();
        String topic = "corrupt-" + name;
        KAFKA.broker().createTopic(topic, BUCKETS);
        StringSerializer s = new StringSerializer();
        List<OutboxMessage> messages = new ArrayList<>();
        for (int i = 0; i < MESSAGES; i++) {
            messages.add(OutboxMessage.create(topic, "key-" + (i % 97), "value-" + i, s, s, BUCKETS));
        }
        try (Connection c = store.dataSource().getConnection()) {
            c.setAutoCommit(false);
            store.writer().enqueue(c, messages);
            c.commit();
        }
        OutboxMessage bad = messages.get(MESSAGES / 2);
        if (corrupt) {
            execute(store, "UPDATE \"" + prefix + "messages\" SET headers = ? WHERE message_id = ?", new byte[] {0x7f},
                    bad.messageId());
        }
        int others = (int) messages.stream().filter(m -> m.bucket() != bad.bucket()).count();
        try (KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(Map.of("bootstrap.servers",
                KAFKA.broker().bootstrapServers())).build();
             OutboxRelay relay = OutboxRelay.builder(store, publisher).options(options("r12-" + name, policy))
                     .build()) {
            long start = System.nanoTime();
            relay.start();
            await().atMost(WAIT).pollInterval(Duration.ofMillis(20)).until(() -> pendingOutside(store, prefix,
                    bad.bucket()) == 0);
            double seconds = (System.nanoTime() - start) / 1e9;
            double rate = others / seconds;
            if (policy == PoisonPolicy.DEAD_LETTER) {
                await().atMost(WAIT).until(() -> store.pendingMetrics(Duration.ofSeconds(5)).pendingCount() == 0);
            } else {
                Thread.sleep(1_000); // give the blocked bucket time to show it stays blocked
            }
            return new Run(rate, bad.messageId(), bad.bucket(), store, prefix);
        }
    }

    private static long pendingOutside(JdbcOutboxStore store, String prefix, int bucket) throws SQLException {
        try (Connection c = store.dataSource().getConnection();
             PreparedStatement st = c.prepareStatement("SELECT COUNT(*) FROM \"" + prefix + "messages\" WHERE bucket <> ?")) {
            st.setInt(1, bucket);
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private static void execute(JdbcOutboxStore store, String sql, byte[] blob, UUID id) throws SQLException {
        try (Connection c = store.dataSource().getConnection(); PreparedStatement st = c.prepareStatement(sql)) {
            st.setBytes(1, blob);
            st.setObject(2, id);
            assertThat(st.executeUpdate()).isEqualTo(1);
        }
    }

    private static void drop(Run run) throws SQLException {
        try (Connection c = run.store().dataSource().getConnection(); var st = c.createStatement()) {
            for (String table : List.of("messages", "leases", "relays", "messages_dead", "messages_failing")) {
                st.execute("DROP TABLE IF EXISTS \"" + run.prefix() + table + "\"");
            }
        }
    }

    @Test
    void r12_aCorruptRowStallsOnlyItsBucketAndTheOthersDrainAtFullSpeed() throws Exception {
        Run clean = run("clean", false, PoisonPolicy.BLOCK);
        Run blocked = run("blocked", true, PoisonPolicy.BLOCK);
        try {
            System.out.printf("R12 corrupt row: the other %d buckets drained at %.0f msg/s without it and %.0f msg/s "
                    + "with it (block)%n", BUCKETS - 1, clean.otherBucketsPerSecond(), blocked.otherBucketsPerSecond());
            assertThat(blocked.otherBucketsPerSecond()).as("other buckets' rate with a corrupt row, msg/s")
                    .isGreaterThan(clean.otherBucketsPerSecond() / 3);
            // block: the bad row is still pending at the head of its bucket.
            Throwable head = org.assertj.core.api.Assertions.catchThrowable(
                    () -> blocked.store().nextBatch(blocked.badBucket(), 1));
            assertThat(head).isInstanceOf(CorruptMessageException.class);
            assertThat(((CorruptMessageException) head).messageId()).isEqualTo(blocked.bad());
            assertThat(blocked.store().deadLetters().orElseThrow().deadLetters(null, 10)).isEmpty();
        } finally {
            drop(clean);
            drop(blocked);
        }
    }

    @Test
    void r12_withDeadLetterTheCorruptRowIsMovedWithItsBytesAndItsBucketDrains() throws Exception {
        Run run = run("dead", true, PoisonPolicy.DEAD_LETTER);
        try {
            System.out.printf("R12 corrupt row: the other %d buckets drained at %.0f msg/s with it (dead-letter)%n",
                    BUCKETS - 1, run.otherBucketsPerSecond());
            DeadLetter dead = run.store().deadLetters().orElseThrow().deadLetter(run.bad()).orElseThrow();
            assertThat(dead.failure().causeClass()).isEqualTo(CorruptMessageException.class.getName());
            assertThat(dead.failure().attempts()).isEqualTo(2);
            assertThat(dead.headers()).containsExactly(0x7f);
            assertThat(run.store().pendingMetrics(Duration.ofSeconds(5)).pendingCount()).isZero();
        } finally {
            drop(run);
        }
    }
}
