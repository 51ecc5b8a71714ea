package io.outbox.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The bench's derived figures from the phases it measured: no timing, only the arithmetic and its printing. */
class BenchFiguresTest {

    private static final double TICK_MILLIS = ProcCpu.millis(1);

    /** A phase of 1,000 messages, so that each CPU figure per 1,000 messages is the given milliseconds. */
    private static RelayBench.Phase phase(double benchMillis, double brokerMillis, double dbMillis) {
        return new RelayBench.Phase(1000, 1_000_000_000L, (long) (benchMillis * 1e6), brokerMillis / TICK_MILLIS,
                dbMillis / TICK_MILLIS, 0, 0);
    }

    private static RelayBench.Round round(RelayBench.Phase relay, RelayBench.Phase plain, RelayBench.Phase store) {
        return new RelayBench.Round("run 1", 1000, 1000, relay, plain, store, 0.5, 0.5, 0, Double.NaN, null);
    }

    @Test
    void theRelaysCpuBeyondThePlainProducersAndTheStoresIsTheDifferenceOverAllThreeProcesses() {
        // relay 30 + 10 + 20 = 60, plain 10 + 5 + (no database) = 15, store alone 5 + 0 + 15 = 20
        RelayBench.Round r = round(phase(30, 10, 20), phase(10, 5, Double.NaN), phase(5, 0, 15));

        assertThat(r.relayBeyondPlainAndStore()).isCloseTo(25, within(1e-6));
        // 2 processors: at most 2,000,000 / 35 msg/s, over the plain producer's 1,000 msg/s
        assertThat(r.ratioCeiling(2)).isCloseTo(2e6 / 35 / 1000, within(1e-9));
        assertThat(r.ratioCeiling(1)).isCloseTo(1e6 / 35 / 1000, within(1e-9));
        assertThat(r.relayPhase().coresBusy()).isCloseTo(0.060, within(1e-9));
        assertThat(r.plainPhase().coresBusy()).isCloseTo(0.015, within(1e-9));
        assertThat(r.storeAlone()).isCloseTo(1000, within(1e-6));
    }

    @Test
    void withoutTheStoreAlonePhaseItsFiguresAreNotANumber() {
        RelayBench.Round r = round(phase(30, 10, 20), phase(10, 5, Double.NaN), null);

        assertThat(r.relayBeyondPlainAndStore()).isNaN();
        assertThat(r.ratioCeiling(2)).isNaN();
        assertThat(r.storeAlone()).isNaN();
    }

    @Test
    void theTablePrintsTheStoreAloneFiguresAndTheSumsOnlyWhenEveryProcessIsAccountedFor() {
        RelayBench.Round r = round(phase(30, 10, 20), phase(10, 5, Double.NaN), phase(5, 0, 15));

        String complete = result(List.of(r), true).render();
        String partial = result(List.of(r), false).render();

        assertThat(complete).containsPattern("run 1 +1,000 +5 / 0 / 15 +25 +0\\.06 / 0\\.02 / 0\\.02 +57\\.14\\n")
                .containsPattern("relay CPU ms per 1,000 beyond plain \\+ store +25 \\(25-25\\)")
                .containsPattern("ratio ceiling on 2 processors +57\\.14 \\(57\\.14-57\\.14\\)")
                .containsPattern("cores busy, relay +0\\.06 \\(")
                .containsPattern("cores busy, store alone +0\\.02 \\(")
                .containsPattern("store alone database CPU ms per 1,000 +15 \\(15-15\\)");
        assertThat(partial).contains("the broker's or the database's CPU not measured: no sums")
                .containsPattern("run 1 +1,000 +5 / 0 / 15 +- +- +-\\n")
                .containsPattern("relay CPU ms per 1,000 beyond plain \\+ store +-\\n");
    }

    @Test
    void withoutTheStoreAlonePhaseTheTableHasNoStoreAloneLines() {
        String table = result(List.of(round(phase(30, 10, 20), phase(10, 5, Double.NaN), null)), true).render();

        assertThat(table).doesNotContain("store alone", "ceiling", "cores busy");
    }

    @Test
    void aProbeThatMeasuresButReadNothingInAPhaseLeavesTheSumsOut() {
        // a database probe that reads processes (a --db-pid gone, PostgreSQL backends not on this machine)
        CpuProbe measuring = CpuProbe.tree(ProcCpu.system(), ProcessHandle.current().pid(), "database process");
        CpuProbe inBench = CpuProbe.inBench("broker in this process");
        RelayBench.Round read = round(phase(30, 10, 20), phase(10, 5, 1), phase(5, 0, 15));
        RelayBench.Round storeReadNothing = round(phase(30, 10, 20), phase(10, 5, 1), phase(5, 0, Double.NaN));
        RelayBench.Round relayReadNothing = round(phase(30, 10, Double.NaN), phase(10, 5, 1), phase(5, 0, 15));

        assertThat(RelayBench.cpuAccounted(inBench, measuring, List.of(read))).isTrue();
        assertThat(RelayBench.cpuAccounted(inBench, measuring, List.of(read, storeReadNothing))).isFalse();
        assertThat(RelayBench.cpuAccounted(inBench, measuring, List.of(relayReadNothing))).isFalse();
        assertThat(RelayBench.cpuAccounted(measuring, inBench, List.of(read))).isTrue();
        // H2 in the bench process: its NaN is in the bench's figure
        assertThat(RelayBench.cpuAccounted(inBench, inBench, List.of(storeReadNothing))).isTrue();
        // the relays' backends are not read outside the drain: the plain producer's NaN is no gap
        CpuProbe backends = CpuProbe.processes(ProcCpu.system(), () -> Set.of(ProcessHandle.current().pid()),
                "backends");
        assertThat(RelayBench.cpuAccounted(inBench, backends,
                List.of(round(phase(30, 10, 20), phase(10, 5, Double.NaN), phase(5, 0, 15))))).isTrue();
        assertThat(RelayBench.cpuAccounted(inBench, backends, List.of(storeReadNothing))).isFalse();
        assertThat(RelayBench.cpuAccounted(CpuProbe.none("not found"), inBench, List.of(read))).isFalse();
    }

    private static RelayBench.BenchResult result(List<RelayBench.Round> rounds, boolean accounted) {
        RelayBench.Settings settings = new RelayBench.Settings(StoreKind.JDBC, new StoreOptions(), new KafkaOptions(),
                1000, 1024, 50, 1, 8, 500, 4, 1, 0, Duration.ofMinutes(1), false, false, true, null, null, false, true);
        return new RelayBench.BenchResult("r1", "H2", "broker", "outbox-bench-r1", 8, settings, "acks=all", rounds,
                "broker process 1", "database process 2", accounted, 2, "0.00 0.00 0.00", "0.00 0.00 0.00");
    }
}
