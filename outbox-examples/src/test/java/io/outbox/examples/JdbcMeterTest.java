package io.outbox.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
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

    @Test
    void noBackendPidsOutsidePostgreSql() throws Exception {
        try (Connection c = dataSource.getConnection()) {
            assertThat(c.isValid(1)).isTrue();
        }
        assertThat(meter.backendPids()).isEmpty();
        assertThat(meter.counts().statements()).isZero();
    }
}
