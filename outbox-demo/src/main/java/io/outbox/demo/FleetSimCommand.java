package io.outbox.demo;

import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code ./demo fleet-sim}: a fleet of simulated relays on the in-memory store in simulated time
 * ({@link FleetSimulation}: the shipped lease code, the relay engine's schedule), 100 relays and
 * 65,536 buckets by default. Prints the rounds until converged after a cold start, a join, a
 * graceful leave and a crash; the buckets moved against the fair-share difference; the moves of a
 * stable fleet; store calls per relay per second at steady state; the CPU time per acquisition at
 * this and at smaller bucket counts; and, for small fleets under churn (rule R14), the longest time a
 * bucket stayed unowned and the ownership changes per minute. The CPU figures are measurements, never
 * checked against a bound; the exit status says whether the correctness targets held.
 */
@Command(name = "fleet-sim", sortOptions = false, usageHelpAutoWidth = true,
        description = {
            "A fleet of simulated relays on the in-memory store, in simulated time with a clock per relay and "
                    + "store latency: rounds until converged (cold start, one join, one graceful leave, one crash), "
                    + "buckets moved against the fair-share difference, moves of a stable fleet, store calls per "
                    + "relay per second and CPU per acquisition; then churn runs (relays that crash young, crash "
                    + "loops, slow starters): the longest time a bucket stayed unowned, and ownership changes per "
                    + "minute. Runs the shipped lease code (acquireBucketLeases of the in-memory store) on the relay "
                    + "engine's schedule."},
        exitCodeListHeading = OutboxDemo.EXIT_CODE_LIST_HEADING, exitCodeList = {
            "0:every target held: converged within 3 rounds of the cold start, the join and the leave (within 3 "
                    + "rounds of the lease duration after the crash), moves within the fair-share difference plus "
                    + "one, no move in a stable fleet, no bucket unowned longer than two lease durations under churn",
            "1:a target was missed (the figures say which)", OutboxDemo.EXIT_CODES_2})
final class FleetSimCommand implements Callable<Integer> {

    /** The rounds a join or a leave may take (the fleet simulation's target). */
    static final int TARGET_ROUNDS = 3;

    @Option(names = "--relays", paramLabel = "N", defaultValue = "100",
            description = "Relays in the fleet (default: ${DEFAULT-VALUE}).")
    private int relays;

    @Option(names = "--buckets", paramLabel = "N", defaultValue = "65536",
            description = "Buckets, 1-65536 (default: ${DEFAULT-VALUE}).")
    private int buckets;

    @Option(names = "--lease-duration", paramLabel = "DURATION", defaultValue = "30s",
            converter = DurationConverter.class, description = "lease.duration.ms (default: ${DEFAULT-VALUE}).")
    private Duration leaseDuration;

    @Option(names = "--renew-interval", paramLabel = "DURATION", defaultValue = "10s",
            converter = DurationConverter.class,
            description = "lease.renew.interval.ms: one round (default: ${DEFAULT-VALUE}).")
    private Duration renewInterval;

    @Option(names = "--poll-interval", paramLabel = "DURATION", defaultValue = "1s",
            converter = DurationConverter.class, description = "poll.interval.ms (default: ${DEFAULT-VALUE}).")
    private Duration pollInterval;

    @Option(names = "--store-latency-ms", paramLabel = "MS", defaultValue = "5",
            description = "Simulated store latency within a call, ms (default: ${DEFAULT-VALUE}).")
    private long storeLatencyMillis;

    @Option(names = "--max-clock-offset-ms", paramLabel = "MS", defaultValue = "5000",
            description = "Each relay's clock is off by up to this, ms (default: ${DEFAULT-VALUE}).")
    private long maxClockOffsetMillis;

    @Option(names = "--rounds", paramLabel = "N", defaultValue = "5",
            description = "Rounds of the stable fleet measured (default: ${DEFAULT-VALUE}).")
    private int rounds;

    @Option(names = "--seed", paramLabel = "N", defaultValue = "1",
            description = "Seed of start instants and clock offsets (default: ${DEFAULT-VALUE}).")
    private long seed;

    @Option(names = "--churn-runs", paramLabel = "N", defaultValue = "10",
            description = "Churn runs (rule R14), one seed each from --seed on; 0 for none (default: ${DEFAULT-VALUE}).")
    private int churnRuns;

    @Option(names = "--churn-duration", paramLabel = "DURATION", defaultValue = "5m",
            converter = DurationConverter.class,
            description = "Simulated time of each churn run (default: ${DEFAULT-VALUE}).")
    private Duration churnDuration;

    @Option(names = "--churn-buckets", paramLabel = "N", defaultValue = "64",
            description = "Buckets of the churn runs, 1-65536 (default: ${DEFAULT-VALUE}).")
    private int churnBuckets;

    @Option(names = "--scaling", paramLabel = "N", split = ",", defaultValue = "4096,16384",
            description = "Smaller bucket counts whose CPU per acquisition is measured too, same relays; "
                    + "'none' for none (default: ${DEFAULT-VALUE}).")
    private List<String> scaling;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
    private boolean help;

    @Spec
    private CommandSpec spec;

    @Override
    public Integer call() {
        validate();
        PrintWriter out = spec.commandLine().getOut();
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        out.printf(Locale.ROOT, "fleet-sim: %d relays, %,d buckets, lease %s, renew interval %s (one round), poll %s, "
                        + "store latency %d ms, clock offsets up to %d ms, seed %d%n", relays, buckets,
                DurationConverter.format(leaseDuration), DurationConverter.format(renewInterval),
                DurationConverter.format(pollInterval), storeLatencyMillis, maxClockOffsetMillis, seed);
        out.printf(Locale.ROOT, "machine: %d cores, load average %.1f at start%n", os.getAvailableProcessors(),
                os.getSystemLoadAverage());
        out.flush();
        List<String> missed = new ArrayList<>();
        FleetSimulation fleet = simulation(buckets);
        int leaseRounds = (int) Math.ceil((double) leaseDuration.toMillis() / renewInterval.toMillis());
        int limit = leaseRounds + 2 * TARGET_ROUNDS + 2;
        List<String> ids = FleetSimulation.relayIds(relays);

        FleetSimulation.Episode start = fleet.coldStart(ids, limit);
        report(out, start, TARGET_ROUNDS, missed);
        long stableMoves = fleet.runRounds(rounds);
        out.printf(Locale.ROOT, "stable fleet: %d buckets moved in %d rounds%n", stableMoves, rounds);
        if (stableMoves != 0) {
            missed.add("moves in a stable fleet");
        }
        FleetSimulation.SteadyState steady = fleet.measure(rounds);
        double rowWrites = fleet.leaseRowWritesPerRelaySecond(1);
        out.printf(Locale.ROOT, "steady state, per relay: %.3f store calls/s (%.3f acquireBucketLeases + %.3f "
                        + "bucketsWithPending), %.1f lease rows written/s%n", steady.storeCallsPerSecond(),
                steady.acquireCallsPerSecond(), steady.pendingCallsPerSecond(), rowWrites);
        printCpu(out, steady);
        if (steady.moved() != 0) {
            missed.add("moves in a stable fleet while measuring");
        }

        String middle = ids.get(ids.size() / 2) + "a";
        report(out, fleet.join(middle, limit), TARGET_ROUNDS, missed);
        report(out, fleet.leave(middle, limit), TARGET_ROUNDS, missed);
        String victim = ids.get(ids.size() / 3);
        report(out, fleet.crash(victim, limit), leaseRounds + TARGET_ROUNDS, missed);
        long afterMoves = fleet.runRounds(2);
        out.printf(Locale.ROOT, "stable fleet after the changes: %d buckets moved in 2 rounds%n", afterMoves);
        if (afterMoves != 0) {
            missed.add("moves in a stable fleet after the changes");
        }

        for (String size : scaling) {
            if (size.equalsIgnoreCase("none")) {
                continue;
            }
            FleetSimulation smaller = simulation(Integer.parseInt(size.trim()));
            smaller.coldStart(ids, limit);
            smaller.runRounds(1);
            printCpu(out, smaller.measure(rounds));
        }
        churn(out, missed);
        out.printf(Locale.ROOT, "machine: load average %.1f at the end%n", os.getSystemLoadAverage());
        out.println(missed.isEmpty() ? "targets: all held" : "targets missed: " + String.join("; ", missed));
        out.flush();
        return missed.isEmpty() ? 0 : 1;
    }

    private FleetSimulation simulation(int bucketCount) {
        return simulation(bucketCount, seed);
    }

    private FleetSimulation simulation(int bucketCount, long runSeed) {
        return FleetSimulation.builder().bucketCount(bucketCount).leases(leaseDuration, renewInterval)
                .pollInterval(pollInterval).storeLatency(Duration.ofMillis(storeLatencyMillis))
                .maxClockOffset(Duration.ofMillis(maxClockOffsetMillis)).seed(runSeed).build();
    }

    /**
     * R14: churn runs scaled to the lease (lives of a tenth of a lease to a whole one, restarts of a
     * twentieth to a fifth, one restart in four slow by half a lease more), each on a fleet of its
     * own; the target is two lease durations.
     */
    private void churn(PrintWriter out, List<String> missed) {
        if (churnRuns == 0) {
            return;
        }
        FleetSimulation.Churn settings = FleetSimulation.Churn.builder()
                .life(leaseDuration.dividedBy(10), leaseDuration)
                .restart(leaseDuration.dividedBy(20), leaseDuration.dividedBy(5))
                .slowStarts(4, leaseDuration.dividedBy(2)).build();
        out.printf(Locale.ROOT, "churn: %d run(s) of %s, %,d buckets, %d veterans, %d slot(s) of relays living %s to %s "
                        + "replaced under new ids after %s to %s (one restart in %d slow by %s more), %d crash-looping "
                        + "id(s)%n", churnRuns, DurationConverter.format(churnDuration), churnBuckets,
                settings.veterans(), settings.churningSlots(), DurationConverter.format(settings.minLife()),
                DurationConverter.format(settings.maxLife()), DurationConverter.format(settings.minRestart()),
                DurationConverter.format(settings.maxRestart()), settings.slowStartEvery(),
                DurationConverter.format(settings.slowStart()), settings.crashLoops());
        long target = 2 * leaseDuration.toMillis();
        long longest = 0;
        for (int run = 0; run < churnRuns; run++) {
            FleetSimulation.ChurnRun result = simulation(churnBuckets, seed + run).churn(settings, churnDuration);
            out.printf(Locale.ROOT, "churn seed %d: %s%n", seed + run, result);
            out.flush();
            longest = Math.max(longest, result.longestUnownedMillis());
        }
        out.printf(Locale.ROOT, "churn: longest unowned %.1f s over %d run(s) (target %.1f s, two lease durations)%n",
                longest / 1000.0, churnRuns, target / 1000.0);
        if (longest > target) {
            missed.add("a bucket stayed unowned " + longest + " ms under churn, more than two lease durations");
        }
    }

    private static void printCpu(PrintWriter out, FleetSimulation.SteadyState steady) {
        out.printf(Locale.ROOT, "CPU per acquisition at %,d buckets, %d relays: %.2f ms (elapsed %.2f ms); "
                        + "per bucketsWithPending %.3f ms%n", steady.bucketCount(), steady.relays(),
                steady.acquireCpuNanos() / 1e6, steady.acquireWallNanos() / 1e6, steady.pendingCpuNanos() / 1e6);
        out.flush();
    }

    private static void report(PrintWriter out, FleetSimulation.Episode episode, int targetRounds,
                               List<String> missed) {
        boolean cold = episode.event().equals("cold start");
        out.printf(Locale.ROOT, "%s %s: %s, %d buckets moved%s%n", episode.event(), episode.relayId(),
                episode.converged() ? "converged in " + episode.rounds() + " round(s) ("
                        + String.format(Locale.ROOT, "%.1f", episode.millisToConverge() / 1000.0) + " s)"
                        : "NOT converged",
                episode.moved(), cold ? " after the first grants" : " (fair-share difference "
                        + episode.shareDifference() + ")");
        out.flush();
        if (!episode.converged() || episode.rounds() > targetRounds) {
            missed.add(episode.event() + " took " + (episode.converged() ? episode.rounds() + " rounds" : "too long")
                    + " (target " + targetRounds + ")");
        }
        if (!cold && episode.moved() > episode.shareDifference() + 1) {
            missed.add(episode.event() + " moved " + episode.moved() + " buckets, more than the fair-share difference "
                    + episode.shareDifference() + " plus one");
        }
    }

    private void validate() {
        if (relays < 1) {
            throw new ParameterException(spec.commandLine(), "--relays must be at least 1 but was " + relays);
        }
        if (buckets < 1 || buckets > 65_536) {
            throw new ParameterException(spec.commandLine(), "--buckets must be 1-65536 but was " + buckets);
        }
        if (renewInterval.compareTo(leaseDuration) >= 0) {
            throw new ParameterException(spec.commandLine(), "--renew-interval must be shorter than --lease-duration"
                    + " but was " + DurationConverter.format(renewInterval) + " >= "
                    + DurationConverter.format(leaseDuration));
        }
        if (storeLatencyMillis < 0 || maxClockOffsetMillis < 0) {
            throw new ParameterException(spec.commandLine(), "--store-latency-ms and --max-clock-offset-ms must not be "
                    + "negative but were " + storeLatencyMillis + " and " + maxClockOffsetMillis);
        }
        if (rounds < 1) {
            throw new ParameterException(spec.commandLine(), "--rounds must be at least 1 but was " + rounds);
        }
        if (churnRuns < 0) {
            throw new ParameterException(spec.commandLine(), "--churn-runs must not be negative but was " + churnRuns);
        }
        if (churnBuckets < 1 || churnBuckets > 65_536) {
            throw new ParameterException(spec.commandLine(), "--churn-buckets must be 1-65536 but was " + churnBuckets);
        }

        for (String size : scaling) {
            if (size.equalsIgnoreCase("none")) {
                continue;
            }
            try {
                int n = Integer.parseInt(size.trim());
                if (n < 1 || n > 65_536) {
                    throw new NumberFormatException();
                }
            } catch (NumberFormatException e) {
                throw new ParameterException(spec.commandLine(), "--scaling takes bucket counts 1-65536 or 'none' "
                        + "but got '" + size + "'");
            }
        }
    }
}
