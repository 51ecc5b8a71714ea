package io.outbox.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The notify bench's summary over several runs: the median of the runs' percentiles with the range. */
class NotifyBenchSpreadTest {

    private static NotifyBenchCommand.Result run(long p99Millis) {
        return new NotifyBenchCommand.Result("redis", 1, 1, 0, 0, p99Millis * 1_000_000, 0, 0, 0, "1",
                new NotifyBenchCommand.Split(0, 0, 0, 0));
    }

    @Test
    void theMedianOfAnOddCountIsTheMiddleRunAndOfAnEvenCountTheMeanOfTheTwoMiddleOnes() {
        assertThat(NotifyBenchCommand.spread(List.of(run(55), run(23), run(41)), NotifyBenchCommand.Result::p99))
                .isEqualTo("41.0 (23.0-55.0)");
        assertThat(NotifyBenchCommand.spread(List.of(run(40), run(30), run(20), run(90)),
                NotifyBenchCommand.Result::p99)).isEqualTo("35.0 (20.0-90.0)");
    }
}
