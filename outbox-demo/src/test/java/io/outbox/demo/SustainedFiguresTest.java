package io.outbox.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayList;
import java.util.List;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

/** The sustained run's arithmetic: the backlog slope, the writers' rates, the drift line. */
class SustainedFiguresTest {

    @Test
    void theSlopeIsTheLeastSquaresFitOfTheBacklogOverTime() {
        List<double[]> growing = new ArrayList<>();
        for (int s = 0; s <= 120; s++) {
            growing.add(new double[] {s, 1_000 + 150.0 * s + (s % 2 == 0 ? 40 : -40)});
        }
        assertThat(SustainedCommand.slope(growing)).isCloseTo(150.0, within(1.0));
        assertThat(SustainedCommand.slope(List.of(new double[] {0, 5}, new double[] {1, 5}, new double[] {2, 5})))
                .isZero();
        assertThat(SustainedCommand.slope(List.of(new double[] {0, 5}))).isZero();
    }

    @Test
    void theRateIsSplitEvenlyOverTheSizesThenOverEachSizesWriters() {
        SustainedLoad.Settings five = new SustainedLoad.Settings(1_000, List.of(1, 10), 5, 10, 10, 1, 8, 500, 4, true);

        // writers 0, 2, 4 take size 1 and share 500 msg/s; writers 1, 3 take size 10 and share 500
        assertThat(five.writerRate(0)).isCloseTo(500.0 / 3, within(1e-9));
        assertThat(five.writerRate(4)).isCloseTo(500.0 / 3, within(1e-9));
        assertThat(five.writerRate(1)).isEqualTo(250.0);
        assertThat(five.writerRate(0) * 3 + five.writerRate(1) * 2).isCloseTo(1_000.0, within(1e-9));
    }

    @Test
    void theDriftComparesTheFirstAndTheLastWindow() {
        List<SustainedCommand.Interval> intervals = new ArrayList<>();
        for (int i = 1; i <= 6; i++) {
            Histogram latency = new Histogram(3_600_000_000L, 3);
            latency.recordValue(i <= 2 ? 10_000 : 30_000); // microseconds
            intervals.add(new SustainedCommand.Interval(i, 60_000_000_000L, 6_000, 6_000, 10L * i, latency,
                    600.0, i <= 2 ? 60.0 : 120.0, new DatabaseGauges.Reading(1_000_000L * i, 200_000, 5, 1, -1),
                    "1.00"));
        }

        String drift = SustainedCommand.drift(intervals, 2);

        assertThat(drift).startsWith("drift (last 2 minute(s) against the first 2): p50 10.0 -> 30.0 ms, p99 10.0 -> 30.0 ms")
                .contains("database CPU 10.0 -> 20.0 ms per 1,000", "bench CPU 100.0 -> 100.0 ms per 1,000",
                        "committed 100 -> 100 msg/s", "backlog 20 -> 60", "table 2.0 -> 6.0 MB", "indexes 0.2 -> 0.2 MB");
        assertThat(SustainedCommand.drift(intervals.subList(0, 3), 5)).startsWith("drift (last 1 minute(s) against the first 1)");
        assertThat(SustainedCommand.drift(intervals.subList(0, 1), 5)).isEqualTo("drift: not measured (fewer than 2 intervals)");
    }

    @Test
    void anIntervalLineShowsDeadTuplesOrThePurgeLag() {
        Histogram latency = new Histogram(3_600_000_000L, 3);
        latency.recordValue(2_500);
        SustainedCommand.Interval pg = new SustainedCommand.Interval(3, 60_000_000_000L, 30_000, 30_000, 12, latency,
                3_000.0, 450.0, new DatabaseGauges.Reading(12_300_000, 450_000, 1_234, 2, -1), "1.50");
        SustainedCommand.Interval maria = new SustainedCommand.Interval(3, 60_000_000_000L, 30_000, 30_000, 12, latency,
                3_000.0, Double.NaN, new DatabaseGauges.Reading(12_300_000, 450_000, -1, -1, 987), "1.50");

        assertThat(SustainedCommand.line(pg)).matches(" +3 +500 +2\\.5 +2\\.5 +12 +12\\.3 +0\\.5 +1,234 \\(2\\) +15\\.0 +100\\.0 +1\\.50");
        assertThat(SustainedCommand.line(maria)).matches(" +3 +500 +2\\.5 +2\\.5 +12 +12\\.3 +0\\.5 +987 +- +100\\.0 +1\\.50");
    }

    @Test
    void aLocalJdbcUrlsPortIsFound() {
        assertThat(DatabaseGauges.localPort("jdbc:postgresql://127.0.0.1:5433/test?x=1", 5432)).hasValue(5433);
        assertThat(DatabaseGauges.localPort("jdbc:mariadb://localhost/test", 3306)).hasValue(3306);
        assertThat(DatabaseGauges.localPort("jdbc:postgresql://db.example:5432/test", 5432)).isEmpty();
        assertThat(DatabaseGauges.withApplicationName("jdbc:postgresql://h/db", "a")).isEqualTo("jdbc:postgresql://h/db?ApplicationName=a");
        assertThat(DatabaseGauges.withApplicationName("jdbc:postgresql://h/db?ssl=true", "a")).endsWith("?ssl=true&ApplicationName=a");
        assertThat(DatabaseGauges.withApplicationName("jdbc:mariadb://h/db", "a")).isEqualTo("jdbc:mariadb://h/db");
    }
}
