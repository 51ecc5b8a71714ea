package io.outbox.relay.app;

import io.outbox.relay.internal.Redactor;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.Charset;
import java.util.Map;
import java.util.Properties;
import java.util.function.Consumer;

/**
 * The standalone relay: a process that runs one {@link io.outbox.relay.OutboxRelay} outside the
 * application, configured from a properties file and environment variables. The executable jar of
 * module {@code outbox-relay-app} runs it with every store, the JDBC drivers and a logging
 * binding:
 *
 * <pre>
 * java -jar outbox-relay-app-&lt;version&gt;-all.jar --config relay.properties
 * java -jar outbox-relay-app-&lt;version&gt;-all.jar --help
 * </pre>
 *
 * <p>Configuration: {@code store=<provider name>}, {@code store.<setting>},
 * {@code kafka.<producer setting>} and {@code relay.<option>}; a variable
 * {@code OUTBOX_<KEY>} (upper case, '.' as '_', '_' as "__", '-' as "___") wins over the file.
 * {@code --help} lists every setting with its default. SIGTERM and SIGINT stop the relay (rule R9):
 * it waits up to {@code relay.close.timeout.ms} for the publishes in flight, gives its leases back
 * (unless publishes were still in flight then: their leases expire, logged at WARN), closes the
 * Kafka producer and the store, and exits with {@value #EXIT_OK}. Standard output and standard error
 * pass through a redactor, so no secret of the configuration appears in them, whoever prints it.
 *
 * <p>Exit codes: {@value #EXIT_OK} stop on a signal, leases given back or, with publishes still
 * in flight after the close timeout, left to expire (or help, version, check, print-config);
 * {@value #EXIT_ERROR} unexpected error; {@value #EXIT_USAGE} invalid command line;
 * {@value #EXIT_MISCONFIGURATION} invalid configuration, at start or while running (R6);
 * {@value #EXIT_STOP_TIMEOUT} the stop after a signal took too long.
 */
public final class StandaloneRelay {

    /**
     * Exit code of a stop on SIGTERM or SIGINT, and of {@code --help}, {@code --version}, a valid
     * {@code --check}. The leases were given back, unless publishes were still in flight after
     * {@code relay.close.timeout.ms}: then they expire (logged at WARN).
     */
    public static final int EXIT_OK = 0;

    /** Exit code of an unexpected error. */
    public static final int EXIT_ERROR = 1;

    /** Exit code of an invalid command line (picocli's usual code). */
    public static final int EXIT_USAGE = 2;

    /**
     * Exit code of an invalid configuration at start, or of an
     * {@link io.outbox.spi.OutboxMisconfigurationException} that stopped the relay while running
     * (rule R6), for example messages in a bucket outside the relay's bucket range (S8).
     */
    public static final int EXIT_MISCONFIGURATION = 3;

    /** Exit code when, after SIGTERM or SIGINT, the relay did not stop within its bound. */
    public static final int EXIT_STOP_TIMEOUT = 4;

    private static final String VERSION = readVersion(StandaloneRelay.class, "version.properties");
    private static final String KAFKA_VERSION = readVersion(StandaloneRelay.class, "/kafka/kafka-version.properties");

    private StandaloneRelay() {
    }

    /**
     * Runs the standalone relay and ends the process with its exit code.
     *
     * @param args the command line; {@code --help} describes it
     */
    public static void main(String[] args) {
        // First of all, before any logger exists: every byte to stdout and stderr is redacted.
        Charset charset = Charset.defaultCharset();
        RedactingOutputStream err = new RedactingOutputStream(System.err, charset);
        RedactingOutputStream out = new RedactingOutputStream(System.out, charset);
        System.setErr(new PrintStream(err, true, charset));
        System.setOut(new PrintStream(out, true, charset));
        Lifecycle lifecycle = Lifecycle.process();
        int code;
        try {
            code = execute(args, System.getenv(), System.out, System.err, lifecycle, redactor -> {
                err.redactor(redactor);
                out.redactor(redactor);
            });
        } catch (RuntimeException | Error e) {
            System.err.println("outbox-relay: unexpected error; exiting with code " + EXIT_ERROR + ": " + e);
            e.printStackTrace();
            code = EXIT_ERROR;
        }
        lifecycle.exit(code);
    }

    /**
     * Runs the command line without ending the process.
     *
     * @param args the command line
     * @param environment the environment variables
     * @param out where help, version and the printed configuration go
     * @param err where command-line and configuration errors go
     * @param lifecycle how a run is stopped
     * @param secretsFound told the configuration's redactor as soon as the secrets are known
     * @return the exit code
     */
    static int execute(String[] args, Map<String, String> environment, PrintStream out, PrintStream err,
                       Lifecycle lifecycle, Consumer<Redactor> secretsFound) {
        RelayCommand command = new RelayCommand(environment, out, err, lifecycle, secretsFound);
        int code = command.commandLine().execute(args);
        out.flush();
        err.flush();
        return code;
    }

    /**
     * The version of this relay.
     *
     * @return the project version, or {@code unknown} when the build left no version file
     */
    static String version() {
        return VERSION;
    }

    /**
     * The version of the Kafka clients on the class path.
     *
     * @return the version, or {@code unknown}
     */
    static String kafkaVersion() {
        return KAFKA_VERSION;
    }

    private static String readVersion(Class<?> anchor, String resource) {
        try (InputStream in = anchor.getResourceAsStream(resource)) {
            if (in == null) {
                return "unknown";
            }
            Properties properties = new Properties();
            properties.load(in);
            return properties.getProperty("version", "unknown");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
