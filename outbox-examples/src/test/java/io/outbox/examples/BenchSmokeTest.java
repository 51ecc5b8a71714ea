package io.outbox.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

/** The benchmark runs and reports both rates; no threshold (timings on a shared build machine mean little). */
class BenchSmokeTest {

    @Test
    void benchPrintsTheRelayRateThePlainProducerRateAndTheirRatio() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();

        int status = new OutboxExamples().execute(new PrintWriter(out), new PrintWriter(err), "bench",
                "--messages", "2000", "--warmup-messages", "500", "--runs", "1", "--customers", "50",
                "--bootstrap-servers", TestServers.kafka(), "--no-progress");

        assertThat(status).as("stderr:%n%s", err).isZero();
        assertThat(out.toString())
                .contains("relay msg/s", "plain producer msg/s", "ratio", "warm-up", "run 1", "median")
                .contains("2,000 messages per run, 1,024-byte values")
                .contains("store concurrency 4", "relays and plain producer alike: acks=all, enable.idempotence=true")
                .containsPattern("run 1 +[\\d,]+ +[\\d,]+ +[\\d,]+ +\\d+\\.\\d\\d +\\d+\\.\\d\\d / \\d+\\.\\d\\d / \\d+\\.\\d\\d")
                .contains("store threads were busy")
                .doesNotContain("transactional msg/s");
    }

    @Test
    void withTransactionsTheBenchPrintsTheTransactionalRateBesideTheDefaultModes() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();

        int status = new OutboxExamples().execute(new PrintWriter(out), new PrintWriter(err), "bench",
                "--messages", "2000", "--warmup-messages", "500", "--runs", "1", "--customers", "50",
                "--bootstrap-servers", TestServers.kafka(), "--no-progress", "--transactions");

        assertThat(status).as("stderr:%n%s", err).isZero();
        assertThat(out.toString())
                .contains("relay msg/s", "plain producer msg/s", "transactional msg/s", "of the default mode")
                .containsPattern("run 1 +[\\d,]+ +\\d+\\.\\d\\d +\\d+\\.\\d\\d")
                .containsPattern("transactional / default mode: median ratio \\d+\\.\\d\\d over 1 run")
                .contains("transactional / plain producer: median ratio");
    }
}
