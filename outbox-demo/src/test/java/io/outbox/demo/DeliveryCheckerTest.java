package io.outbox.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.demo.DeliveryChecker.CheckResult;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The checker on fabricated record streams, so that a passing demo cannot pass vacuously: it must
 * see a missing message, a swapped pair, repeats and records that are not the run's.
 */
class DeliveryCheckerTest {

    private static final String RUN = "run00001";
    private static final long PLACED = 1_700_000_000_000_000L;

    /** One committed order and its message id. */
    private record Placed(UUID id, Order order) {
        byte[] value() {
            return order.toJson();
        }
    }

    /** Customer 1 places orders 1..n, customer 2 orders 1..n, interleaved, each expected. */
    private static List<Placed> place(DeliveryChecker checker, int perCustomer) {
        List<Placed> placed = new ArrayList<>();
        for (int seq = 1; seq <= perCustomer; seq++) {
            for (int customer = 1; customer <= 2; customer++) {
                Placed p = new Placed(UUID.randomUUID(), new Order(RUN, customer, seq, 100, PLACED + seq * 1000L));
                checker.expect(p.id());
                placed.add(p);
            }
        }
        return placed;
    }

    private static void deliver(DeliveryChecker checker, Placed p, long latencyMicros) {
        checker.accept(p.id(), p.value(), p.order().placedAtMicros() + latencyMicros);
    }

    @Test
    void aCompleteOrderedStreamPasses() {
        DeliveryChecker checker = new DeliveryChecker(RUN);
        List<Placed> placed = place(checker, 5);
        placed.forEach(p -> deliver(checker, p, 2_000));

        CheckResult result = checker.result();
        assertThat(checker.allExpectedSeen()).isTrue();
        assertThat(result.enqueued()).isEqualTo(10);
        assertThat(result.delivered()).isEqualTo(10);
        assertThat(result.duplicates()).isZero();
        assertThat(result.lost()).isZero();
        assertThat(result.orderViolations()).isZero();
        assertThat(result.passed()).isTrue();
        assertThat(result.exitCode()).isEqualTo(OutboxDemo.EXIT_OK);
        assertThat(result.p50Millis()).isEqualTo(2.0);
    }

    @Test
    void aMissingMessageIsLost() {
        DeliveryChecker checker = new DeliveryChecker(RUN);
        List<Placed> placed = place(checker, 5);
        placed.stream().filter(p -> p != placed.get(3)).forEach(p -> deliver(checker, p, 1_000));

        CheckResult result = checker.result();
        assertThat(checker.allExpectedSeen()).isFalse();
        assertThat(result.lost()).isEqualTo(1);
        assertThat(result.orderViolations()).as("a gap is a loss, not an order violation").isZero();
        assertThat(result.passed()).isFalse();
        assertThat(result.exitCode()).isEqualTo(OutboxDemo.EXIT_LOST);
    }

    @Test
    void aSwappedPairIsAnOrderViolation() {
        DeliveryChecker checker = new DeliveryChecker(RUN);
        List<Placed> placed = new ArrayList<>(place(checker, 5));
        // customer 1's orders 2 and 3 (indexes 2 and 4) arrive as 3, 2
        placed.set(2, placed.set(4, placed.get(2)));
        placed.forEach(p -> deliver(checker, p, 1_000));

        CheckResult result = checker.result();
        assertThat(result.lost()).isZero();
        assertThat(result.orderViolations()).isEqualTo(1);
        assertThat(result.exitCode()).isEqualTo(OutboxDemo.EXIT_MISORDERED);
    }

    @Test
    void aMissingIdAndASwappedPairTogetherFailWithBothBits() {
        DeliveryChecker checker = new DeliveryChecker(RUN);
        List<Placed> placed = new ArrayList<>(place(checker, 5));
        placed.set(2, placed.set(4, placed.get(2)));
        placed.remove(9);
        placed.forEach(p -> deliver(checker, p, 1_000));

        CheckResult result = checker.result();
        assertThat(result.lost()).isEqualTo(1);
        assertThat(result.orderViolations()).isEqualTo(1);
        assertThat(result.exitCode()).isEqualTo(OutboxDemo.EXIT_LOST | OutboxDemo.EXIT_MISORDERED)
                .isEqualTo(5);
    }

    @Test
    void everyLaterDeliveryBehindAJumpAheadCounts() {
        DeliveryChecker checker = new DeliveryChecker(RUN);
        List<Placed> c1 = place(checker, 5).stream().filter(p -> p.order().customer() == 1).toList();
        for (int i : new int[] {0, 4, 1, 2, 3}) { // orders 1, 5, 2, 3, 4
            deliver(checker, c1.get(i), 1_000);
        }
        assertThat(checker.result().orderViolations()).isEqualTo(3);
    }

    @Test
    void repeatsAreCountedAndDroppedBeforeTheOrderCheck() {
        DeliveryChecker checker = new DeliveryChecker(RUN);
        List<Placed> placed = place(checker, 5);
        placed.forEach(p -> deliver(checker, p, 1_000));
        deliver(checker, placed.get(0), 9_000); // customer 1's order 1 again, after its order 5
        deliver(checker, placed.get(4), 9_000);

        CheckResult result = checker.result();
        assertThat(result.delivered()).isEqualTo(12);
        assertThat(result.duplicates()).isEqualTo(2);
        assertThat(result.orderViolations()).isZero();
        assertThat(result.passed()).isTrue();
        assertThat(result.maxMillis()).as("latency counts first deliveries only").isEqualTo(1.0);
    }

    @Test
    void recordsOfOtherRunsOrWithoutAnIdAreForeignAndIgnored() {
        DeliveryChecker checker = new DeliveryChecker(RUN);
        List<Placed> placed = place(checker, 2);
        checker.accept(UUID.randomUUID(), new Order("otherrun", 1, 99, 1, PLACED).toJson(), PLACED);
        checker.accept(null, placed.get(0).value(), PLACED);
        checker.accept(UUID.randomUUID(), "not an order".getBytes(StandardCharsets.UTF_8), PLACED);
        checker.accept(UUID.randomUUID(), null, PLACED);
        placed.forEach(p -> deliver(checker, p, 1_000));

        CheckResult result = checker.result();
        assertThat(result.foreign()).isEqualTo(4);
        assertThat(result.delivered()).isEqualTo(4);
        assertThat(result.orderViolations()).isZero();
        assertThat(result.passed()).isTrue();
    }

    @Test
    void aRecordReadBeforeItsWriterReportedTheCommitStillCounts() {
        DeliveryChecker checker = new DeliveryChecker(RUN);
        Placed early = new Placed(UUID.randomUUID(), new Order(RUN, 7, 1, 1, PLACED));
        deliver(checker, early, 500);
        assertThat(checker.result().unexpected()).isEqualTo(1);

        checker.expect(early.id());

        assertThat(checker.allExpectedSeen()).isTrue();
        assertThat(checker.result().lost()).isZero();
        assertThat(checker.result().unexpected()).isZero();
    }

    @Test
    void latencyPercentilesAreNearestRankInMilliseconds() {
        DeliveryChecker checker = new DeliveryChecker(RUN);
        for (int i = 1; i <= 100; i++) {
            Placed p = new Placed(UUID.randomUUID(), new Order(RUN, i, 1, 1, PLACED));
            checker.expect(p.id());
            deliver(checker, p, i * 1_000L); // 1 ms .. 100 ms
        }
        CheckResult result = checker.result();
        assertThat(result.p50Millis()).isEqualTo(50.0);
        assertThat(result.p95Millis()).isEqualTo(95.0);
        assertThat(result.p99Millis()).isEqualTo(99.0);
        assertThat(result.maxMillis()).isEqualTo(100.0);
        assertThat(result.throughput()).isPositive();
    }

    @Test
    void nothingDeliveredLosesEverything() {
        DeliveryChecker checker = new DeliveryChecker(RUN);
        place(checker, 3);
        CheckResult result = checker.result();
        assertThat(result.lost()).isEqualTo(6);
        assertThat(result.delivered()).isZero();
        assertThat(result.throughput()).isNaN();
        assertThat(result.p50Millis()).isNaN();
        assertThat(result.exitCode()).isEqualTo(OutboxDemo.EXIT_LOST);
    }
}
