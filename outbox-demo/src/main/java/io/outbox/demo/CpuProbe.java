package io.outbox.demo;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Reads the CPU time of another process over a phase of the benchmark: a broker or a database
 * server, as a process tree ({@link ProcCpu#treeTicks}), or a set of processes that may change
 * during the phase (PostgreSQL's backends of the relay's connections). {@link #sample()} at the
 * start, {@link #ticksSince} at the end; a process first seen at the end counts from zero (it was
 * born during the phase). Thread-safe if its pid supplier is.
 */
final class CpuProbe {

    private final String description;
    private final ProcCpu proc;
    private final Long treeRoot;
    private final Supplier<Set<Long>> processes;
    private final boolean inBench;

    private CpuProbe(String description, ProcCpu proc, Long treeRoot, Supplier<Set<Long>> processes,
                     boolean inBench) {
        this.description = description;
        this.proc = proc;
        this.treeRoot = treeRoot;
        this.processes = processes;
        this.inBench = inBench;
    }

    /** A probe that measures nothing, saying why (e.g. "not found on this machine"). */
    static CpuProbe none(String why) {
        return new CpuProbe(why, null, null, null, false);
    }

    /**
     * A probe that measures nothing because the process runs in the bench's own (an embedded
     * broker, H2): its CPU is in the bench's figure.
     */
    static CpuProbe inBench(String why) {
        return new CpuProbe(why, null, null, null, true);
    }

    /** The process {@code pid} with its descendants and what they reaped. */
    static CpuProbe tree(ProcCpu proc, long pid, String description) {
        return new CpuProbe(description, proc, pid, null, false);
    }

    /** The processes {@code pids} supplies at each reading, each its own time only. */
    static CpuProbe processes(ProcCpu proc, Supplier<Set<Long>> pids, String description) {
        return new CpuProbe(description, proc, null, pids, false);
    }

    /**
     * The probe for a phase without relays: this one for a process tree, none for the relays'
     * connection backends (closed by then).
     */
    CpuProbe outsideDrain() {
        return processes == null ? this : none("");
    }

    /** Whether this probe reads anything. */
    boolean measures() {
        return proc != null;
    }

    /** Whether this process's CPU is in a figure: read by this probe, or in the bench process's. */
    boolean accounted() {
        return measures() || inBench;
    }

    /** What is measured, or why nothing is. */
    String description() {
        return description;
    }

    /** Clock ticks by pid now; empty when nothing is measured. */
    Map<Long, Long> sample() {
        Map<Long, Long> ticks = new HashMap<>();
        if (treeRoot != null) {
            proc.treeTicks(treeRoot).ifPresent(t -> ticks.put(treeRoot, t));
        } else if (processes != null) {
            for (long pid : processes.get()) {
                proc.stat(pid).ifPresent(s -> ticks.put(pid, s.ownTicks()));
            }
        }
        return ticks;
    }

    /**
     * The clock ticks spent since {@code start} (a {@link #sample()}): the sum over the processes
     * read now of their ticks now minus those at the start (zero for a process not read then).
     *
     * @return NaN when nothing is measured or nothing could be read now
     */
    double ticksSince(Map<Long, Long> start) {
        if (!measures()) {
            return Double.NaN;
        }
        Map<Long, Long> now = sample();
        if (now.isEmpty()) {
            return Double.NaN;
        }
        long ticks = 0;
        for (Map.Entry<Long, Long> e : now.entrySet()) {
            ticks += e.getValue() - start.getOrDefault(e.getKey(), 0L);
        }
        return ticks;
    }
}
