package io.outbox.demo;

import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The command line of the demo, the load generator and the benchmark ({@code ./demo} at the
 * repository root runs it). Subcommands: {@code run} (the default: place orders, relay them,
 * check every delivery), {@code bench} (relay throughput against a plain producer), {@code sustained} (a steady rate held
 * for a long time, and the search for the highest sustainable rate, {@link SustainedCommand}), {@code fleet-sim} (a simulated fleet of
 * relays on the in-memory store, {@link FleetSimCommand}) and
 * {@code broker} (a local Kafka broker until Ctrl-C, {@link BrokerCommand}); {@code --help}
 * on each.
 *
 * <p>Exit status: {@value #EXIT_OK} success; {@value #EXIT_LOST} messages lost;
 * {@value #EXIT_MISORDERED} a customer's orders out of order; 5 both; {@value #EXIT_USAGE}
 * invalid options; {@value #EXIT_ERROR} the run failed (a server unreachable, a write or a relay
 * failing); {@value #EXIT_INTERRUPTED} interrupted (Ctrl-C) and 143 terminated (SIGTERM), after
 * the run's clean-up ({@link RunScope}).
 */
@Command(name = "demo", sortOptions = false, usageHelpAutoWidth = true,
        exitCodeListHeading = OutboxDemo.EXIT_CODE_LIST_HEADING, exitCodeList = {
            OutboxDemo.EXIT_CODES_0, OutboxDemo.EXIT_CODES_1, OutboxDemo.EXIT_CODES_2,
            OutboxDemo.EXIT_CODES_3, OutboxDemo.EXIT_CODES_4, OutboxDemo.EXIT_CODES_5,
            OutboxDemo.EXIT_CODES_130, OutboxDemo.EXIT_CODES_143},
        description = {"The outbox demo: an order service in miniature on any store, with relays and a consumer "
                + "that checks every delivery; and a benchmark of the relay against a plain Kafka producer.",
            "Without a command it runs the demo (run)."})
public final class OutboxDemo implements Runnable {

    /** Exit status: every committed message delivered, every customer's orders in order. */
    public static final int EXIT_OK = 0;
    /** Exit status bit: committed messages were never delivered. */
    public static final int EXIT_LOST = 1;
    /** Exit status: the command line is invalid. */
    public static final int EXIT_USAGE = 2;
    /** Exit status: the run failed (a server unreachable, a write or a relay failing). */
    public static final int EXIT_ERROR = 3;
    /** Exit status bit: a customer's orders were delivered out of placement order. */
    public static final int EXIT_MISORDERED = 4;
    /** Exit status: interrupted (Ctrl-C, SIGINT: 128 + 2); the run's tables and topics were dropped first. */
    public static final int EXIT_INTERRUPTED = 130;

    /** The heading of the exit status list in {@code --help}. */
    static final String EXIT_CODE_LIST_HEADING = "%nExit status:%n";
    /** An entry of the exit status list in the help of the demo. */
    static final String EXIT_CODES_0 = "0:every committed order delivered, each customer's orders in order";
    /** An entry of the exit status list in the help of the demo. */
    static final String EXIT_CODES_1 = "1:messages lost (committed but never delivered)";
    /** An entry of the exit status list in the help of the demo. */
    static final String EXIT_CODES_2 = "2:invalid options";
    /** An entry of the exit status list in the help of the demo. */
    static final String EXIT_CODES_3 = "3:the run failed (a server unreachable, a write or a relay failing)";
    /** An entry of the exit status list in the help of the demo. */
    static final String EXIT_CODES_4 = "4:a customer's orders delivered out of placement order";
    /** An entry of the exit status list in the help of the demo. */
    static final String EXIT_CODES_5 = "5:both lost and out of order (1 + 4)";
    /** An entry of the exit status list in the help of the demo. */
    static final String EXIT_CODES_130 = "130:interrupted (Ctrl-C), after dropping the run's tables and topic";
    /** An entry of the exit status list in the help of the demo. */
    static final String EXIT_CODES_143 = "143:terminated (SIGTERM), after the same clean-up";

    private static final Set<String> TOP_LEVEL_OPTIONS = Set.of("-h", "--help");

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
    private boolean help;

    @Spec
    private CommandSpec spec;

    private final RunCommand run = new RunCommand();
    private final BenchCommand bench = new BenchCommand();
    private final NotifyBenchCommand notifyBench = new NotifyBenchCommand();
    private final FleetSimCommand fleetSim = new FleetSimCommand();
    private final SustainedCommand sustained = new SustainedCommand();

    /** Creates the command line with fresh subcommands. */
    public OutboxDemo() {
    }

    /**
     * Runs the command line and exits with its status.
     *
     * @param args the arguments; without a subcommand, {@code run} is meant
     */
    public static void main(String[] args) {
        Charset charset = Charset.defaultCharset();
        int status = new OutboxDemo().execute(new PrintWriter(System.out, true, charset),
                new PrintWriter(System.err, true, charset), args);
        System.exit(status); // the embedded broker and clients leave threads behind
    }

    /**
     * Runs the command line.
     *
     * @param out where summaries and help go
     * @param err where progress notes and errors go
     * @param args the arguments; without a subcommand, {@code run} is meant
     * @return the exit status
     */
    public int execute(PrintWriter out, PrintWriter err, String... args) {
        CommandLine commandLine = new CommandLine(this)
                .addSubcommand(run)
                .addSubcommand(bench)
                .addSubcommand(sustained)
                .addSubcommand(notifyBench)
                .addSubcommand(fleetSim)
                .addSubcommand(new BrokerCommand())
                .setOut(out)
                .setErr(err)
                .setParameterExceptionHandler((e, arguments) -> {
                    CommandLine cmd = e.getCommandLine();
                    String message = StoreOptions.redactor(cmd.getCommandSpec()).redact(e.getMessage());
                    cmd.getErr().println("error: " + message);
                    CommandLine.UnmatchedArgumentException.printSuggestions(e, cmd.getErr());
                    cmd.getErr().println("See '" + cmd.getCommandSpec().qualifiedName() + " --help' for the options.");
                    cmd.getErr().flush();
                    return EXIT_USAGE;
                })
                .setExecutionExceptionHandler((e, cmd, parsed) -> {
                    if (RunScope.shuttingDown()) {
                        return EXIT_INTERRUPTED; // the run's shutdown hook says so and cleans up
                    }
                    // Drivers may echo the URL, with its password, in their messages.
                    cmd.getErr().println("error: " + StoreOptions.redactor(cmd.getCommandSpec()).redact(describe(e)));
                    cmd.getErr().flush();
                    return EXIT_ERROR;
                });
        int status = commandLine.execute(withDefaultCommand(args));
        out.flush();
        err.flush();
        return status;
    }

    /** Without a subcommand, the arguments are the demo's. */
    private static String[] withDefaultCommand(String[] args) {
        if (args.length > 0 && (!args[0].startsWith("-") || TOP_LEVEL_OPTIONS.contains(args[0]))) {
            return args;
        }
        List<String> withRun = new ArrayList<>(List.of(args));
        withRun.add(0, "run");
        return withRun.toArray(String[]::new);
    }

    /** The message and the chain of causes, without a stack trace. */
    private static String describe(Throwable e) {
        StringBuilder text = new StringBuilder(String.valueOf(e.getMessage() != null ? e.getMessage() : e));
        for (Throwable cause = e.getCause(); cause != null && cause != cause.getCause(); cause = cause.getCause()) {
            String message = cause.getMessage() != null ? cause.getMessage() : cause.toString();
            if (!text.toString().contains(message)) {
                text.append("\n  caused by: ").append(cause.getClass().getSimpleName()).append(": ").append(message);
            }
        }
        return text.toString();
    }

    /** The demo subcommand of this command line, for its summary. */
    RunCommand runCommand() {
        return run;
    }

    /** Prints the usage; not reached through {@link #execute}, which runs {@code run} without a command. */
    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }
}
