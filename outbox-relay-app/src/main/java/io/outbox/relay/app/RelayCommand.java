package io.outbox.relay.app;

import io.outbox.MessageIds;
import io.outbox.relay.RelayOptions;
import io.outbox.relay.internal.Redactor;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.OutboxStoreProvider;
import io.outbox.spi.OutboxStores;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.function.Consumer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.UsageMessageSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/** The command line of {@link StandaloneRelay}, parsed by picocli. */
@Command(name = "outbox-relay", mixinStandardHelpOptions = true, versionProvider = RelayCommand.Version.class,
        sortOptions = false, usageHelpWidth = SettingsHelp.WIDTH,
        subcommands = {DeadLettersCommand.class, PendingCommand.class, LeasesCommand.class, DrainCommand.Drain.class,
            DrainCommand.Resume.class},
        description = {
            "Publishes the pending messages of a transactional outbox store to Kafka and deletes each one after "
                    + "the broker acknowledged it. Runs until SIGTERM or SIGINT, then stops: it waits up to "
                    + "relay.close.timeout.ms for the publishes in flight and gives its bucket leases back to the "
                    + "other relays (if publishes are still in flight then, their leases expire instead).",
            ""})
final class RelayCommand implements Callable<Integer> {

    private static final String SETTINGS_SECTION = "outboxSettings";

    @Option(names = {"-c", "--config"}, paramLabel = "FILE", converter = ConfigFileConverter.class,
            description = "The properties file (UTF-8), a regular file. Optional: OUTBOX_* environment variables, "
                    + "which win over the file, can hold every setting.")
    private Path config;

    @Option(names = "--check",
            description = "Validate the configuration and exit (0 valid, 3 invalid). Connects to nothing: a store "
                    + "or broker that is down, or wrong credentials, show only when the relay runs.")
    private boolean check;

    @Option(names = "--print-config",
            description = "Print the effective configuration (defaults and enforced Kafka settings included, "
                    + "secrets hidden) and where each value came from, then exit.")
    private boolean printConfig;

    private final Map<String, String> environment;
    private final PrintStream out;
    private final PrintStream err;
    private final Lifecycle lifecycle;
    private final Consumer<Redactor> secretsFound;

    RelayCommand(Map<String, String> environment, PrintStream out, PrintStream err, Lifecycle lifecycle,
                 Consumer<Redactor> secretsFound) {
        this.environment = environment;
        this.out = out;
        this.err = err;
        this.lifecycle = lifecycle;
        this.secretsFound = secretsFound;
    }

    /** For the operator commands: the configuration file given before the subcommand, or null. */
    Path configFile() {
        return config;
    }

    /** For the operator commands: the environment variables. */
    Map<String, String> environment() {
        return environment;
    }

    /** For the operator commands: standard output. */
    PrintStream out() {
        return out;
    }

    /** For the operator commands: standard error. */
    PrintStream err() {
        return err;
    }

    /** For the operator commands: tells the process's streams the configuration's secrets. */
    void secretsFound(Redactor redactor) {
        secretsFound.accept(redactor);
    }

    /**
     * The picocli command line for this command, with the settings section in its help.
     *
     * @return a new command line writing to this command's streams
     */
    CommandLine commandLine() {
        CommandLine commandLine = new CommandLine(this);
        commandLine.setOut(new PrintWriter(out, true));
        commandLine.setErr(new PrintWriter(err, true));
        commandLine.getHelpSectionMap().put(SETTINGS_SECTION, help -> settingsText());
        List<String> sections = new ArrayList<>(commandLine.getHelpSectionKeys());
        sections.add(sections.indexOf(UsageMessageSpec.SECTION_KEY_FOOTER_HEADING), SETTINGS_SECTION);
        commandLine.setHelpSectionKeys(sections);
        commandLine.setParameterExceptionHandler(RelayCommand::invalidCommandLine);
        // Message ids only in their canonical form: UUID.fromString reads 1-1-1-1-1 as another id.
        commandLine.registerConverter(UUID.class, RelayCommand::messageId);
        return commandLine;
    }

    /** A message id of the command line, parsed by {@link MessageIds}. */
    private static UUID messageId(String text) {
        try {
            return MessageIds.parse(text);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.TypeConversionException(e.getMessage());
        }
    }

    /**
     * The {@code -c} file: refused at once, before anything opens it, when it exists but is no
     * regular file (a FIFO would block the relay until something writes to it).
     */
    static final class ConfigFileConverter implements CommandLine.ITypeConverter<Path> {

        /** Created by picocli. */
        ConfigFileConverter() {
        }

        @Override
        public Path convert(String value) {
            Path file = Path.of(value);
            String special = RelayConfiguration.notRegularFile("configuration file " + file, file);
            if (special != null) {
                throw new CommandLine.TypeConversionException(special);
            }
            return file;
        }
    }

    /** A short message instead of the whole help, which lists every setting and runs long. */
    private static int invalidCommandLine(CommandLine.ParameterException e, String[] args) {
        PrintWriter err = e.getCommandLine().getErr();
        // The message repeats what was typed: one line, secrets hidden, nothing a terminal obeys.
        err.println("outbox-relay: " + Redactor.patternsOnly().oneLine(e.getMessage()));
        CommandLine.UnmatchedArgumentException.printSuggestions(e, err);
        err.println("outbox-relay: --help lists every option and setting; exiting with code "
                + StandaloneRelay.EXIT_USAGE);
        err.flush();
        return StandaloneRelay.EXIT_USAGE;
    }

    private static String settingsText() {
        List<OutboxStoreProvider> providers;
        try {
            providers = OutboxStores.providers();
        } catch (OutboxMisconfigurationException e) {
            return "\nStores: " + e.getMessage() + "\n";
        }
        return "\n" + SettingsHelp.text(providers);
    }

    @Override
    public Integer call() {
        RelayConfiguration configuration;
        try {
            configuration = RelayConfiguration.read(config, environment);
        } catch (OutboxMisconfigurationException e) {
            return invalid(Redactor.patternsOnly(), e);
        }
        secretsFound.accept(configuration.redactor());
        RelayConfiguration.Resolved resolved;
        try {
            resolved = configuration.resolve();
        } catch (OutboxMisconfigurationException e) {
            return invalid(configuration.redactor(), e);
        }
        if (printConfig) {
            out.print(configuration.describe(resolved));
            out.flush();
            return StandaloneRelay.EXIT_OK;
        }
        if (check) {
            RelayOptions options = resolved.options();
            if (!resolved.unknownKafkaKeys().isEmpty()) {
                err.println("outbox-relay: warning: not Kafka producer settings, passed through anyway: "
                        + resolved.unknownKafkaKeys().stream().map(k -> RelayConfiguration.KAFKA_PREFIX + k).toList());
            }
            out.println("configuration is valid: store=" + configuration.provider().name() + " relay.bucket.count="
                    + options.bucketCount() + " kafka.bootstrap.servers="
                    + configuration.redactor().redact(String.valueOf(resolved.producerConfig().get("bootstrap.servers"))));
            out.flush();
            return StandaloneRelay.EXIT_OK;
        }
        return new RelayRunner(configuration, resolved, lifecycle).run();
    }

    private int invalid(Redactor redactor, OutboxMisconfigurationException e) {
        err.println("outbox-relay: invalid configuration: " + redactor.oneLine(e.getMessage()));
        err.println("outbox-relay: --help lists every setting; exiting with code "
                + StandaloneRelay.EXIT_MISCONFIGURATION);
        err.flush();
        return StandaloneRelay.EXIT_MISCONFIGURATION;
    }

    /** The version lines of {@code --version}. */
    static final class Version implements CommandLine.IVersionProvider {

        /** Created by picocli. */
        Version() {
        }

        @Override
        public String[] getVersion() {
            return new String[] {
                "outbox-relay " + StandaloneRelay.version(),
                "Kafka clients " + StandaloneRelay.kafkaVersion(),
                "Java " + Runtime.version() + " (" + System.getProperty("java.vendor", "unknown vendor") + ")"
            };
        }
    }
}
