package io.outbox.demo;

import java.util.Locale;
import picocli.CommandLine;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/** How the demo's relays learn of commits (rules R8, N1-N6): {@code --notify} and the transport's settings. */
final class NotifyOptions {

    /** The ways a relay can learn of a commit. */
    enum Mode {
        /** The writers wake the relays of this process directly after each commit (the default). */
        LOCAL,
        /** No wake-up: the relays find the messages at their next poll. */
        NONE,
        /** Redis pub/sub: each relay listens on its own connection, as a relay in another process would. */
        REDIS,
        /** PostgreSQL LISTEN/NOTIFY, the NOTIFY inside each writer's transaction. */
        POSTGRES;

        String cliName() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** Whether the relays hear the writers only through a transport, as relays of other processes do. */
        boolean crossProcess() {
            return this == REDIS || this == POSTGRES;
        }
    }

    /** Reads {@code --notify}, naming the valid values when the given one is not. */
    static final class ModeConverter implements CommandLine.ITypeConverter<Mode> {
        @Override
        public Mode convert(String value) {
            for (Mode mode : Mode.values()) {
                if (mode.cliName().equalsIgnoreCase(value.trim())) {
                    return mode;
                }
            }
            throw new CommandLine.TypeConversionException("'" + value + "' is not a wake-up mode; use one of local, "
                    + "none, redis, postgres");
        }
    }

    static final String DEFAULT_REDIS_URI = "redis://127.0.0.1:6379";

    @Option(names = "--notify", paramLabel = "MODE", defaultValue = "local", converter = ModeConverter.class,
            description = "How relays learn of a commit: local (the writers wake the relays of this process directly), "
                    + "none (polling only, every second), redis (Redis pub/sub) or postgres (LISTEN/NOTIFY, "
                    + "needs --jdbc-url jdbc:postgresql:...). With redis and postgres every relay listens on a "
                    + "connection of its own and is woken only through the transport, as a relay in another "
                    + "process would be; the summary shows the hints the relays received "
                    + "(default: ${DEFAULT-VALUE}).")
    Mode mode;

    @Option(names = "--redis-uri", paramLabel = "URI",
            description = "Redis for --notify redis (default: " + DEFAULT_REDIS_URI + ").")
    String redisUri;

    /**
     * Checks the options against the store.
     *
     * @param jdbcUrl the store's JDBC URL, or null when the store is not a JDBC server
     * @throws ParameterException naming the offending option
     */
    void check(CommandLine commandLine, String jdbcUrl) {
        if (redisUri != null && mode != Mode.REDIS) {
            throw new ParameterException(commandLine, "--redis-uri is for --notify redis, but --notify is "
                    + mode.cliName());
        }
        if (mode == Mode.POSTGRES && (jdbcUrl == null || !jdbcUrl.startsWith("jdbc:postgresql:"))) {
            throw new ParameterException(commandLine, "--notify postgres needs the store on PostgreSQL "
                    + "(--jdbc-url jdbc:postgresql://...): the NOTIFY is issued inside the writer's transaction");
        }
    }

    /** The Redis URI for {@code --notify redis}. */
    String redisUri() {
        return redisUri != null ? redisUri : DEFAULT_REDIS_URI;
    }
}
