package io.outbox.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.demo.DeliveryChecker.CheckResult;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The summary table says OK only when nothing was lost or misordered, and otherwise why it failed. */
class DemoSummaryTest {

    private static DemoSummary summary(CheckResult result, boolean timedOut) {
        OrderDemo.Settings settings = new OrderDemo.Settings(StoreKind.JDBC, new StoreOptions(), new KafkaOptions(),
                10, 5, 2, 1, 8, 500, Duration.ofMillis(1500), 42, 0, false);
        return new DemoSummary("0a1b2c3d", "jdbc: H2", "embedded broker 127.0.0.1:9092", "outbox-demo-0a1b2c3d", 8,
                settings, result, 1234.5, Map.of("demo-0a1b2c3d-1", List.of(0, 1, 2, 3, 4, 5, 6, 7)),
                Map.of("demo-0a1b2c3d-1", 11L), 0, 0, timedOut,
                "redis pub/sub (redis://127.0.0.1:6379, channel c): the relays received 7 hint messages");
    }

    @Test
    void aCleanRunSaysOk() {
        String table = summary(new CheckResult(10, 11, 1, 0, 0, 0, 0, 500, 3.25, 8, 9, 12), false).render();

        assertThat(table).containsPattern("enqueued +10 ").containsPattern("delivered +11 ")
                .containsPattern("duplicates +1 ").containsPattern("lost +0 ").containsPattern("order violations +0 ")
                .containsPattern("throughput +500 msgs/s").containsPattern("latency p50 +3\\.3 ms")
                .contains("demo-0a1b2c3d-1 11 (buckets 0-7)", "seed 42")
                .containsPattern("wake-ups +redis pub/sub \\(redis://127.0.0.1:6379, channel c\\): the relays received 7 ")
                .endsWith("OK: every committed order was delivered, each customer's orders in placement order.\n")
                .doesNotContain("unexpected", "foreign", "retries");
    }

    @Test
    void aFailedRunSaysWhatAndTheExitStatus() {
        DemoSummary summary = summary(new CheckResult(10, 8, 0, 2, 0, 3, 1, 400, 3, 8, 9, 12), true);

        assertThat(summary.exitCode()).isEqualTo(5);
        assertThat(summary.render())
                .containsPattern("foreign +3 ")
                .endsWith("FAILED: 2 lost, 1 order violations; gave up waiting 1500ms after the last order "
                        + "(exit status 5).\n");
    }

    @Test
    void nothingDeliveredShowsNoRates() {
        String table = summary(new CheckResult(10, 0, 0, 10, 0, 0, 0, Double.NaN, Double.NaN, Double.NaN,
                Double.NaN, Double.NaN), true).render();

        assertThat(table).containsPattern("throughput +- msgs/s").containsPattern("latency p99 +- ms");
    }
}
