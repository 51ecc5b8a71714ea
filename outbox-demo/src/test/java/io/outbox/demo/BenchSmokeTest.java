package io.outbox.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.GlobalOpenTelemetry;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

/** The benchmark runs and reports both rates; no threshold (timings on a shared build machine mean little). */
class BenchSmokeTest {

    @Test
    void benchPrintsTheRelayRateThePlainProducerRateAndTheirRatio() {
        assertThat(bench("--messages", "2000", "--warmup-messages", "500", "--runs", "1", "--customers", "50",
                "--bootstrap-servers", TestServers.kafka(), "--no-progress"))
                .contains("relay msg/s", "plain producer msg/s", "ratio", "warm-up", "run 1", "median")
                .contains("2,000 messages per run, 1,024-byte values")
                .contains("store concurrency 4", "relays and plain producer alike: acks=all, enable.idempotence=true")
                .containsPattern("run 1 +[\\d,]+ +[\\d,]+ +[\\d,]+ +\\d+\\.\\d\\d +\\d+\\.\\d\\d / \\d+\\.\\d\\d / \\d+\\.\\d\\d")
                .contains("store threads were busy")
                // the store alone drains the same 2,000 messages again, without a broker
                .containsPattern("warm-up +[\\d,]+ +\\d+ / - / - +-?\\d+ +[\\d.]+ / [\\d.]+ / [\\d.]+ +[\\d.]+\\n")
                .containsPattern("run 1 +[\\d,]+ +\\d+ / - / - +-?\\d+ +[\\d.]+ / [\\d.]+ / [\\d.]+ +[\\d.]+\\n")
                .containsPattern("store alone msg/s +[\\d,]+ \\(")
                .doesNotContain("transactional msg/s");
    }

    @Test
    void withTracingTheMessagesCarryATraceparentAndSpansAreExported_withoutItNoSdk() {
        String off = bench("--messages", "1000", "--warmup-messages", "0", "--runs", "1", "--customers", "50",
                "--bootstrap-servers", TestServers.kafka(), "--no-progress", "--no-store-alone");
        assertThat(off).contains("tracing: off (no OpenTelemetry SDK; the API's no-op)");
        String on;
        GlobalOpenTelemetry.resetForTest(); // the run before fixed the global as the no-op when it first read it
        try {
            on = bench("--messages", "1000", "--warmup-messages", "0", "--runs", "1", "--customers", "50",
                    "--bootstrap-servers", TestServers.kafka(), "--no-progress", "--no-store-alone", "--tracing");
        } finally {
            GlobalOpenTelemetry.resetForTest();
        }
        // 1,000 request spans and at least one PRODUCER span, through a queue of 2,048
        assertThat(Long.parseLong(figure(on, "dropping exporter; (\\d+) spans exported"))).isGreaterThan(1000);
        String bytes = "bytes read per message, relay +([\\d,.]+) \\(";
        assertThat(Double.parseDouble(figure(on, bytes)) - Double.parseDouble(figure(off, bytes)))
                .as("each record carries a traceparent").isGreaterThan(60);
    }

    private static String figure(String text, String regex) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(regex).matcher(text);
        assertThat(m.find()).as("%s in:%n%s", regex, text).isTrue();
        return m.group(1).replace(",", "");
    }

    @Test
    void withNoStoreAloneThePhaseIsLeftOut() {
        assertThat(bench("--messages", "1000", "--warmup-messages", "0", "--runs", "1", "--customers", "50",
                "--bootstrap-servers", TestServers.kafka(), "--no-progress", "--no-store-alone"))
                .contains("relay msg/s").doesNotContain("store alone", "ceiling");
    }

    @Test
    void benchPrintsCpuPerThousandMessagesDatabaseWorkPerMessageMediansWithRangesAndTheLoadAverage() {
        assertThat(bench("--messages", "2000", "--warmup-messages", "0", "--runs", "2", "--customers", "50",
                "--bootstrap-servers", TestServers.kafka(), "--no-progress"))
                .containsPattern("machine +load average \\d+\\.\\d\\d \\d+\\.\\d\\d \\d+\\.\\d\\d before, "
                        + "\\d+\\.\\d\\d \\d+\\.\\d\\d \\d+\\.\\d\\d after")
                // The broker listens in this test's own JVM (so does H2): both counted in the bench process.
                .contains("broker: listening in the bench process: counted in the bench process", "database: H2 in this process: counted in the bench process")
                .containsPattern("run 2 +\\d+ / - / - +\\d+ / - / - +\\d+\\.\\d\\d")
                .containsPattern("run 2 +\\d\\.\\d{4} +\\d\\.\\d{4} +\\d\\.\\d{3} +1,?\\d{3}\\.\\d   .*SELECT messages")
                .containsPattern("over 2 run\\(s\\), median \\(lowest-highest\\)")
                .containsPattern("relay msg/s +[\\d,]+ \\([\\d,]+-[\\d,]+\\)")
                .containsPattern("bench CPU ms per 1,000 messages, relay +\\d+ \\(\\d+-\\d+\\)")
                .containsPattern("bench CPU per message, relay / plain +\\d+\\.\\d\\d \\(")
                .containsPattern("run 2 +\\d+ / \\d+ / \\d+ / -?\\d+ +\\d+ / \\d+ / \\d+ / -?\\d+ +-?\\d+\\.\\d\\d")
                .containsPattern("bench JIT compiler CPU ms per 1,000, relay +\\d+ \\(\\d+-\\d+\\)")
                .containsPattern("bench GC CPU ms per 1,000 messages, plain +\\d+ \\(\\d+-\\d+\\)")
                .containsPattern("bench CPU less JIT and GC, relay / plain +-?\\d+\\.\\d\\d \\(")
                .containsPattern("statements per message, relay +0\\.\\d{4} \\(")
                .containsPattern("bytes read per message, relay +1,\\d{3}\\.\\d \\(")
                // the broker and H2 are in this process: every figure is in the bench's, so the sums are printed
                .containsPattern("run 2 +[\\d,]+ +\\d+ / - / - +-?\\d+ +\\d\\.\\d\\d / \\d\\.\\d\\d / \\d\\.\\d\\d +\\d+\\.\\d\\d\\n")
                .containsPattern("ratio ceiling on \\d+ processors +\\d+\\.\\d\\d \\(")
                .doesNotContain("warm-up");
    }

    @Test
    void withBrokerPidTheBrokersCpuIsReadForBothPhases() {
        String pid = Long.toString(ProcessHandle.current().pid()); // the test broker runs in this JVM

        assertThat(bench("--messages", "1000", "--warmup-messages", "0", "--runs", "1", "--customers", "50",
                "--bootstrap-servers", TestServers.kafka(), "--no-progress", "--broker-pid", pid))
                .contains("broker: broker process " + pid + " (--broker-pid)")
                .containsPattern("run 1 +\\d+ / \\d+ / - +\\d+ / \\d+ / -")
                .containsPattern("broker CPU ms per 1,000 messages, plain +\\d+ \\(\\d+-\\d+\\)");
    }

    @Test
    void withNoMeterTheJdbcCallsAreNotCounted() {
        assertThat(bench("--messages", "1000", "--warmup-messages", "0", "--runs", "1", "--customers", "50",
                "--bootstrap-servers", TestServers.kafka(), "--no-progress", "--no-meter"))
                .contains("prefetch on, JDBC calls not counted")
                .containsPattern("bench CPU ms per 1,000 messages, relay +\\d+ \\(")
                .doesNotContain("statements per message", "relays' database work per message");
    }

    @Test
    void aPidOfNoProcessIsRefusedNamingTheOption() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();

        int status = new OutboxDemo().execute(new PrintWriter(out), new PrintWriter(err), "bench",
                "--db-pid", "0");

        assertThat(status).isEqualTo(2);
        assertThat(err.toString()).contains("--db-pid 0: no such process on this machine");
    }

    @Test
    void onPostgresqlTheRelaysBackendsCpuIsRead() {
        String url = TestServers.required("OUTBOX_TEST_POSTGRES_URL", "PostgreSQL");
        String user = TestServers.required("OUTBOX_TEST_POSTGRES_USER", "PostgreSQL");

        assertThat(bench("--jdbc-url", url, "--jdbc-user", user, "--messages", "2000", "--warmup-messages", "0",
                "--runs", "1", "--customers", "50", "--bootstrap-servers", TestServers.kafka(), "--no-progress"))
                .contains("database: PostgreSQL backends of the relays' connections")
                .containsPattern("run 1 +\\d+ / - / \\d+ +\\d+ / - / -")
                .containsPattern("database CPU ms per 1,000 messages, relay +\\d+ \\(")
                // the store alone's own connections' backends are read too
                .containsPattern("run 1 +[\\d,]+ +\\d+ / - / \\d+ +")
                .containsPattern("store alone database CPU ms per 1,000 +\\d+ \\(")
                .containsPattern("statements per message, relay +0\\.\\d{4} \\(");
    }

    @Test
    void withTransactionsTheBenchPrintsTheTransactionalRateBesideTheDefaultModes() {
        assertThat(bench("--messages", "2000", "--warmup-messages", "500", "--runs", "1", "--customers", "50",
                "--bootstrap-servers", TestServers.kafka(), "--no-progress", "--transactions"))
                .contains("relay msg/s", "plain producer msg/s", "transactional msg/s", "of the default mode")
                .containsPattern("run 1 +[\\d,]+ +\\d+\\.\\d\\d +\\d+\\.\\d\\d")
                .containsPattern("transactional / default mode: median ratio \\d+\\.\\d\\d over 1 run")
                .contains("transactional / plain producer: median ratio");
    }

    /** Runs {@code demo bench} with {@code args}, asserts it exited 0 and returns what it printed. */
    private static String bench(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        String[] command = new String[args.length + 1];
        command[0] = "bench";
        System.arraycopy(args, 0, command, 1, args.length);

        int status = new OutboxDemo().execute(new PrintWriter(out), new PrintWriter(err), command);

        assertThat(status).as("stderr:%n%s", err).isZero();
        return out.toString();
    }
}
