package io.outbox.demo;

import io.outbox.demo.DeliveryChecker.CheckResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The outcome of a demo run: the check's result and the circumstances, printed as a table.
 *
 * @param runId the run id
 * @param store what the store was
 * @param kafka where Kafka was
 * @param topic the topic
 * @param partitions its partitions
 * @param settings what was asked for
 * @param result what the check found
 * @param placementRate committed orders per second
 * @param ownedAtStart the buckets each relay owned when the writers started
 * @param publishedByRelay messages each relay published
 * @param publishFailures batches that failed and were retried
 * @param storeErrors relay store calls that failed and were retried
 * @param timedOut whether the run gave up waiting for deliveries
 * @param wakeUps how the relays learnt of commits ({@code --notify}) and what the transport carried
 */
record DemoSummary(String runId, String store, String kafka, String topic, int partitions, OrderDemo.Settings settings,
                   CheckResult result, double placementRate, Map<String, List<Integer>> ownedAtStart,
                   Map<String, Long> publishedByRelay, long publishFailures, long storeErrors, boolean timedOut,
                   String wakeUps) {

    /** The process exit status: 0 when nothing was lost or misordered. */
    int exitCode() {
        return result.exitCode();
    }

    /** The summary table, several lines, ending with a line saying OK or FAILED. */
    String render() {
        StringBuilder out = new StringBuilder();
        out.append("Outbox demo, run ").append(runId).append('\n');
        row(out, "store", store);
        row(out, "kafka", kafka + ", topic " + topic + " (" + partitions + " partitions)");
        row(out, "load", String.format(Locale.ROOT, "%,d orders%s, %,d customers, %d writer(s), %d relay(s), "
                        + "%d buckets, batch size %d, seed %d", settings.orders(),
                settings.rate() > 0 ? String.format(Locale.ROOT, " at %,d/s", settings.rate()) : "",
                settings.customers(), settings.writers(), settings.relays(), settings.buckets(), settings.batchSize(),
                settings.seed()));
        row(out, "mode", settings.transactions()
                ? "Kafka transactions (a transaction per batch), checker reads read_committed"
                : "default (idempotent producer), checker reads read_uncommitted");
        row(out, "wake-ups", wakeUps);
        out.append('\n');
        count(out, "enqueued", result.enqueued(), "orders committed, each with its message");
        count(out, "delivered", result.delivered(), "records read, repeats included");
        count(out, "duplicates", result.duplicates(), "repeats, dropped by message id");
        count(out, "lost", result.lost(), "committed but never delivered");
        count(out, "order violations", result.orderViolations(), "deliveries after a later order of the customer");
        if (result.unexpected() > 0) {
            count(out, "unexpected", result.unexpected(), "delivered without a confirmed commit");
        }
        if (result.foreign() > 0) {
            count(out, "foreign", result.foreign(), "records of other runs or producers, ignored");
        }
        measure(out, "throughput", result.throughput(), "msgs/s", "%,.0f", "first order placed to last delivered");
        measure(out, "placement rate", placementRate, "orders/s", "%,.0f", "the writers' commits");
        measure(out, "latency p50", result.p50Millis(), "ms", "%,.1f", "placed to consumed");
        measure(out, "latency p95", result.p95Millis(), "ms", "%,.1f", "");
        measure(out, "latency p99", result.p99Millis(), "ms", "%,.1f", "");
        measure(out, "latency max", result.maxMillis(), "ms", "%,.1f", "");
        List<String> relays = new ArrayList<>();
        publishedByRelay.forEach((relay, published) -> relays.add(String.format(Locale.ROOT, "%s %,d (buckets %s)",
                relay, published, BucketRanges.format(ownedAtStart.getOrDefault(relay, List.of())))));
        row(out, "published by", String.join(", ", relays));
        if (publishFailures > 0 || storeErrors > 0) {
            row(out, "retries", String.format(Locale.ROOT, "%,d failed publishes, %,d failed store calls",
                    publishFailures, storeErrors));
        }
        out.append('\n');
        if (result.passed()) {
            out.append("OK: every committed order was delivered, each customer's orders in placement order.\n");
        } else {
            String gaveUp = timedOut
                    ? "; gave up waiting " + DurationConverter.format(settings.timeout()) + " after the last order" : "";
            out.append(String.format(Locale.ROOT, "FAILED: %,d lost, %,d order violations%s (exit status %d).%n",
                    result.lost(), result.orderViolations(), gaveUp, exitCode()));
        }
        return out.toString();
    }

    private static void row(StringBuilder out, String label, String value) {
        out.append(String.format(Locale.ROOT, "  %-17s %s%n", label, value));
    }

    private static void count(StringBuilder out, String label, long value, String note) {
        out.append(String.format(Locale.ROOT, "  %-17s %,12d   %s%n", label, value, note));
    }

    private static void measure(StringBuilder out, String label, double value, String unit, String format,
                                String note) {
        String number = Double.isNaN(value) ? "-" : String.format(Locale.ROOT, format, value);
        out.append(String.format(Locale.ROOT, "  %-17s %12s %-8s %s%n", label, number, unit, note).stripTrailing())
                .append('\n');
    }
}
