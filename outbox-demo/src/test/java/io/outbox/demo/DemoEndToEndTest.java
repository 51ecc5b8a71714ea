package io.outbox.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.demo.DeliveryChecker.CheckResult;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The demo end to end, as {@code ./demo} runs it, against every store with a real Kafka broker:
 * orders placed by concurrent writers, relayed by relays in the process, read back and checked.
 * Every run must deliver every committed message (lost 0) and keep each customer's orders in
 * placement order (order violations 0), and exit with status 0.
 *
 * <p>The first test is a newcomer's first run: no options at all (embedded H2, its own embedded
 * broker). The others share one in-process broker ({@code --bootstrap-servers}) and need the
 * servers {@code scripts/test.sh} starts. Order counts are kept small so the class stays within
 * a few minutes on a loaded 2-core machine; the emulators are slower per transaction than the
 * real databases (jongodb: tens of orders per second).
 */
class DemoEndToEndTest {

    /** What a run printed and returned. */
    private record Outcome(int status, DemoSummary summary, String out, String err) {
    }

    private static Outcome demo(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        OutboxDemo app = new OutboxDemo();
        List<String> all = new ArrayList<>(List.of(args));
        all.add("--no-progress");
        int status = app.execute(new PrintWriter(out), new PrintWriter(err), all.toArray(String[]::new));
        return new Outcome(status, app.runCommand().summary(), out.toString(), err.toString());
    }

    private static void assertDelivered(Outcome outcome, int orders) {
        assertThat(outcome.summary()).as("the run produced a summary; stderr:%n%s", outcome.err()).isNotNull();
        CheckResult result = outcome.summary().result();
        String context = String.format("%nstdout:%n%s%nstderr:%n%s", outcome.out(), outcome.err());
        assertThat(result.enqueued()).as("enqueued" + context).isEqualTo(orders);
        assertThat(result.lost()).as("lost" + context).isZero();
        assertThat(result.orderViolations()).as("order violations" + context).isZero();
        assertThat(result.delivered()).as("delivered" + context).isGreaterThanOrEqualTo(result.enqueued());
        assertThat(result.duplicates()).isEqualTo(result.delivered() - result.enqueued());
        assertThat(result.p99Millis()).isNotNaN();
        assertThat(outcome.summary().publishedByRelay().values().stream().mapToLong(Long::longValue).sum())
                .as("the relays' published counts cover every delivered message" + context)
                .isGreaterThanOrEqualTo(result.enqueued());
        assertThat(outcome.status()).as("exit status" + context).isZero();
        assertThat(outcome.out()).contains("enqueued", "delivered", "duplicates", "lost", "order violations",
                "throughput", "latency p50", "latency p95", "latency p99", "OK: every committed order was delivered");
    }

    @Test
    void withoutOptionsItRunsOnEmbeddedH2AndItsOwnBroker() {
        Outcome outcome = demo("--orders", "3000");

        assertDelivered(outcome, 3000);
        assertThat(outcome.summary().store()).contains("H2", "embedded");
        assertThat(outcome.summary().kafka()).startsWith("embedded broker");
        assertThat(outcome.summary().publishedByRelay()).as("two relays by default").hasSize(2);
    }

    @Test
    void k7_withTransactionsTheRelaysPublishATransactionPerBatchAndAReadCommittedCheckerSeesOrder() {
        Outcome outcome = demo("--bootstrap-servers", TestServers.kafka(), "--orders", "2000", "--customers", "50",
                "--relays", "3", "--transactions");

        assertDelivered(outcome, 2000);
        assertThat(outcome.summary().settings().transactions()).isTrue();
        assertThat(outcome.out()).contains("Kafka transactions (a transaction per batch), checker reads read_committed");
        assertThat(outcome.err()).contains("Kafka transactions, read_committed checker");
    }

    @Test
    void onPostgresql() throws Exception {
        String url = TestServers.required("OUTBOX_TEST_POSTGRES_URL", "PostgreSQL");
        String user = TestServers.required("OUTBOX_TEST_POSTGRES_USER", "PostgreSQL");

        Outcome outcome = demo("--jdbc-url", url, "--jdbc-user", user, "--bootstrap-servers", TestServers.kafka(),
                "--orders", "2000", "--customers", "50", "--relays", "3");

        assertDelivered(outcome, 2000);
        assertThat(outcome.summary().store()).contains("PostgreSQL");
        try (Connection c = DriverManager.getConnection(url, user, System.getenv("OUTBOX_TEST_POSTGRES_PASSWORD"));
             PreparedStatement tables = c.prepareStatement(
                     "SELECT count(*) FROM information_schema.tables WHERE table_name LIKE ?")) {
            tables.setString(1, "demo\\_" + outcome.summary().runId() + "\\_%");
            try (ResultSet count = tables.executeQuery()) {
                count.next();
                assertThat(count.getInt(1)).as("the run's tables are dropped at the end").isZero();
            }
        }
    }

    @Test
    void onMariadb() {
        String url = TestServers.required("OUTBOX_TEST_MARIADB_URL", "MariaDB");
        String user = TestServers.required("OUTBOX_TEST_MARIADB_USER", "MariaDB");

        Outcome outcome = demo("--jdbc-url", url, "--jdbc-user", user, "--bootstrap-servers", TestServers.kafka(),
                "--orders", "1000");

        assertDelivered(outcome, 1000);
        assertThat(outcome.summary().store()).contains("MariaDB");
    }

    @Test
    void onDynoxide() {
        String endpoint = TestServers.required("OUTBOX_TEST_DYNAMODB_ENDPOINT", "the dynoxide DynamoDB emulator");

        Outcome outcome = demo("--dynamodb-endpoint", endpoint, "--bootstrap-servers", TestServers.kafka(),
                "--orders", "1000");

        assertDelivered(outcome, 1000);
        assertThat(outcome.summary().store()).startsWith("dynamodb: " + endpoint);
    }

    /**
     * jongodb has transactions but its conditional updates are not atomic across connections, so
     * one writer and one relay. Its transactions also bring back documents deleted outside them
     * while they ran (the relay's deletes), so repeats are expected here and allowed.
     */
    @Test
    void onJongodbWithOneRelayAndOneWriter() {
        String uri = TestServers.required("OUTBOX_TEST_JONGODB_URI", "the jongodb MongoDB emulator");

        Outcome outcome = demo("--mongodb-uri", uri, "--mongodb-database", "outbox_demo_test", "--relays", "1",
                "--writers", "1", "--bootstrap-servers", TestServers.kafka(), "--orders", "300");

        assertDelivered(outcome, 300);
        assertThat(outcome.summary().store()).contains("jongodb");
        assertThat(outcome.err()).doesNotContain("warning: this MongoDB server is the jongodb emulator");
    }
}
