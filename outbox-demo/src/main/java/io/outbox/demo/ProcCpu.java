package io.outbox.demo;

import com.sun.management.OperatingSystemMXBean;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.stream.Stream;

/**
 * CPU time of processes as Linux reports it under {@code /proc}, for the benchmark: this process
 * through {@code com.sun.management.OperatingSystemMXBean}, other processes (a broker, a database
 * server) through {@code /proc/<pid>/stat}, and the machine's load average from
 * {@code /proc/loadavg}. Times in {@code /proc} are clock ticks of {@code USER_HZ}, which is 100
 * on every Linux architecture Java runs on ({@code getconf CLK_TCK}).
 *
 * <p>The {@code /proc} root is a parameter so tests can feed it files; {@link #system()} reads the
 * real one. Thread-safe (it holds no state but the root).
 */
final class ProcCpu {

    /** Clock ticks per second of the times in {@code /proc/<pid>/stat} ({@code USER_HZ}). */
    static final long TICKS_PER_SECOND = 100;

    private final Path root;

    ProcCpu(Path root) {
        this.root = root;
    }

    /** The real {@code /proc}. */
    static ProcCpu system() {
        return new ProcCpu(Path.of("/proc"));
    }

    /** Whether this machine has a {@code /proc} with process statistics (Linux). */
    boolean available() {
        return Files.isReadable(root.resolve("self").resolve("stat"));
    }

    /**
     * The fields of one {@code /proc/<pid>/stat} line that the benchmark uses; times in clock ticks.
     *
     * @param pid the process id (field 1)
     * @param command the command name between the parentheses (field 2), which may itself hold
     *     spaces and parentheses
     * @param parent the parent's pid (field 4)
     * @param user user-mode time (field 14)
     * @param system kernel-mode time (field 15)
     * @param childrenUser user-mode time of waited-for children (field 16)
     * @param childrenSystem kernel-mode time of waited-for children (field 17)
     */
    record Stat(long pid, String command, long parent, long user, long system, long childrenUser,
                long childrenSystem) {

        /** The process's own time. */
        long ownTicks() {
            return user + system;
        }

        /** Its own time and that of the children it has reaped. */
        long ticksWithReapedChildren() {
            return user + system + childrenUser + childrenSystem;
        }

        /**
         * Parses one line of {@code /proc/<pid>/stat}.
         *
         * @throws IllegalArgumentException if the line is not in that format, quoting it
         */
        static Stat parse(String line) {
            int open = line.indexOf('(');
            int close = line.lastIndexOf(')'); // the command may contain ')' itself
            if (open < 1 || close < open) {
                throw new IllegalArgumentException("not a /proc/<pid>/stat line: '" + line.strip() + "'");
            }
            String[] rest = line.substring(close + 1).trim().split(" +");
            // rest[0] is field 3 (state); field n is rest[n - 3].
            if (rest.length < 15) {
                throw new IllegalArgumentException("a /proc/<pid>/stat line with " + (rest.length + 2)
                        + " fields, expected at least 17: '" + line.strip() + "'");
            }
            try {
                return new Stat(Long.parseLong(line.substring(0, open).trim()), line.substring(open + 1, close),
                        Long.parseLong(rest[1]), Long.parseLong(rest[11]), Long.parseLong(rest[12]),
                        Long.parseLong(rest[13]), Long.parseLong(rest[14]));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not a /proc/<pid>/stat line: '" + line.strip() + "'", e);
            }
        }
    }

    /**
     * Reads one process's statistics.
     *
     * @return empty when there is no such process (any more)
     */
    Optional<Stat> stat(long pid) {
        try {
            return Optional.of(Stat.parse(Files.readString(root.resolve(Long.toString(pid)).resolve("stat"))));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            if (!Files.exists(root.resolve(Long.toString(pid)))) {
                return Optional.empty(); // exited between the check and the read
            }
            throw new UncheckedIOException("cannot read " + root.resolve(Long.toString(pid)).resolve("stat"), e);
        }
    }

    /** Every process's statistics, by pid. */
    Map<Long, Stat> all() {
        Map<Long, Stat> stats = new HashMap<>();
        try (Stream<Path> entries = Files.list(root)) {
            entries.map(p -> p.getFileName().toString()).filter(name -> name.chars().allMatch(Character::isDigit))
                    .forEach(name -> stat(Long.parseLong(name)).ifPresent(s -> stats.put(s.pid(), s)));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + root, e);
        }
        return stats;
    }

    /**
     * CPU ticks of a process and all its live descendants, plus what they reaped: the whole
     * server for one that forks a process per connection (PostgreSQL). A descendant that exits
     * between two readings moves from the descendants into its parent's reaped-children time, so
     * the sum does not drop; only one whose parent never reaps it is lost.
     *
     * @return empty when there is no such process
     */
    OptionalLong treeTicks(long pid) {
        Map<Long, Stat> all = all();
        Stat top = all.get(pid);
        if (top == null) {
            return OptionalLong.empty();
        }
        Map<Long, List<Stat>> children = new HashMap<>();
        for (Stat s : all.values()) {
            children.computeIfAbsent(s.parent(), k -> new ArrayList<>()).add(s);
        }
        long ticks = top.ticksWithReapedChildren();
        List<Stat> pending = new ArrayList<>(children.getOrDefault(pid, List.of()));
        while (!pending.isEmpty()) {
            Stat s = pending.remove(pending.size() - 1);
            ticks += s.ticksWithReapedChildren();
            pending.addAll(children.getOrDefault(s.pid(), List.of()));
        }
        return OptionalLong.of(ticks);
    }

    /**
     * CPU ticks of this process's JIT compiler threads and garbage collector threads, from
     * {@code self/task/<tid>/stat}: work the JVM does for the code that runs, not that code itself.
     * A thread is a compiler thread when its name holds {@code CompilerThre} (HotSpot's
     * {@code C1 CompilerThread0}, {@code C2 CompilerThread0}, cut to 15 characters by Linux) and a
     * collector thread when it starts with {@code GC } or {@code G1 } ({@code GC Thread#0},
     * {@code G1 Conc#0}, {@code G1 Refine#0}, ...). A thread that exits between two readings takes
     * its ticks with it, so over a phase the figures can only be too low.
     *
     * @return empty when there is no {@code self/task} to read (not Linux)
     */
    Optional<VmThreadTicks> ownVmThreadTicks() {
        Path tasks = root.resolve("self").resolve("task");
        long jit = 0;
        long gc = 0;
        try (Stream<Path> entries = Files.list(tasks)) {
            for (Path task : (Iterable<Path>) entries::iterator) {
                Stat stat;
                try {
                    stat = Stat.parse(Files.readString(task.resolve("stat")));
                } catch (IOException e) {
                    continue; // exited meanwhile
                }
                String name = stat.command();
                if (name.contains("CompilerThre")) {
                    jit += stat.ownTicks();
                } else if (name.startsWith("GC ") || name.startsWith("G1 ")) {
                    gc += stat.ownTicks();
                }
            }
        } catch (IOException | UncheckedIOException e) {
            return Optional.empty();
        }
        return Optional.of(new VmThreadTicks(jit, gc));
    }

    /**
     * CPU ticks of the JVM's own threads, see {@link #ownVmThreadTicks()}.
     *
     * @param jit the JIT compiler threads'
     * @param gc the garbage collector threads'
     */
    record VmThreadTicks(long jit, long gc) {
        /** What was spent since {@code earlier}. */
        VmThreadTicks minus(VmThreadTicks earlier) {
            return new VmThreadTicks(jit - earlier.jit, gc - earlier.gc);
        }
    }

    /** Milliseconds of CPU time in {@code ticks} clock ticks. */
    static double millis(long ticks) {
        return ticks * 1000.0 / TICKS_PER_SECOND;
    }

    /**
     * This process's CPU time, all threads, in nanoseconds.
     *
     * @throws IllegalStateException if the JVM does not report it
     */
    static long ownCpuNanos() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof OperatingSystemMXBean os) {
            long nanos = os.getProcessCpuTime();
            if (nanos >= 0) {
                return nanos;
            }
        }
        throw new IllegalStateException("this JVM does not report its process CPU time");
    }

    /**
     * The load average over 1, 5 and 15 minutes, from {@code loadavg} under the root, else the
     * JVM's one-minute figure.
     *
     * @return "1.23 0.98 0.75", or "unknown"
     */
    String loadAverage() {
        try {
            return parseLoadAverage(Files.readString(root.resolve("loadavg")));
        } catch (IOException | IllegalArgumentException e) {
            double oneMinute = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
            return oneMinute < 0 ? "unknown" : String.format(Locale.ROOT, "%.2f (1 min)", oneMinute);
        }
    }

    /**
     * The first three fields of a {@code /proc/loadavg} line.
     *
     * @throws IllegalArgumentException if they are not three decimal numbers
     */
    static String parseLoadAverage(String line) {
        String[] fields = line.trim().split("\\s+");
        if (fields.length < 3) {
            throw new IllegalArgumentException("not a /proc/loadavg line: '" + line.strip() + "'");
        }
        for (int i = 0; i < 3; i++) {
            try {
                Double.parseDouble(fields[i]);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not a /proc/loadavg line: '" + line.strip() + "'", e);
            }
        }
        return fields[0] + " " + fields[1] + " " + fields[2];
    }

    /**
     * The process listening on a local TCP port, found through {@code net/tcp} and
     * {@code net/tcp6} (the listening socket's inode) and the processes' {@code fd} links to it.
     * Sees only processes whose {@code fd} directory this user may read.
     *
     * @return empty when no readable process listens on the port
     */
    OptionalLong listeningPid(int port) {
        List<Long> inodes = new ArrayList<>();
        for (String table : List.of("tcp", "tcp6")) {
            try {
                inodes.addAll(listeningInodes(Files.readAllLines(root.resolve("net").resolve(table)), port));
            } catch (IOException e) {
                // no IPv6, say
            }
        }
        if (inodes.isEmpty()) {
            return OptionalLong.empty();
        }
        List<String> targets = inodes.stream().map(i -> "socket:[" + i + "]").toList();
        try (Stream<Path> entries = Files.list(root)) {
            for (Path process : (Iterable<Path>) entries::iterator) {
                String name = process.getFileName().toString();
                if (!name.chars().allMatch(Character::isDigit)) {
                    continue;
                }
                try (Stream<Path> fds = Files.list(process.resolve("fd"))) {
                    for (Path fd : (Iterable<Path>) fds::iterator) {
                        try {
                            if (targets.contains(Files.readSymbolicLink(fd).toString())) {
                                return OptionalLong.of(Long.parseLong(name));
                            }
                        } catch (IOException e) {
                            // closed meanwhile
                        }
                    }
                } catch (IOException | UncheckedIOException e) {
                    // not ours to read, or exited
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + root, e);
        }
        return OptionalLong.empty();
    }

    /**
     * The inodes of the sockets listening (state {@code 0A}) on {@code port} in the lines of a
     * {@code /proc/net/tcp} or {@code tcp6} table (the first line is its header).
     */
    static List<Long> listeningInodes(List<String> lines, int port) {
        List<Long> inodes = new ArrayList<>();
        for (String line : lines.subList(Math.min(1, lines.size()), lines.size())) {
            String[] f = line.trim().split("\\s+");
            if (f.length < 10) {
                continue;
            }
            int colon = f[1].lastIndexOf(':');
            if (colon < 0 || !f[3].equals("0A")) {
                continue;
            }
            try {
                if (Integer.parseInt(f[1].substring(colon + 1), 16) == port) {
                    inodes.add(Long.parseLong(f[9]));
                }
            } catch (NumberFormatException e) {
                // not a socket line
            }
        }
        return inodes;
    }
}
