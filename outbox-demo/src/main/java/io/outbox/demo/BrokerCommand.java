package io.outbox.demo;

import io.outbox.embedded.EmbeddedKafkaBroker;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * A local single-node Kafka broker by command ({@code ./demo broker --port 9092}): starts an
 * {@link EmbeddedKafkaBroker}, prints the address clients use on standard output, and runs until
 * the process is stopped (Ctrl-C, SIGTERM), then shuts the broker down and deletes its data
 * directory. For trying the standalone relay or an application on one machine, not for production.
 *
 * <p>Standard output gets two lines: {@code bootstrap.servers=127.0.0.1:<port>} once the broker
 * answers, and {@code stopped; deleted <dir>} at the end. Exit status: 0 after a stop by signal
 * (the JVM reports 130 for SIGINT and 143 for SIGTERM), 2 for an invalid command line, 3 when the
 * broker does not start (the port is taken, say).
 */
@Command(name = "broker", mixinStandardHelpOptions = false, sortOptions = false, usageHelpAutoWidth = true,
        description = {"Runs a single-node Kafka broker (KRaft, broker and controller in one JVM) on 127.0.0.1 until "
                + "Ctrl-C, then deletes its data. Prints bootstrap.servers=127.0.0.1:<port> when it is ready. "
                + "For local runs and tests only: no security, one replica, data in a temporary directory."},
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {"0:stopped by Ctrl-C or SIGTERM (a shell shows 130 or 143: the JVM exits by the signal)", "2:invalid options",
            "3:the broker did not start (a port in use is named)"})
final class BrokerCommand implements Callable<Integer> {

    /** The client port when none is given: Kafka's usual 9092. */
    public static final int DEFAULT_PORT = 9092;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
    private boolean help;

    @Option(names = "--port", paramLabel = "PORT", defaultValue = "" + DEFAULT_PORT,
            description = "The client (PLAINTEXT) port, 1-65535, or 0 for a free one. Default: ${DEFAULT-VALUE}.")
    private int port;

    @Option(names = "--controller-port", paramLabel = "PORT", defaultValue = "0",
            description = "The KRaft controller port (clients never use it); 0, the default, picks a free one.")
    private int controllerPort;

    @Spec
    private CommandSpec spec;

    private final CountDownLatch stopped = new CountDownLatch(1);

    /** Creates the command; picocli sets its options. */
    public BrokerCommand() {
    }

    /**
     * Runs the broker until the JVM is stopped.
     *
     * @param args {@code [--port PORT] [--controller-port PORT] [--help]}
     */
    public static void main(String[] args) {
        Charset charset = Charset.defaultCharset();
        CommandLine commandLine = new CommandLine(new BrokerCommand())
                .setOut(new PrintWriter(System.out, true, charset))
                .setErr(new PrintWriter(System.err, true, charset));
        System.exit(commandLine.execute(args));
    }

    /**
     * Starts the broker, prints its address and blocks until a shutdown hook (the process is
     * stopping) has closed it.
     *
     * @return 0 once stopped, or 3 when the broker did not start
     * @throws ParameterException if a port is out of range (picocli reports it with exit 2)
     */
    @Override
    public Integer call() {
        requirePort("--port", port);
        requirePort("--controller-port", controllerPort);
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        EmbeddedKafkaBroker broker;
        try {
            broker = EmbeddedKafkaBroker.builder().port(port).controllerPort(controllerPort).start();
        } catch (RuntimeException e) {
            err.println("error: the Kafka broker did not start on port " + port + ": " + e.getMessage());
            err.flush();
            return 3;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            String dir = broker.logDir().getParent().toString();
            broker.close();
            out.println("stopped; deleted " + dir);
            out.flush();
            stopped.countDown();
        }, "embedded-kafka-shutdown"));
        out.println("bootstrap.servers=" + broker.bootstrapServers());
        out.flush();
        err.println("Kafka broker running on " + broker.bootstrapServers() + " (data in "
                + broker.logDir().getParent() + "); Ctrl-C stops it and deletes the data");
        err.flush();
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }

    private void requirePort(String option, int value) {
        if (value < 0 || value > 65535) {
            throw new ParameterException(spec.commandLine(),
                    option + " must be a port in [0, 65535] but was " + value);
        }
    }
}
