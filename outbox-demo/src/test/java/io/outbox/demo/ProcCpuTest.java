package io.outbox.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reading CPU times, the load average and listening sockets from a /proc tree. */
class ProcCpuTest {

    @TempDir
    Path proc;

    /** A stat line with the given times; fields 5-13 and 18-52 as a real kernel writes them. */
    private static String statLine(long pid, String command, long parent, long utime, long stime, long cutime,
                                   long cstime) {
        return pid + " (" + command + ") S " + parent + " " + pid + " " + pid + " 0 -1 4194560 1234 0 0 0 "
                + utime + " " + stime + " " + cutime + " " + cstime
                + " 20 0 1 0 2938 8056832 512 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
    }

    private void process(long pid, String command, long parent, long utime, long stime, long cutime, long cstime)
            throws IOException {
        Path dir = Files.createDirectories(proc.resolve(Long.toString(pid)));
        Files.writeString(dir.resolve("stat"), statLine(pid, command, parent, utime, stime, cutime, cstime));
    }

    @Test
    void aStatLineGivesTheParentAndTheUserSystemAndReapedChildrenTimes() {
        ProcCpu.Stat stat = ProcCpu.Stat.parse(statLine(4242, "java", 1, 1500, 300, 20, 7));

        assertThat(stat).isEqualTo(new ProcCpu.Stat(4242, "java", 1, 1500, 300, 20, 7));
        assertThat(stat.ownTicks()).isEqualTo(1800);
        assertThat(stat.ticksWithReapedChildren()).isEqualTo(1827);
    }

    @Test
    void aCommandWithSpacesAndParenthesesDoesNotShiftTheFields() {
        ProcCpu.Stat stat = ProcCpu.Stat.parse(statLine(77, "postgres: wal writer) (x", 12, 9, 4, 0, 0));

        assertThat(stat.command()).isEqualTo("postgres: wal writer) (x");
        assertThat(stat.parent()).isEqualTo(12);
        assertThat(stat.ownTicks()).isEqualTo(13);
    }

    @Test
    void aLineThatIsNotAStatLineIsRefusedQuotingIt() {
        assertThatThrownBy(() -> ProcCpu.Stat.parse("hello world")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'hello world'");
        assertThatThrownBy(() -> ProcCpu.Stat.parse("12 (java) S 1 2 3")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("expected at least 17");
        assertThatThrownBy(() -> ProcCpu.Stat.parse(statLine(1, "x", 0, 1, 1, 1, 1).replace(" 4194560 ", " x ")
                .replace("S 0 1 1", "S zero 1 1"))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aTreeSumsTheProcessItsDescendantsAndWhatEachReaped() throws IOException {
        process(100, "postgres", 1, 50, 10, 200, 40);  // postmaster: 60 own, 240 of reaped backends
        process(101, "postgres", 100, 30, 5, 0, 0);    // a backend
        process(102, "postgres", 100, 7, 3, 0, 0);     // another
        process(103, "sh", 102, 1, 1, 0, 0);           // a grandchild
        process(200, "java", 1, 9999, 9999, 0, 0);     // not in the tree
        Files.createDirectories(proc.resolve("self"));

        assertThat(new ProcCpu(proc).treeTicks(100)).hasValue(60 + 240 + 35 + 10 + 2);
        assertThat(new ProcCpu(proc).treeTicks(102)).hasValue(12);
        assertThat(new ProcCpu(proc).treeTicks(999)).isEmpty();
        assertThat(new ProcCpu(proc).stat(999)).isEmpty();
    }

    @Test
    void ticksAreHundredthsOfASecond() {
        assertThat(ProcCpu.millis(250)).isEqualTo(2500.0);
    }

    @Test
    void theLoadAverageIsTheFirstThreeFieldsOfLoadavg() throws IOException {
        Files.writeString(proc.resolve("loadavg"), "3.53 1.71 0.74 4/262 12590\n");

        assertThat(new ProcCpu(proc).loadAverage()).isEqualTo("3.53 1.71 0.74");
        assertThat(ProcCpu.parseLoadAverage("0.00 0.01 0.05 1/80 1")).isEqualTo("0.00 0.01 0.05");
        assertThatThrownBy(() -> ProcCpu.parseLoadAverage("busy")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'busy'");
        assertThatThrownBy(() -> ProcCpu.parseLoadAverage("a b c")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theOwnProcessCpuTimeCountsAtLeastWhatThisThreadSpent() {
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        long before = ProcCpu.ownCpuNanos();
        long threadStart = threads.getCurrentThreadCpuTime();
        long x = 0;
        // Spin until this thread has used 50 ms of CPU, however busy the machine is.
        while (threads.getCurrentThreadCpuTime() - threadStart < 50_000_000L) {
            x += Long.numberOfTrailingZeros(x + System.nanoTime());
        }
        assertThat(ProcCpu.ownCpuNanos() - before).as("spun %d", x).isGreaterThanOrEqualTo(50_000_000L);
    }

    @Test
    void theJvmsCompilerAndCollectorThreadsAreSummedApartFromTheOthers() throws IOException {
        Path tasks = Files.createDirectories(proc.resolve("self").resolve("task"));
        Map<Long, String> threads = Map.of(1L, "java", 7L, "C2 CompilerThre", 8L, "C1 CompilerThre",
                9L, "GC Thread#0", 10L, "G1 Conc#0", 11L, "G1 Refine#0", 12L, "outbox-relay-a", 13L, "VM Thread");
        for (Map.Entry<Long, String> t : threads.entrySet()) {
            Path dir = Files.createDirectories(tasks.resolve(Long.toString(t.getKey())));
            Files.writeString(dir.resolve("stat"), statLine(t.getKey(), t.getValue(), 1, t.getKey() * 10, t.getKey(),
                    0, 0));
        }

        // compilers: 77 + 88; collectors: 99 + 110 + 121; the relay's thread, main and the VM thread are neither
        assertThat(new ProcCpu(proc).ownVmThreadTicks()).hasValue(new ProcCpu.VmThreadTicks(165, 330));
        assertThat(new ProcCpu.VmThreadTicks(165, 330).minus(new ProcCpu.VmThreadTicks(65, 30)))
                .isEqualTo(new ProcCpu.VmThreadTicks(100, 300));
        assertThat(new ProcCpu(proc.resolve("none")).ownVmThreadTicks()).isEmpty();
    }

    private static final List<String> TCP = List.of(
            "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
            "   0: 0100007F:2384 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 51234 1 0",
            "   1: 0100007F:2384 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000     0        0 51240 1 0",
            "   2: 00000000:1538 00000000:0000 0A 00000000:00000000 00:00000000 00000000   104        0 22222 1 0");

    @Test
    void onlyListeningSocketsOnThePortAreFound() {
        assertThat(ProcCpu.listeningInodes(TCP, 9092)).containsExactly(51234L); // 0x2384; the 01 is a connection
        assertThat(ProcCpu.listeningInodes(TCP, 5432)).containsExactly(22222L); // 0x1538
        assertThat(ProcCpu.listeningInodes(TCP, 80)).isEmpty();
        assertThat(ProcCpu.listeningInodes(List.of(), 80)).isEmpty();
    }

    @Test
    void theListeningProcessIsTheOneHoldingTheSocket() throws IOException {
        Files.createDirectories(proc.resolve("net"));
        Files.write(proc.resolve("net").resolve("tcp"), TCP);
        Path other = Files.createDirectories(proc.resolve("300").resolve("fd"));
        Files.createSymbolicLink(other.resolve("3"), Path.of("socket:[51240]"));
        Path broker = Files.createDirectories(proc.resolve("301").resolve("fd"));
        Files.createSymbolicLink(broker.resolve("0"), Path.of("/dev/null"));
        Files.createSymbolicLink(broker.resolve("7"), Path.of("socket:[51234]"));

        assertThat(new ProcCpu(proc).listeningPid(9092)).hasValue(301);
        assertThat(new ProcCpu(proc).listeningPid(5432)).isEmpty(); // listening, but no readable holder
        assertThat(new ProcCpu(proc).listeningPid(80)).isEmpty();
    }

    @Test
    void theRealProcFindsThisProcess() {
        ProcCpu real = ProcCpu.system();
        org.junit.jupiter.api.Assumptions.assumeTrue(real.available(), "no /proc on this machine");
        assertThat(real.stat(ProcessHandle.current().pid())).hasValueSatisfying(s -> {
            assertThat(s.pid()).isEqualTo(ProcessHandle.current().pid());
            assertThat(s.ownTicks()).isPositive();
        });
        assertThat(real.all()).containsKey(ProcessHandle.current().pid());
        assertThat(real.ownVmThreadTicks()).hasValueSatisfying(t -> assertThat(t.jit()).isPositive());
    }
}
