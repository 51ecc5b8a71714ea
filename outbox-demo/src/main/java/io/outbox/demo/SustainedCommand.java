package io.outbox.demo;

import io.outbox.relay.RelayOptions;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The sustained-load benchmark: writers commit at a fixed rate while relays publish, for a set
 * duration, with a line of figures per minute and the drift between the first and the last
 * minutes; or, with {@code --search}, the highest rate the store sustains.
 */
@Command(name = "sustained", sortOptions = false, usageHelpAutoWidth = true,
        description = {
            "Sustained load: writer threads commit messages at a fixed rate (--rate, split evenly over the "
                    + "--transaction-sizes: one message per transaction and batches of 10 by default) while relays "
                    + "publish them to Kafka and a consumer reads them, for --duration. Every --minute it prints the "
                    + "commit-to-consume latency (p50, p99), the backlog (committed, not yet published), the messages "
                    + "table's and its indexes' size, what the database has not cleaned up behind the deleted rows "
                    + "(PostgreSQL: dead tuples and autovacuum runs; MariaDB: the InnoDB history list length) and the "
                    + "database's and the bench process's CPU milliseconds per 1,000 messages published. At the end: "
                    + "the drift (the last --drift-minutes against the first) and whether every committed message "
                    + "was consumed.",
            "With --search it looks for the highest sustainable rate instead: each trial runs a rate on fresh "
                    + "tables for --settle, then measures the backlog every second over --steady; a rate is "
                    + "sustainable when the backlog's slope (least squares) is at most --max-slope messages per "
                    + "second and the writers committed at least 95%% of the rate. It doubles (or halves) the rate "
                    + "until one passes and one fails, then bisects --search-steps times."},
        exitCodeListHeading = OutboxDemo.EXIT_CODE_LIST_HEADING, exitCodeList = {
            "0:the run ended and every committed message was consumed (search: the search ended)",
            "1:committed messages were not consumed within --drain-timeout", OutboxDemo.EXIT_CODES_2,
            "3:the run failed (a server unreachable, a write or a relay failing)",
            OutboxDemo.EXIT_CODES_130, OutboxDemo.EXIT_CODES_143})
final class SustainedCommand implements Callable<Integer> {

    /** The share of the offered rate the writers must commit for a search trial to pass. */
    static final double WRITER_SHARE = 0.95;

    @Spec
    private CommandSpec spec;

    @Mixin
    private StoreOptions store;

    @Mixin
    private KafkaOptions kafka;

    @Option(names = "--rate", paramLabel = "MSG/S", defaultValue = "500",
            description = "Messages committed per second, all writers together; with --search the first rate "
                    + "tried (default: ${DEFAULT-VALUE}).")
    private int rate;

    @Option(names = "--transaction-sizes", paramLabel = "N[,N...]", split = ",", defaultValue = "1,10",
            description = "Messages per transaction, one size per group of writers; the rate is split evenly over "
                    + "the sizes (default: ${DEFAULT-VALUE}).")
    private List<Integer> transactionSizes;

    @Option(names = "--writers", paramLabel = "W", defaultValue = "4",
            description = "Writer threads, taking the transaction sizes in turn (default: ${DEFAULT-VALUE}).")
    private int writers;

    @Option(names = "--duration", paramLabel = "DURATION", defaultValue = "30m", converter = DurationConverter.class,
            description = "How long the writers write (default: ${DEFAULT-VALUE}).")
    private Duration duration;

    @Option(names = "--minute", paramLabel = "DURATION", defaultValue = "1m", converter = DurationConverter.class,
            description = "The reporting interval: one line of figures each (default: ${DEFAULT-VALUE}).")
    private Duration minute;

    @Option(names = "--drift-minutes", paramLabel = "N", defaultValue = "5",
            description = "Intervals at the start and at the end that the drift compares (default: ${DEFAULT-VALUE}).")
    private int driftMinutes;

    @Option(names = "--drain-timeout", paramLabel = "DURATION", defaultValue = "2m", converter = DurationConverter.class,
            description = "How long, after the writers stop, the relays and the consumer may take to deliver "
                    + "the rest (default: ${DEFAULT-VALUE}).")
    private Duration drainTimeout;

    @Option(names = "--value-bytes", paramLabel = "BYTES", defaultValue = "1024",
            description = "Bytes per message value (default: ${DEFAULT-VALUE}).")
    private int valueBytes;

    @Option(names = "--customers", paramLabel = "K", defaultValue = "1000",
            description = "Distinct message keys (default: ${DEFAULT-VALUE}).")
    private int keys;

    @Option(names = "--relays", paramLabel = "R", defaultValue = "1",
            description = "Relays publishing (default: ${DEFAULT-VALUE}).")
    private int relays;

    @Option(names = "--store-concurrency", paramLabel = "N",
            defaultValue = "" + RelayOptions.DEFAULT_STORE_CONCURRENCY,
            description = "Each relay's store threads (default: ${DEFAULT-VALUE}).")
    private int storeConcurrency;

    @Option(names = "--no-wake-up", description = "The writers do not tell the relays about their commits (as "
            + "a notifier would); the relays find new messages at their poll interval.")
    private boolean noWakeUp;

    @Option(names = "--db-pid", paramLabel = "PID",
            description = "The database server's process, whose CPU time (with its children's) is read. Default: "
                    + "on a local PostgreSQL the backends of the run's connections; on a local MariaDB the server "
                    + "listening on the URL's port; embedded H2 is counted in the bench process.")
    private Long dbPid;

    @Option(names = "--search", description = "Search for the highest sustainable rate instead of one run.")
    private boolean search;

    @Option(names = "--settle", paramLabel = "DURATION", defaultValue = "30s", converter = DurationConverter.class,
            description = "--search: how long each trial runs before its steady state (default: ${DEFAULT-VALUE}).")
    private Duration settle;

    @Option(names = "--steady", paramLabel = "DURATION", defaultValue = "2m", converter = DurationConverter.class,
            description = "--search: the steady state over which the backlog's slope is measured "
                    + "(default: ${DEFAULT-VALUE}).")
    private Duration steady;

    @Option(names = "--max-slope", paramLabel = "MSG/S", defaultValue = "100",
            description = "--search: the highest backlog slope of a sustainable rate (default: ${DEFAULT-VALUE}).")
    private int maxSlope;

    @Option(names = "--search-steps", paramLabel = "N", defaultValue = "3",
            description = "--search: bisections between the highest passing and the lowest failing rate "
                    + "(default: ${DEFAULT-VALUE}).")
    private int searchSteps;

    @Option(names = "--max-rate", paramLabel = "MSG/S", defaultValue = "100000",
            description = "--search: the highest rate tried (default: ${DEFAULT-VALUE}).")
    private int maxRate;

    @Option(names = "--min-rate", paramLabel = "MSG/S", defaultValue = "10",
            description = "--search: the lowest rate tried (default: ${DEFAULT-VALUE}).")
    private int minRate;

    @Mixin
    private LoadOptions load;

    private final ProcCpu proc = ProcCpu.system();

    @Override
    public Integer call() throws Exception {
        CommandLine commandLine = spec.commandLine();
        StoreKind kind = store.resolve(commandLine);
        kafka.check(commandLine);
        load.check(commandLine);
        check(commandLine);
        store.jdbcUrl = DatabaseGauges.withApplicationName(store.jdbcUrl, DatabaseGauges.APPLICATION_NAME_PREFIX
                + ProcessHandle.current().pid());
        PrintWriter out = commandLine.getOut();
        if (search) {
            search(kind, out, commandLine.getErr());
            return OutboxDemo.EXIT_OK;
        }
        return run(kind, out, commandLine.getErr());
    }

    /** Checks the options; throws naming the bad option and value. */
    private void check(CommandLine commandLine) {
        Checks.between(commandLine, "--rate", rate, 1, 1_000_000);
        Checks.between(commandLine, "--writers", writers, 1, 256);
        if (transactionSizes.isEmpty()) {
            throw new ParameterException(commandLine, "--transaction-sizes names no size");
        }
        for (int size : transactionSizes) {
            Checks.between(commandLine, "--transaction-sizes", size, 1, 500);
        }
        if (writers < transactionSizes.size()) {
            throw new ParameterException(commandLine, "--writers " + writers + " is fewer than the "
                    + transactionSizes.size() + " --transaction-sizes " + join(transactionSizes)
                    + ": each size needs a writer");
        }
        Checks.between(commandLine, "--value-bytes", valueBytes, 0, 900_000);
        Checks.between(commandLine, "--customers", keys, 1, 1_000_000);
        Checks.between(commandLine, "--relays", relays, 1, 64);
        Checks.between(commandLine, "--store-concurrency", storeConcurrency, 1, RelayOptions.MAX_STORE_CONCURRENCY);
        Checks.between(commandLine, "--drift-minutes", driftMinutes, 1, 1_000);
        Checks.between(commandLine, "--max-slope", maxSlope, 0, 1_000_000);
        Checks.between(commandLine, "--search-steps", searchSteps, 0, 20);
        Checks.between(commandLine, "--max-rate", maxRate, rate, 10_000_000);
        Checks.between(commandLine, "--min-rate", minRate, 1, rate);
        positive(commandLine, "--duration", duration);
        positive(commandLine, "--drain-timeout", drainTimeout);
        positive(commandLine, "--settle", settle);
        positive(commandLine, "--steady", steady);
        if (minute.compareTo(Duration.ofSeconds(1)) < 0) {
            throw new ParameterException(commandLine, "--minute must be at least 1s but was "
                    + DurationConverter.format(minute));
        }
        if (!search && duration.compareTo(minute.multipliedBy(2L * driftMinutes)) < 0) {
            throw new ParameterException(commandLine, "--duration " + DurationConverter.format(duration)
                    + " is shorter than twice --drift-minutes " + driftMinutes + " of --minute "
                    + DurationConverter.format(minute) + ": the drift compares the first and the last "
                    + driftMinutes + " intervals");
        }
        if (load.transactions) {
            throw new ParameterException(commandLine, "--transactions is not supported by sustained");
        }
        if (dbPid != null && (dbPid < 1 || !proc.available() || proc.stat(dbPid).isEmpty())) {
            throw new ParameterException(commandLine, "--db-pid " + dbPid + ": no such process on this machine");
        }
    }

    private static void positive(CommandLine commandLine, String option, Duration value) {
        if (value.isNegative() || value.isZero()) {
            throw new ParameterException(commandLine, option + " must be positive but was "
                    + DurationConverter.format(value));
        }
    }

    private SustainedLoad.Settings settings(int offered) {
        return new SustainedLoad.Settings(offered, transactionSizes, writers, keys, valueBytes, relays, load.buckets,
                load.batchSize, storeConcurrency, !noWakeUp);
    }

    /**
     * One interval's figures.
     *
     * @param index 1 for the first
     * @param nanos its length
     * @param committed messages committed in it
     * @param published messages the relays published in it
     * @param backlog committed and not yet published at its end
     * @param latency commit-to-consume latencies in microseconds of the messages consumed in it
     * @param benchCpuMillis the bench process's CPU time in it
     * @param dbCpuMillis the database's CPU time in it; NaN when not measured
     * @param db the database's figures at its end
     * @param load the machine's load average at its end
     */
    record Interval(int index, long nanos, long committed, long published, long backlog, Histogram latency,
                    double benchCpuMillis, double dbCpuMillis, DatabaseGauges.Reading db, String load) {
        double committedPerSecond() {
            return committed / (nanos / 1e9);
        }
    }

    /** The run: writers, relays and consumer for --duration, a line per interval, then the drift. */
    private int run(StoreKind kind, PrintWriter out, PrintWriter log) throws Exception {
        String runId = RunIds.next();
        try (RunScope scope = RunScope.open(kind, store, kafka, runId, writers, log)) {
            DemoDatabase database = scope.database();
            database.createSchema();
            String topic = kafka.topicOr("outbox-sustained-" + runId);
            scope.createTopic(topic, kafka.partitionsOr(load.buckets));
            out.printf(Locale.ROOT, "Outbox sustained load, run %s%n  store    %s%n  kafka    %s, topic %s%n", runId,
                    database.describe(), scope.kafka().describe(), topic);
            out.printf(Locale.ROOT, "  load     %,d msg/s for %s, transaction sizes %s over %d writer(s), %,d-byte "
                    + "values, %,d keys, %d relay(s), %d buckets, batch size %d, store concurrency %d, %s%n", rate,
                    DurationConverter.format(duration), join(transactionSizes), writers, valueBytes, keys, relays,
                    load.buckets, load.batchSize, storeConcurrency, noWakeUp ? "relays polling" : "relays woken "
                            + "on commit");
            try (DatabaseGauges gauges = gauges(kind, database);
                 SustainedLoad running = new SustainedLoad(settings(rate), database, topic,
                         scope.kafka().bootstrapServers(), runId)) {
                CpuProbe db = gauges.cpu();
                out.printf(Locale.ROOT, "  cpu      bench: this process (%d processors); database: %s%n",
                        Runtime.getRuntime().availableProcessors(), db.description());
                out.printf(Locale.ROOT, "  machine  load average %s at the start (1, 5, 15 min)%n%n",
                        proc.loadAverage());
                out.printf(Locale.ROOT, "  %-7s %12s %9s %9s %9s %10s %10s %24s %9s %9s %6s%n", "minute",
                        "committed/s", "p50 ms", "p99 ms", "backlog", "table MB", "index MB", cleanupHeader(gauges),
                        "db ms/1k", "bench/1k", "load");
                out.flush();
                List<Interval> intervals = new ArrayList<>();
                running.start();
                long start = System.nanoTime();
                long end = start + duration.toNanos();
                long intervalStart = start;
                long committedBefore = 0;
                long publishedBefore = 0;
                long cpuBefore = ProcCpu.ownCpuNanos();
                Map<Long, Long> dbBefore = db.sample();
                for (int index = 1; intervalStart < end; index++) {
                    long intervalEnd = Math.min(end, intervalStart + minute.toNanos());
                    awaitUntil(intervalEnd, running);
                    long now = System.nanoTime();
                    long committed = running.committed();
                    long published = running.published();
                    long cpu = ProcCpu.ownCpuNanos();
                    double dbTicks = db.ticksSince(dbBefore);
                    dbBefore = db.sample();
                    Interval interval = new Interval(index, now - intervalStart, committed - committedBefore,
                            published - publishedBefore, committed - published, running.intervalLatencies(),
                            (cpu - cpuBefore) / 1e6, ProcCpu.millis(1) * dbTicks, gauges.read(),
                            proc.loadAverage().split(" ")[0]);
                    intervals.add(interval);
                    out.println(line(interval));
                    out.flush();
                    intervalStart = now;
                    committedBefore = committed;
                    publishedBefore = published;
                    cpuBefore = cpu;
                }
                running.stopWriters();
                boolean drained = running.awaitDrained(drainTimeout);
                running.failIfStopped();
                out.println();
                out.println(drift(intervals, driftMinutes));
                out.printf(Locale.ROOT, "messages: %,d committed, %,d consumed, %,d lost%s, %,d read again "
                        + "(at-least-once repeats), %,d not offered (writers more than %d s behind)%n",
                        running.committed(), running.consumed(), running.inFlight(),
                        drained ? "" : " (not consumed within --drain-timeout " + DurationConverter.format(drainTimeout)
                                + ")", running.duplicates(), running.skipped(),
                        SustainedLoad.MAX_WRITER_LAG.toSeconds());
                out.printf(Locale.ROOT, "machine: load average %s at the end (1, 5, 15 min)%n", proc.loadAverage());
                out.flush();
                return drained ? OutboxDemo.EXIT_OK : OutboxDemo.EXIT_LOST;
            }
        }
    }

    private DatabaseGauges gauges(StoreKind kind, DemoDatabase database) {
        String messages = database.tableNames().isEmpty() ? "" : database.tableNames().get(0);
        return DatabaseGauges.open(kind, kind == StoreKind.JDBC ? store.jdbcUrl : null, store.jdbcUser,
                store.jdbcPassword, messages,
                DatabaseGauges.APPLICATION_NAME_PREFIX + ProcessHandle.current().pid(), dbPid, proc);
    }

    private static String cleanupHeader(DatabaseGauges gauges) {
        return gauges.cleanupName().equals("-") ? "cleanup" : gauges.cleanupName();
    }

    /** Sleeps until {@code deadline} ({@link System#nanoTime()}), checking the load every 200 ms. */
    private static void awaitUntil(long deadline, SustainedLoad running) throws InterruptedException {
        for (long left = deadline - System.nanoTime(); left > 0; left = deadline - System.nanoTime()) {
            running.failIfStopped();
            LockSupport.parkNanos(Math.min(left, 200_000_000L));
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted during the sustained run");
            }
        }
    }

    /** One interval's line. */
    static String line(Interval i) {
        DatabaseGauges.Reading db = i.db();
        String cleanup = db.deadTuples() >= 0 ? String.format(Locale.ROOT, "%,d (%d)", db.deadTuples(),
                db.autovacuums()) : db.purgeLag() >= 0 ? String.format(Locale.ROOT, "%,d", db.purgeLag()) : "-";
        return String.format(Locale.ROOT, "  %-7d %,12.0f %9s %9s %,9d %10s %10s %24s %9s %9s %6s", i.index(),
                i.committedPerSecond(), millis(i.latency(), 50), millis(i.latency(), 99), i.backlog(),
                megabytes(db.tableBytes()), megabytes(db.indexBytes()), cleanup,
                RelayBench.BenchResult.number("%.1f", perThousand(i.dbCpuMillis(), i.published())),
                RelayBench.BenchResult.number("%.1f", perThousand(i.benchCpuMillis(), i.published())), i.load());
    }

    private static String millis(Histogram latency, double percentile) {
        return latency.getTotalCount() == 0 ? "-"
                : String.format(Locale.ROOT, "%.1f", latency.getValueAtPercentile(percentile) / 1000.0);
    }

    private static String megabytes(long bytes) {
        return bytes < 0 ? "-" : String.format(Locale.ROOT, "%.1f", bytes / 1e6);
    }

    private static double perThousand(double millis, long messages) {
        return messages == 0 ? Double.NaN : millis / (messages / 1000.0);
    }

    /**
     * The drift line: the first {@code window} intervals against the last (fewer, half each, when
     * the run had fewer than twice as many): p50 and p99, database and bench CPU per 1,000, backlog
     * and table size at the end of each window.
     */
    static String drift(List<Interval> intervals, int window) {
        int n = Math.min(window, intervals.size() / 2);
        if (n == 0) {
            return "drift: not measured (fewer than 2 intervals)";
        }
        List<Interval> first = intervals.subList(0, n);
        List<Interval> last = intervals.subList(intervals.size() - n, intervals.size());
        Histogram a = merged(first);
        Histogram b = merged(last);
        return String.format(Locale.ROOT, "drift (last %d minute(s) against the first %d): p50 %s -> %s ms, "
                + "p99 %s -> %s ms, database CPU %s -> %s ms per 1,000, bench CPU %s -> %s ms per 1,000, "
                + "committed %,.0f -> %,.0f msg/s, backlog %,d -> %,d, table %s -> %s MB, indexes %s -> %s MB", n, n,
                millis(a, 50), millis(b, 50), millis(a, 99), millis(b, 99),
                RelayBench.BenchResult.number("%.1f", dbPerThousand(first)),
                RelayBench.BenchResult.number("%.1f", dbPerThousand(last)),
                RelayBench.BenchResult.number("%.1f", benchPerThousand(first)),
                RelayBench.BenchResult.number("%.1f", benchPerThousand(last)),
                rate(first), rate(last), first.get(n - 1).backlog(), last.get(n - 1).backlog(),
                megabytes(first.get(n - 1).db().tableBytes()), megabytes(last.get(n - 1).db().tableBytes()),
                megabytes(first.get(n - 1).db().indexBytes()), megabytes(last.get(n - 1).db().indexBytes()));
    }

    private static Histogram merged(List<Interval> intervals) {
        Histogram all = new Histogram(intervals.get(0).latency().getHighestTrackableValue(), 3);
        intervals.forEach(i -> all.add(i.latency()));
        return all;
    }

    private static double dbPerThousand(List<Interval> intervals) {
        return perThousand(intervals.stream().mapToDouble(Interval::dbCpuMillis).sum(),
                intervals.stream().mapToLong(Interval::published).sum());
    }

    private static double benchPerThousand(List<Interval> intervals) {
        return perThousand(intervals.stream().mapToDouble(Interval::benchCpuMillis).sum(),
                intervals.stream().mapToLong(Interval::published).sum());
    }

    private static double rate(List<Interval> intervals) {
        return intervals.stream().mapToLong(Interval::committed).sum()
                / (intervals.stream().mapToLong(Interval::nanos).sum() / 1e9);
    }

    /**
     * One search trial's outcome.
     *
     * @param rate the offered rate
     * @param committedPerSecond the writers' rate over the steady state
     * @param slope the backlog's least-squares slope over the steady state, messages per second
     * @param backlogAtEnd the backlog at the end of the steady state
     * @param p99Millis the commit-to-consume p99 over the steady state
     * @param dbPerThousand database CPU milliseconds per 1,000 published over the steady state; NaN
     *     when not measured
     * @param sustainable whether the rate passed
     */
    record Trial(int rate, double committedPerSecond, double slope, long backlogAtEnd, double p99Millis,
                 double dbPerThousand, boolean sustainable) {
    }

    /** Doubles or halves the rate until one passes and one fails, then bisects. */
    private void search(StoreKind kind, PrintWriter out, PrintWriter log) throws Exception {
        out.printf(Locale.ROOT, "Outbox sustainable rate search: backlog slope at most %,d msg/s over %s after %s, "
                        + "writers committing at least %.0f%% of the rate; transaction sizes %s over %d writer(s), "
                        + "%,d-byte values, %d relay(s), %d buckets, batch size %d, store concurrency %d%n",
                maxSlope, DurationConverter.format(steady), DurationConverter.format(settle), WRITER_SHARE * 100,
                join(transactionSizes), writers, valueBytes, relays, load.buckets, load.batchSize, storeConcurrency);
        out.printf(Locale.ROOT, "  machine  load average %s at the start%n", proc.loadAverage());
        out.printf(Locale.ROOT, "  %10s %12s %14s %9s %9s %9s  %s%n", "rate", "committed/s", "slope msg/s",
                "backlog", "p99 ms", "db ms/1k", "sustainable");
        out.flush();
        List<Trial> trials = new ArrayList<>();
        int highestPass = 0;
        int lowestFail = Integer.MAX_VALUE;
        int next = rate;
        while (true) {
            Trial t = trial(kind, next, out, log);
            trials.add(t);
            if (t.sustainable()) {
                highestPass = next;
                int doubled = (int) Math.min(maxRate, 2L * next);
                if (lowestFail != Integer.MAX_VALUE || doubled == next) {
                    break;
                }
                next = doubled;
            } else {
                lowestFail = next;
                if (highestPass > 0 || next == minRate) {
                    break;
                }
                next = Math.max(minRate, next / 2);
            }
        }
        for (int step = 0; step < searchSteps && highestPass > 0 && lowestFail != Integer.MAX_VALUE
                && lowestFail - highestPass > 1; step++) {
            int middle = (highestPass + lowestFail) / 2;
            Trial t = trial(kind, middle, out, log);
            trials.add(t);
            if (t.sustainable()) {
                highestPass = middle;
            } else {
                lowestFail = middle;
            }
        }
        out.printf(Locale.ROOT, "%nsustainable rate: %s (%s) over %d trial(s); load average %s at the end%n",
                highestPass == 0 ? "none found" : String.format(Locale.ROOT, "%,d msg/s", highestPass),
                lowestFail == Integer.MAX_VALUE ? "no rate up to --max-rate " + maxRate + " failed"
                        : String.format(Locale.ROOT, "%,d msg/s failed", lowestFail),
                trials.size(), proc.loadAverage());
        out.flush();
    }

    /** One trial on fresh tables and a fresh topic: settle, then the steady state sampled every second. */
    private Trial trial(StoreKind kind, int offered, PrintWriter out, PrintWriter log) throws Exception {
        String runId = RunIds.next();
        try (RunScope scope = RunScope.open(kind, store, kafka, runId, writers, log)) {
            DemoDatabase database = scope.database();
            database.createSchema();
            String topic = "outbox-sustained-" + runId;
            scope.createTopic(topic, kafka.partitionsOr(load.buckets));
            try (DatabaseGauges gauges = gauges(kind, database);
                 SustainedLoad running = new SustainedLoad(settings(offered), database, topic,
                         scope.kafka().bootstrapServers(), runId)) {
                CpuProbe db = gauges.cpu();
                running.start();
                awaitUntil(System.nanoTime() + settle.toNanos(), running);
                running.intervalLatencies();
                long start = System.nanoTime();
                long committedBefore = running.committed();
                long publishedBefore = running.published();
                Map<Long, Long> dbBefore = db.sample();
                List<double[]> samples = new ArrayList<>();
                long seconds = Math.max(2, steady.toSeconds());
                for (int s = 0; s <= seconds; s++) {
                    awaitUntil(start + s * 1_000_000_000L, running);
                    samples.add(new double[] {(System.nanoTime() - start) / 1e9,
                            running.committed() - running.published()});
                }
                double elapsed = (System.nanoTime() - start) / 1e9;
                double committedRate = (running.committed() - committedBefore) / elapsed;
                long published = running.published() - publishedBefore;
                double dbMillis = ProcCpu.millis(1) * db.ticksSince(dbBefore);
                Histogram latency = running.intervalLatencies();
                double slope = slope(samples);
                boolean pass = slope <= maxSlope && committedRate >= WRITER_SHARE * offered;
                Trial t = new Trial(offered, committedRate, slope, (long) samples.get(samples.size() - 1)[1],
                        latency.getTotalCount() == 0 ? Double.NaN : latency.getValueAtPercentile(99) / 1000.0,
                        perThousand(dbMillis, published), pass);
                out.printf(Locale.ROOT, "  %,10d %,12.0f %,14.1f %,9d %9s %9s  %s%n", t.rate(),
                        t.committedPerSecond(), t.slope(), t.backlogAtEnd(),
                        RelayBench.BenchResult.number("%.1f", t.p99Millis()),
                        RelayBench.BenchResult.number("%.1f", t.dbPerThousand()), t.sustainable() ? "yes" : "no");
                out.flush();
                running.failIfStopped();
                return t;
            }
        }
    }

    /** The least-squares slope of y over x, for {x, y} pairs; 0 for fewer than two. */
    static double slope(List<double[]> points) {
        int n = points.size();
        if (n < 2) {
            return 0;
        }
        double mx = points.stream().mapToDouble(p -> p[0]).average().orElse(0);
        double my = points.stream().mapToDouble(p -> p[1]).average().orElse(0);
        double num = 0;
        double den = 0;
        for (double[] p : points) {
            num += (p[0] - mx) * (p[1] - my);
            den += (p[0] - mx) * (p[0] - mx);
        }
        return den == 0 ? 0 : num / den;
    }

    private static String join(List<Integer> sizes) {
        return String.join(",", sizes.stream().map(String::valueOf).toList());
    }
}
