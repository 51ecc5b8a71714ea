package io.outbox.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** CPU over a phase of another process tree, or of processes that come and go. */
class CpuProbeTest {

    @TempDir
    Path proc;

    private void process(long pid, long parent, long utime, long stime, long cutime) throws IOException {
        Path dir = Files.createDirectories(proc.resolve(Long.toString(pid)));
        Files.writeString(dir.resolve("stat"), pid + " (postgres) S " + parent + " 1 1 0 -1 0 0 0 0 0 " + utime + " "
                + stime + " " + cutime + " 0 20 0 1 0 1 1 1\n");
    }

    @Test
    void aTreeCountsWhatItsProcessesSpentDuringThePhaseIncludingAChildThatExited() throws IOException {
        process(10, 1, 100, 20, 0);
        process(11, 10, 40, 10, 0);
        CpuProbe probe = CpuProbe.tree(new ProcCpu(proc), 10, "server 10");
        Map<Long, Long> start = probe.sample();

        process(10, 1, 105, 20, 70); // child 11 exited after 70 ticks in all and was reaped
        Files.delete(proc.resolve("11").resolve("stat"));
        Files.delete(proc.resolve("11"));
        process(12, 10, 8, 2, 0); // a child born during the phase

        assertThat(probe.measures()).isTrue();
        assertThat(probe.ticksSince(start)).isEqualTo(5 + 20 + 10);
        assertThat(probe.outsideDrain()).isSameAs(probe);
    }

    @Test
    void processesBornDuringThePhaseCountFromZero() throws IOException {
        AtomicReference<Set<Long>> pids = new AtomicReference<>(Set.of(21L));
        process(21, 1, 30, 5, 0);
        CpuProbe probe = CpuProbe.processes(new ProcCpu(proc), pids::get, "backends");
        Map<Long, Long> start = probe.sample();

        process(21, 1, 50, 5, 0);
        process(22, 1, 12, 3, 0);
        pids.set(Set.of(21L, 22L, 23L)); // 23 is gone already

        assertThat(probe.ticksSince(start)).isEqualTo(20 + 15);
        assertThat(probe.outsideDrain().measures()).isFalse();
    }

    @Test
    void nothingMeasuredIsNaNAndSaysWhy() {
        CpuProbe none = CpuProbe.none("embedded broker: counted in the bench process");

        assertThat(none.measures()).isFalse();
        assertThat(none.sample()).isEmpty();
        assertThat(none.ticksSince(Map.of())).isNaN();
        assertThat(none.description()).isEqualTo("embedded broker: counted in the bench process");
        assertThat(CpuProbe.tree(new ProcCpu(proc), 999, "gone").ticksSince(Map.of())).isNaN();
    }

    @Test
    void theBootstrapPortIsReadOnlyForThisMachinesLoopback() {
        assertThat(RelayBench.localPort("127.0.0.1:9092")).hasValue(9092);
        assertThat(RelayBench.localPort("localhost:19092,other:9092")).hasValue(19092);
        assertThat(RelayBench.localPort("[::1]:9093")).hasValue(9093);
        assertThat(RelayBench.localPort("kafka.example.com:9092")).isEmpty();
        assertThat(RelayBench.localPort("127.0.0.1")).isEmpty();
        assertThat(RelayBench.localPort("127.0.0.1:x")).isEmpty();
    }
}
