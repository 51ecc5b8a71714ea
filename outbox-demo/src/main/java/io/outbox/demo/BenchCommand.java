package io.outbox.demo;

import io.outbox.relay.RelayOptions;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** The benchmark: relays draining a pre-filled store, against a plain producer sending the same records. */
@Command(name = "bench", sortOptions = false, usageHelpAutoWidth = true,
        description = {
            "Relay throughput: pre-fills the store with N messages (not timed), times the relays draining them to "
                    + "Kafka (from their start until every message is acknowledged and deleted), and in the same "
                    + "run times a plain KafkaProducer with the relays' producer settings (acks=all, idempotence, "
                    + "same linger.ms and batch.size) sending the same records and flushing. Prints both rates "
                    + "and their ratio, per run and the median, after a warm-up round that is not counted. With "
                    + "--transactions every round also times the relays in the transactional mode on the same "
                    + "messages and prints that rate beside the default mode's. Then the store alone reads and "
                    + "deletes the same messages again without a broker (the store's own work per message; "
                    + "--no-store-alone leaves it out), from which it prints a ratio ceiling: the highest ratio "
                    + "the machine's processors allow a relay that costs at least the plain producer's CPU per "
                    + "message plus the store alone's.",
            "For each phase it also prints the CPU milliseconds per 1,000 messages of the bench process, of the "
                    + "broker and of the database (see --broker-pid, --db-pid), the statements and bytes the "
                    + "relays read per message (JDBC stores), medians with the lowest and highest run, and the "
                    + "machine's load average. For figures that match a real deployment run the broker in its own "
                    + "process (./demo broker --port 9092) and pass --bootstrap-servers 127.0.0.1:9092."},
        exitCodeListHeading = OutboxDemo.EXIT_CODE_LIST_HEADING, exitCodeList = {
            "0:the benchmark ran to its end", OutboxDemo.EXIT_CODES_2,
            "3:the benchmark failed (a server unreachable, a write or a relay failing)",
            OutboxDemo.EXIT_CODES_130, OutboxDemo.EXIT_CODES_143})
final class BenchCommand implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    @Mixin
    private StoreOptions store;

    @Mixin
    private KafkaOptions kafka;

    @Option(names = "--messages", paramLabel = "N", defaultValue = "100000",
            description = "Messages per run (default: ${DEFAULT-VALUE}).")
    private int messages;

    @Option(names = "--value-bytes", paramLabel = "BYTES", defaultValue = "1024",
            description = "Bytes per message value (default: ${DEFAULT-VALUE}).")
    private int valueBytes;

    @Option(names = "--customers", paramLabel = "K", defaultValue = "1000",
            description = "Distinct message keys (default: ${DEFAULT-VALUE}).")
    private int keys;

    @Option(names = "--relays", paramLabel = "R", defaultValue = "1",
            description = "Relays draining the store (default: ${DEFAULT-VALUE}).")
    private int relays;

    @Option(names = "--store-concurrency", paramLabel = "N",
            defaultValue = "" + RelayOptions.DEFAULT_STORE_CONCURRENCY,
            description = "Each relay's store threads (relay option store.concurrency; default: ${DEFAULT-VALUE}, "
                    + "the relay's default).")
    private int storeConcurrency;

    @Option(names = "--no-prefetch", description = "Relays drain each bucket one batch at a time (relay option "
            + "prefetch=false) instead of reading its next batch during the publish of the one before.")
    private boolean noPrefetch;

    @Option(names = "--no-meter", description = "Do not count the relays' JDBC calls (statements, calls, rows and "
            + "bytes per message, and the PostgreSQL backends whose CPU is read without --db-pid): the counting wraps "
            + "every JDBC call and result-set read, whose CPU is in the bench process's relay figure.")
    private boolean noMeter;

    @Option(names = "--no-store-alone", description = "Leave out the phase that times the store alone reading and "
            + "deleting the same messages without a broker (the store's own work per message, and with it the "
            + "relay's cost beyond the plain producer's and the store's).")
    private boolean noStoreAlone;

    @Option(names = "--tracing", description = "Register an OpenTelemetry SDK (batch span processor, an exporter that "
            + "drops every span) as the global one before the bench: each message is created inside a span, so it "
            + "carries a traceparent header, and the relays start a PRODUCER span per batch linked to each message "
            + "(rules O1, O2). Without it no SDK is present and the tracing code is the OpenTelemetry API's no-op.")
    private boolean tracing;

    @Option(names = "--runs", paramLabel = "N", defaultValue = "5", description = "Counted runs (default: ${DEFAULT-VALUE}).")
    private int runs;

    @Option(names = "--broker-pid", paramLabel = "PID",
            description = "The Kafka broker's process on this machine, whose CPU time (with its children's) the bench "
                    + "reads from /proc over each phase. Default: the process listening on the bootstrap port when "
                    + "it is on this machine's loopback; the embedded broker is counted in the bench process.")
    private Long brokerPid;

    @Option(names = "--db-pid", paramLabel = "PID",
            description = "The database server's process on this machine, read the same way (with every child: "
                    + "PostgreSQL forks one per connection). Default: on a local PostgreSQL the backends of the "
                    + "relays' own connections (pg_backend_pid()); embedded H2 is counted in the bench process.")
    private Long dbPid;

    @Option(names = "--warmup-messages", paramLabel = "N", defaultValue = "20000",
            description = "Messages of the warm-up run, not counted; 0 for none (default: ${DEFAULT-VALUE}).")
    private int warmupMessages;

    @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "10m", converter = DurationConverter.class,
            description = "How long the relays may take to drain one run (default: ${DEFAULT-VALUE}).")
    private Duration timeout;

    @Mixin
    private LoadOptions load;

    private RelayBench.BenchResult result;

    /** The result of the last run, or null. */
    RelayBench.BenchResult result() {
        return result;
    }

    @Override
    public Integer call() throws Exception {
        CommandLine commandLine = spec.commandLine();
        StoreKind kind = store.resolve(commandLine);
        kafka.check(commandLine);
        Checks.between(commandLine, "--messages", messages, 1, 10_000_000);
        Checks.between(commandLine, "--value-bytes", valueBytes, 0, 900_000);
        Checks.between(commandLine, "--customers", keys, 1, 1_000_000);
        Checks.between(commandLine, "--relays", relays, 1, 64);
        Checks.between(commandLine, "--store-concurrency", storeConcurrency, 1, RelayOptions.MAX_STORE_CONCURRENCY);
        load.check(commandLine);
        Checks.between(commandLine, "--runs", runs, 1, 100);
        Checks.between(commandLine, "--warmup-messages", warmupMessages, 0, 10_000_000);
        checkPid(commandLine, "--broker-pid", brokerPid);
        checkPid(commandLine, "--db-pid", dbPid);
        if (timeout.isNegative() || timeout.isZero()) {
            throw new ParameterException(commandLine, "--timeout must be positive but was "
                    + DurationConverter.format(timeout));
        }
        RelayBench.Settings settings = new RelayBench.Settings(kind, store, kafka, messages, valueBytes, keys, relays,
                load.buckets, load.batchSize, storeConcurrency, runs, warmupMessages, timeout, !load.noProgress,
                load.transactions, !noPrefetch, brokerPid, dbPid, !noMeter, !noStoreAlone);
        BenchTracing benchTracing = tracing ? BenchTracing.install() : null;
        try {
            result = new RelayBench(settings, commandLine.getErr()).run();
        } finally {
            if (benchTracing != null) {
                benchTracing.close();
            }
        }
        commandLine.getOut().print(result.render());
        commandLine.getOut().println(benchTracing == null
                ? "tracing: off (no OpenTelemetry SDK; the API's no-op)"
                : "tracing: on (OpenTelemetry SDK, batch span processor, dropping exporter; "
                        + benchTracing.exported() + " spans exported, the rest dropped by the full queue)");
        commandLine.getOut().flush();
        return OutboxDemo.EXIT_OK;
    }

    /** A pid option, when given, must name a process whose statistics this machine's /proc shows. */
    private static void checkPid(CommandLine commandLine, String option, Long pid) {
        if (pid == null) {
            return;
        }
        ProcCpu proc = ProcCpu.system();
        if (pid < 1 || !proc.available() || proc.stat(pid).isEmpty()) {
            throw new ParameterException(commandLine, option + " " + pid + ": no such process on this machine"
                    + (proc.available() ? "" : " (no /proc to read its CPU time from)"));
        }
    }
}
