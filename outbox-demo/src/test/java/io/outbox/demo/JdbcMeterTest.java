package io.outbox.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.spi.CloseableOutboxStore;
import io.outbox.spi.LeaseRequest;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** The bench's count of statements, rows and bytes a JDBC store asks of its database. */
class JdbcMeterTest {

    private final JdbcMeter meter = new JdbcMeter(List.of("m_messages", "m_leases"));
    private final DataSource dataSource = meter.dataSource("jdbc:h2:mem:meter-" + UUID.randomUUID()
            + ";DB_CLOSE_DELAY=-1", null, null);

    @Test
    void everyExecutionCountsOnceByKeywordAndTableAndReadsCountRowsAndBytes() throws Exception {
        try (Connection c = dataSource.getConnection()) {
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE m_messages (id BIGINT, v VARBINARY(100), t VARCHAR(20), p INT)");
            }
            JdbcMeter.Counts afterCreate = meter.counts();
            try (PreparedStatement insert = c.prepareStatement("INSERT INTO m_messages VALUES (?, ?, ?, ?)")) {
                for (int i = 0; i < 3; i++) {
                    insert.setLong(1, i);
                    insert.setBytes(2, new byte[10 * (i + 1)]);
                    insert.setString(3, "topic");
                    insert.setInt(4, i);
                    insert.addBatch();
                }
                insert.executeBatch(); // one call (round trip) of three statements
            }
            try (PreparedStatement select = c.prepareStatement("SELECT id, v, t, p FROM m_messages ORDER BY id")) {
                try (ResultSet r = select.executeQuery()) {
                    while (r.next()) {
                        r.getLong(1);
                        r.getBytes(2);
                        r.getString(3);
                        r.getInt(4);
                        r.wasNull();
                    }
                }
            }

            JdbcMeter.Counts counts = meter.counts();
            assertThat(counts.statements()).isEqualTo(5);
            assertThat(counts.calls()).isEqualTo(3);
            assertThat(counts.rows()).isEqualTo(3);
            assertThat(counts.bytes()).isEqualTo(3 * (8 + 5 + 4) + 10 + 20 + 30);
            assertThat(counts.byKind()).isEqualTo(Map.of("CREATE messages", 1L, "INSERT messages", 3L,
                    "SELECT messages", 1L));
            JdbcMeter.Counts phase = counts.minus(afterCreate);
            assertThat(phase.statements()).isEqualTo(4);
            assertThat(phase.calls()).isEqualTo(2);
            assertThat(phase.byKind()).isEqualTo(Map.of("INSERT messages", 3L, "SELECT messages", 1L));
            assertThat(phase.describeKinds(4, "per message"))
                    .isEqualTo("0.7500 INSERT messages, 0.2500 SELECT messages per message");
        }
    }

    @Test
    void aStatementIsNamedAfterItsKeywordAndTheFirstOutboxTableItNames() {
        assertThat(meter.kind("(SELECT bucket FROM m_messages WHERE bucket = ? LIMIT 1) UNION ALL (SELECT ...)"))
                .isEqualTo("SELECT messages");
        assertThat(meter.kind("update m_leases set owner = ? where bucket in (select bucket from m_messages)"))
                .isEqualTo("UPDATE leases");
        assertThat(meter.kind("SELECT 1")).isEqualTo("SELECT other");
    }

    @Test
    void onPostgreSqlEachConnectionsBackendIsRecordedWithoutCountingTheQueryThatFindsIt() throws Exception {
        String url = TestServers.required("OUTBOX_TEST_POSTGRES_URL", "PostgreSQL");
        String user = TestServers.required("OUTBOX_TEST_POSTGRES_USER", "PostgreSQL");
        JdbcMeter postgres = new JdbcMeter(List.of());
        try (Connection c = postgres.dataSource(url, user, null).getConnection();
             Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT pg_backend_pid()")) {
            r.next();
            assertThat(postgres.backendPids()).containsExactly(r.getLong(1));
            assertThat(postgres.counts().statements()).isEqualTo(1);
            assertThat(postgres.counts().byKind()).isEqualTo(Map.of("SELECT other", 1L));
        }
    }

    /**
     * The JDBC store sends the keeps (or claims) of one acquisition as one batch, and the lease rows a first
     * acquisition creates as another: one call each, a statement per bucket.
     */
    @Test
    void theLeaseWritesOfOneAcquisitionAreOneCall() throws Exception {
        String prefix = "meter_" + UUID.randomUUID().toString().substring(0, 8) + "_";
        try (JdbcDemoDatabase database = new JdbcDemoDatabase("jdbc:h2:mem:" + prefix + ";DB_CLOSE_DELAY=-1", null,
                null, true, prefix, 2)) {
            database.createSchema();
            JdbcMeter counted = new JdbcMeter(database.tableNames());
            try (CloseableOutboxStore store = database.openMeteredRelayStore(1, counted)) {
                assertThat(store.acquireBucketLeases(LeaseRequest.of("relay-1", 8, Duration.ofSeconds(30))))
                        .containsExactly(0, 1, 2, 3, 4, 5, 6, 7); // 8 claims of free leases
                JdbcMeter.Counts claimed = counted.counts();
                assertThat(store.acquireBucketLeases(new LeaseRequest("relay-1", 8, Duration.ofSeconds(30),
                        List.of(0, 1, 2, 3, 4, 5, 6, 7)))).hasSize(8); // 8 keeps
                JdbcMeter.Counts kept = counted.counts().minus(claimed);

                assertThat(claimed.byKind()).containsEntry("MERGE leases", 8L).containsEntry("UPDATE leases", 8L);
                assertThat(kept.byKind()).containsEntry("UPDATE leases", 8L);
                // Every other statement of an acquisition is one call; the 8 updates are one more, and
                // on the first acquisition the 8 lease rows are created if absent (MERGE on H2) in one more.
                assertThat(claimed.statements() - claimed.calls()).isEqualTo(14);
                assertThat(kept.statements() - kept.calls()).isEqualTo(7);
                // Heartbeat, stray-bucket probe (S8), heartbeats, leases, the keeps, the read-back.
                assertThat(kept.calls()).isEqualTo(6);
                assertThat(kept.statements()).isEqualTo(13);
            }
        }
    }

    @Test
    void noBackendPidsOutsidePostgreSql() throws Exception {
        try (Connection c = dataSource.getConnection()) {
            assertThat(c.isValid(1)).isTrue();
        }
        assertThat(meter.backendPids()).isEmpty();
        assertThat(meter.counts().statements()).isZero();
    }
}
