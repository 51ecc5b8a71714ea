package io.outbox.relay.app;

import io.outbox.relay.internal.LogText;
import io.outbox.relay.internal.Redactor;
import io.outbox.spi.DeadLetters;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.OutboxStore;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import picocli.CommandLine.Option;

/**
 * What the operator commands ({@code dead-letters ...}, {@code pending}) share: the same
 * configuration file as the relay, the store it names, {@code --json}, and the exit codes.
 *
 * <p>Exit codes: {@value #EXIT_OK} done; {@value StandaloneRelay#EXIT_ERROR} the store failed;
 * {@value StandaloneRelay#EXIT_USAGE} invalid command line (a malformed message id, say);
 * {@value StandaloneRelay#EXIT_MISCONFIGURATION} invalid configuration; {@value #EXIT_NOT_FOUND}
 * a message id named has no dead letter; {@value #EXIT_UNSUPPORTED} the store lacks the
 * capability; {@value #EXIT_NOT_CONFIRMED} a purge was not confirmed.
 */
abstract class OperatorCommand implements Callable<Integer> {

    /** Done. */
    static final int EXIT_OK = StandaloneRelay.EXIT_OK;
    /** A message id named has no dead letter. */
    static final int EXIT_NOT_FOUND = 5;
    /** The configured store does not offer the capability the command needs. */
    static final int EXIT_UNSUPPORTED = 6;
    /** A purge was neither confirmed at the prompt nor given {@code --yes}. */
    static final int EXIT_NOT_CONFIRMED = 7;

    /** Where a purge reads its confirmation: standard input; tests replace it. */
    static volatile Supplier<InputStream> input = () -> System.in;

    @Option(names = {"-c", "--config"}, paramLabel = "FILE", converter = RelayCommand.ConfigFileConverter.class,
            description = "The relay's properties file (UTF-8), a regular file; OUTBOX_* environment variables win "
                    + "over it, as for the relay.")
    Path config;

    @Option(names = "--json", description = "Print JSON instead of text.")
    boolean json;

    /**
     * Hides the configuration's secrets in everything the command prints, once it is read;
     * until then the patterns only.
     */
    private Redactor redactor = Redactor.patternsOnly();

    /** Lets a subcommand find the top command's streams, environment and -c. */
    abstract RelayCommand root();

    PrintStream out() {
        return root().out();
    }

    PrintStream err() {
        return root().err();
    }

    @Override
    public final Integer call() {
        RelayConfiguration configuration;
        try {
            configuration = RelayConfiguration.read(config != null ? config : root().configFile(),
                    root().environment());
            redactor = configuration.redactor();
            root().secretsFound(redactor);
            configuration.resolve();
        } catch (OutboxMisconfigurationException e) {
            return fail(StandaloneRelay.EXIT_MISCONFIGURATION, "invalid configuration: " + e.getMessage());
        }
        OutboxStore store;
        try {
            // Never changes the schema: a mistyped prefix shows as absent tables, not a new empty outbox.
            Map<String, String> settings = new HashMap<>(configuration.storeSettings());
            configuration.provider().schemaChangingSettings().forEach(key -> settings.put(key, "false"));
            store = configuration.provider().create(settings);
        } catch (OutboxMisconfigurationException e) {
            return fail(StandaloneRelay.EXIT_MISCONFIGURATION, "invalid store configuration: "
                    + configuration.storeKeysAsWritten(e.getMessage()));
        } catch (RuntimeException e) {
            return fail(StandaloneRelay.EXIT_ERROR, "could not open the store "
                    + configuration.provider().name() + ": " + e);
        }
        try {
            return run(store, configuration);
        } catch (OutboxMisconfigurationException e) {
            return fail(StandaloneRelay.EXIT_MISCONFIGURATION, e.getMessage());
        } catch (RuntimeException e) {
            return fail(StandaloneRelay.EXIT_ERROR, "store call failed: " + e);
        } finally {
            if (store instanceof AutoCloseable closeable) {
                try {
                    closeable.close();
                } catch (Exception e) {
                    err().println("outbox-relay: closing the store failed: " + redactor.oneLine(String.valueOf(e)));
                }
            }
            out().flush();
            err().flush();
        }
    }

    /** The command's work on the opened store; returns the exit code. */
    abstract int run(OutboxStore store, RelayConfiguration configuration);

    /** The store's dead letters, or null after telling the operator the store lacks them. */
    DeadLetters deadLetters(OutboxStore store, RelayConfiguration configuration) {
        Optional<DeadLetters> dead = store.deadLetters();
        if (dead.isPresent()) {
            return dead.get();
        }
        fail(EXIT_UNSUPPORTED, "the store " + configuration.provider().name() + " (" + store.getClass().getName()
                + ") has no dead letters: it offers no DeadLetters (capability C4)");
        return null;
    }

    /** Prints an error on one line, secrets hidden, escaped; returns the code. */
    int fail(int code, String message) {
        err().println("outbox-relay: " + redactor.oneLine(message));
        err().println("outbox-relay: exiting with code " + code);
        err().flush();
        return code;
    }

    /**
     * Stored or foreign text for human output: secrets hidden, control characters and the like
     * escaped ({@link Redactor#display}).
     */
    String shown(String text) {
        return redactor.display(text);
    }

    /** Stored or foreign text as a JSON string: secrets hidden, then {@link #quote}. */
    String jsonText(String text) {
        return jsonText(redactor, text);
    }

    /** Stored or foreign text as a JSON string: secrets hidden by the redactor, then {@link #quote}. */
    static String jsonText(Redactor redactor, String text) {
        return quote(redactor.redact(text));
    }

    /** What hides the configuration's secrets in the command's output. */
    Redactor redactor() {
        return redactor;
    }

    /**
     * A JSON string literal, exact: it decodes to the text. Besides what JSON requires, the
     * characters {@link LogText#isEscaped} are written as escapes too, so the output is also safe
     * to print on a terminal.
     */
    static String quote(String text) {
        if (text == null) {
            return "null";
        }
        StringBuilder sb = new StringBuilder("\"");
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (LogText.isEscaped(c)) {
                        LogText.appendEscape(sb, c);
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"').toString();
    }

    /** A JSON object from keys and already-encoded values, in order. */
    static String object(Map<String, String> fields) {
        StringBuilder sb = new StringBuilder("{");
        fields.forEach((k, v) -> {
            if (sb.length() > 1) {
                sb.append(", ");
            }
            sb.append(quote(k)).append(": ").append(v);
        });
        return sb.append('}').toString();
    }
}
