package io.outbox.demo;

import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * The end-to-end check: which enqueued messages reached the topic, how often, and whether each
 * customer's orders arrived in placement order.
 *
 * <p>Writers call {@link #expect} after each commit; the consumer calls {@link #accept} for every
 * record, in the order it reads them. A record belongs to this run when it carries a message id
 * and its value is an {@link Order} of this run; other records (an earlier run on the same topic,
 * another producer) are counted as foreign and otherwise ignored. Repeats are dropped by message
 * id, as a consumer of the outbox must; among first deliveries, every customer's order numbers must
 * be strictly increasing: a record whose number is not above the highest one already seen for its
 * customer is an order violation (so {@code 1, 5, 2, 3, 4} has three). Thread-safe.
 */
final class DeliveryChecker {

    private final String runId;
    private final Set<UUID> expected = new HashSet<>();
    private final Set<UUID> seen = new HashSet<>();
    private final Map<Integer, Integer> highestSeq = new HashMap<>();
    private long expectedSeen;
    private long delivered;
    private long foreign;
    private long orderViolations;
    private long[] latencyMicros = new long[1024];
    private int latencies;
    private long firstPlacedMicros = Long.MAX_VALUE;
    private long lastFirstDeliveryMicros = Long.MIN_VALUE;

    DeliveryChecker(String runId) {
        this.runId = runId;
    }

    /** A message was committed: it must be delivered. */
    synchronized void expect(UUID messageId) {
        if (expected.add(messageId) && seen.contains(messageId)) {
            expectedSeen++; // the consumer can read a record before its writer gets here
        }
    }

    /**
     * A record was consumed.
     *
     * @param messageId the id from the record's message-id header, or null when it has none
     * @param value the record value
     * @param consumedAtMicros when it was read, epoch microseconds
     */
    synchronized void accept(UUID messageId, byte[] value, long consumedAtMicros) {
        Order order;
        try {
            order = Order.parse(value);
        } catch (IllegalArgumentException e) {
            foreign++;
            return;
        }
        if (messageId == null || !order.runId().equals(runId)) {
            foreign++;
            return;
        }
        delivered++;
        if (!seen.add(messageId)) {
            return; // a repeat: at-least-once delivery, dropped by message id
        }
        if (expected.contains(messageId)) {
            expectedSeen++;
        }
        int highest = highestSeq.getOrDefault(order.customer(), 0);
        if (order.seq() <= highest) {
            orderViolations++;
        } else {
            highestSeq.put(order.customer(), order.seq());
        }
        if (latencies == latencyMicros.length) {
            latencyMicros = Arrays.copyOf(latencyMicros, latencies * 2);
        }
        latencyMicros[latencies++] = consumedAtMicros - order.placedAtMicros();
        firstPlacedMicros = Math.min(firstPlacedMicros, order.placedAtMicros());
        lastFirstDeliveryMicros = Math.max(lastFirstDeliveryMicros, consumedAtMicros);
    }

    /** Whether every message expected so far has been delivered at least once. */
    synchronized boolean allExpectedSeen() {
        return expectedSeen == expected.size();
    }

    /** How many distinct messages of this run were delivered so far. */
    synchronized long distinctDelivered() {
        return seen.size();
    }

    /** The result so far. */
    synchronized CheckResult result() {
        long[] sorted = Arrays.copyOf(latencyMicros, latencies);
        Arrays.sort(sorted);
        double seconds = (lastFirstDeliveryMicros - firstPlacedMicros) / 1e6;
        double throughput = seen.isEmpty() || seconds <= 0 ? Double.NaN : seen.size() / seconds;
        return new CheckResult(expected.size(), delivered, delivered - seen.size(), expected.size() - expectedSeen,
                seen.size() - expectedSeen, foreign, orderViolations, throughput,
                percentile(sorted, 0.50), percentile(sorted, 0.95), percentile(sorted, 0.99),
                sorted.length == 0 ? Double.NaN : sorted[sorted.length - 1] / 1000.0);
    }

    /** Nearest-rank percentile, in milliseconds; NaN without samples. */
    private static double percentile(long[] sortedMicros, double p) {
        if (sortedMicros.length == 0) {
            return Double.NaN;
        }
        int rank = (int) Math.ceil(p * sortedMicros.length);
        return sortedMicros[Math.max(0, rank - 1)] / 1000.0;
    }

    /**
     * What the check found.
     *
     * @param enqueued messages committed by the writers
     * @param delivered records of this run read from the topic, repeats included
     * @param duplicates repeats among them (same message id read again)
     * @param lost committed messages never read
     * @param unexpected distinct messages of this run read although no writer reported their
     *     commit (zero unless a commit failed ambiguously)
     * @param foreign records ignored: without a message id, not an order, or of another run
     * @param orderViolations first deliveries that came after a later order of the same customer
     * @param throughput distinct messages delivered per second, from the first placement to the
     *     last first delivery; NaN when nothing was delivered
     * @param p50Millis median placement-to-consume latency of first deliveries, ms
     * @param p95Millis 95th percentile, ms
     * @param p99Millis 99th percentile, ms
     * @param maxMillis the largest, ms
     */
    record CheckResult(long enqueued, long delivered, long duplicates, long lost, long unexpected, long foreign,
                       long orderViolations, double throughput, double p50Millis, double p95Millis,
                       double p99Millis, double maxMillis) {

        /** Whether every message arrived and every customer's orders kept their order. */
        boolean passed() {
            return lost == 0 && orderViolations == 0;
        }

        /** The process exit status for this result; see {@link OutboxDemo}. */
        int exitCode() {
            return (lost > 0 ? OutboxDemo.EXIT_LOST : 0) | (orderViolations > 0 ? OutboxDemo.EXIT_MISORDERED : 0);
        }
    }
}
