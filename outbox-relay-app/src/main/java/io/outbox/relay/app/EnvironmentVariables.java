package io.outbox.relay.app;

import io.outbox.spi.OutboxMisconfigurationException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * Settings from environment variables. A setting's variable is {@value #PREFIX} followed by its
 * key in upper case, with each {@code '.'} written as {@code '_'}, each {@code '_'} as
 * {@code "__"} and each {@code '-'} as {@code "___"} (the rule of Confluent's Kafka images):
 *
 * <pre>
 * store                      OUTBOX_STORE
 * store.url                  OUTBOX_STORE_URL
 * kafka.bootstrap.servers    OUTBOX_KAFKA_BOOTSTRAP_SERVERS
 * relay.bucket.count         OUTBOX_RELAY_BUCKET_COUNT
 * kafka.my_setting           OUTBOX_KAFKA_MY__SETTING
 * kafka.my-setting           OUTBOX_KAFKA_MY___SETTING
 * </pre>
 *
 * Reading back, the name after {@value #PREFIX} is lower-cased and each run of one, two or three
 * underscores becomes {@code '.'}, {@code '_'} or {@code '-'}; a longer run is refused. Only
 * {@code OUTBOX_STORE} and variables starting with {@code OUTBOX_STORE_}, {@code OUTBOX_KAFKA_},
 * {@code OUTBOX_RELAY_}, {@code OUTBOX_NOTIFY_} or {@code OUTBOX_HTTP_} are settings; other {@value #PREFIX} variables are ignored (and
 * listed), so that a deployment's own variables never break the relay. Keys with upper-case
 * letters, or with two separators in a row, have no variable: set them in the file.
 */
final class EnvironmentVariables {

    /** The prefix of every variable the relay reads. */
    static final String PREFIX = "OUTBOX_";

    /** Variables with {@value #PREFIX} that configure something else than a setting. */
    static final Set<String> NOT_SETTINGS = Set.of("OUTBOX_LOG_LEVEL");

    private static final List<String> GROUPS = List.of("STORE_", "KAFKA_", "RELAY_", "NOTIFY_", "HTTP_");

    private EnvironmentVariables() {
    }

    /**
     * The settings found in an environment.
     *
     * @param settings key to value, sorted by key
     * @param variables key to the variable it came from
     * @param ignored {@value #PREFIX} variables that are not settings, sorted, without
     *     {@link #NOT_SETTINGS}
     */
    record Found(Map<String, String> settings, Map<String, String> variables, List<String> ignored) {

        Found {
            settings = Collections.unmodifiableMap(new TreeMap<>(settings));
            variables = Collections.unmodifiableMap(new TreeMap<>(variables));
            ignored = List.copyOf(ignored);
        }
    }

    /**
     * Reads the settings of an environment.
     *
     * @param environment variable to value, for example {@link System#getenv()}; not null
     * @return the settings and the ignored variables
     * @throws OutboxMisconfigurationException naming a setting variable with a run of four or
     *     more underscores, or one that names no key ({@code OUTBOX_KAFKA_})
     */
    static Found read(Map<String, String> environment) {
        Map<String, String> settings = new TreeMap<>();
        Map<String, String> variables = new TreeMap<>();
        List<String> ignored = new ArrayList<>();
        new TreeMap<>(environment).forEach((variable, value) -> {
            if (!variable.startsWith(PREFIX) || NOT_SETTINGS.contains(variable)) {
                return;
            }
            String key = keyFor(variable);
            if (key == null) {
                ignored.add(variable);
                return;
            }
            settings.put(key, Objects.requireNonNullElse(value, ""));
            variables.put(key, variable);
        });
        return new Found(settings, variables, ignored);
    }

    /**
     * The variable that sets a key.
     *
     * @param key a setting key, for example {@code store.url}; not null
     * @return the variable name, for example {@code OUTBOX_STORE_URL}
     */
    static String variableFor(String key) {
        StringBuilder name = new StringBuilder(PREFIX);
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            switch (c) {
                case '.' -> name.append('_');
                case '_' -> name.append("__");
                case '-' -> name.append("___");
                default -> name.append(Character.toUpperCase(c));
            }
        }
        return name.toString();
    }

    /**
     * The key a variable sets.
     *
     * @param variable a variable name; not null
     * @return the key, or null when the variable is not a setting
     * @throws OutboxMisconfigurationException if a setting variable is malformed
     */
    static String keyFor(String variable) {
        if (!variable.startsWith(PREFIX)) {
            return null;
        }
        String rest = variable.substring(PREFIX.length());
        if (!rest.equals("STORE") && GROUPS.stream().noneMatch(rest::startsWith)) {
            return null;
        }
        String key = decode(variable, rest);
        int dot = key.indexOf('.');
        if (!key.equals("store") && (dot < 0 || dot == key.length() - 1 || key.endsWith(".")
                || key.startsWith(".", dot + 1))) {
            throw new OutboxMisconfigurationException("environment variable " + variable + " names no setting: "
                    + "after " + PREFIX + " write the key, for example store.url as OUTBOX_STORE_URL, with '.' as "
                    + "'_', '_' as '__' and '-' as '___'");
        }
        return key;
    }

    private static String decode(String variable, String name) {
        StringBuilder key = new StringBuilder();
        int i = 0;
        while (i < name.length()) {
            char c = name.charAt(i);
            if (c != '_') {
                key.append(Character.toLowerCase(c));
                i++;
                continue;
            }
            int run = 0;
            while (i < name.length() && name.charAt(i) == '_') {
                run++;
                i++;
            }
            switch (run) {
                case 1 -> key.append('.');
                case 2 -> key.append('_');
                case 3 -> key.append('-');
                default -> throw new OutboxMisconfigurationException("environment variable " + variable
                        + " has a run of " + run + " underscores; '_' stands for '.', '__' for '_' and '___' for "
                        + "'-', nothing else. Set this key in the configuration file instead.");
            }
        }
        return key.toString();
    }
}
