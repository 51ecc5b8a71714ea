package io.outbox.relay.app;

import io.outbox.notify.NotificationTransportProvider;
import io.outbox.notify.NotificationTransports;
import io.outbox.notify.NotifySettings;
import io.outbox.relay.RelayOptions;
import io.outbox.relay.internal.Redactor;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.spi.OutboxStoreProvider;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.types.Password;

/**
 * The part of {@code --help} that lists every setting: the configuration format, every relay
 * option, every setting of every store provider and notification transport on the class path, the
 * Kafka producer settings the publisher enforces, and the exit codes. Each setting shows its key,
 * its environment variable, its type, its default and valid values, and its documentation; a
 * default of type password is never shown. The option reference pages under {@code docs/reference} are rendered here too
 * ({@link #table}), from the same {@link Facts}, so the help and the pages cannot disagree.
 */
final class SettingsHelp {

    /** Line width of the text. */
    static final int WIDTH = 100;

    /**
     * The producer settings {@link io.outbox.relay.kafka.KafkaOutboxPublisher} enforces or removes (rule
     * K1) and the defaults it changes, as (key, what happens). A test compares this list with
     * {@link io.outbox.relay.kafka.KafkaOutboxPublisher#effectiveConfig}.
     */
    static final Map<String, String> ENFORCED_KAFKA = enforcedKafka();

    /** Producer defaults that differ from Kafka's own, as (key, default). */
    static final Map<String, String> KAFKA_DEFAULTS = Map.of(
            "max.block.ms", "10000 (Kafka's is 60000)",
            "client.id", RelayConfiguration.CLIENT_ID_PREFIX + "<relay.id>");

    private SettingsHelp() {
    }

    private static Map<String, String> enforcedKafka() {
        String byteArray = "always org.apache.kafka.common.serialization.ByteArraySerializer";
        Map<String, String> enforced = new LinkedHashMap<>();
        enforced.put("acks", "always all (a value other than all or -1 is replaced)");
        enforced.put("enable.idempotence", "always true");
        enforced.put("key.serializer", byteArray);
        enforced.put("value.serializer", byteArray);
        enforced.put("max.in.flight.requests.per.connection", "at most 5 (a larger value is replaced with 5)");
        enforced.put("partitioner.ignore.keys", "always false");
        enforced.put("partitioner.class", "removed: Kafka's key hashing places records, as the buckets assume");
        enforced.put("transactional.id", "removed: the publisher does not use Kafka transactions");
        return Collections.unmodifiableMap(enforced);
    }

    /**
     * The whole settings text.
     *
     * @param providers the store providers found on the class path
     * @return the text, lines of at most {@value #WIDTH} characters where words allow
     */
    static String text(Collection<OutboxStoreProvider> providers) {
        StringBuilder text = new StringBuilder();
        heading(text, "Configuration");
        paragraph(text, 2, "One properties file (--config, UTF-8) and environment variables; a variable wins over "
                + "the file. 'store' names the store; 'store.<setting>' goes to the store, 'kafka.<setting>' to the "
                + "Kafka producer, 'relay.<option>' to the relay. Unknown store and relay keys are refused, naming "
                + "them. Values are not trimmed beyond what each setting's parser does.");
        paragraph(text, 2, "Environment: OUTBOX_ and the key in upper case, with '.' written as '_', '_' as '__' and "
                + "'-' as '___'; for example store.url is OUTBOX_STORE_URL and kafka.bootstrap.servers is "
                + "OUTBOX_KAFKA_BOOTSTRAP_SERVERS. Only OUTBOX_STORE and variables starting with OUTBOX_STORE_, "
                + "OUTBOX_KAFKA_, OUTBOX_RELAY_, OUTBOX_NOTIFY_ or OUTBOX_HTTP_ are settings; other OUTBOX_ variables are ignored. "
                + "OUTBOX_LOG_LEVEL sets the log level (default INFO) of the packaged logging configuration.");
        paragraph(text, 2, "Secrets: the values of settings of type password or whose name contains password, "
                + "secret, jaas or credential, and passwords in a URL's user info or in a password parameter, are "
                + "never printed or logged; they show as " + Redactor.HIDDEN + ".");
        List<NotificationTransportProvider> transports = NotificationTransports.providers();
        paragraph(text, 2, "Notifications: 'notify.transport' is none (the default: polling only) or a transport ("
                + String.join(", ", transports.stream().map(NotificationTransportProvider::name).toList())
                + "); 'notify.<transport>.<setting>' goes to it (listed below). Hints from writers wake the relay at "
                + "once; polling stays on, so a transport that is down costs latency, never messages.");
        text.append('\n');

        heading(text, "Relay options (relay.<option>)");
        for (ConfigDef.ConfigKey key : RelayOptions.configDef().configKeys().values()) {
            setting(text, 2, RelayConfiguration.relayFileKey(key.name), key, relayDefault(key));
        }
        for (ConfigDef.ConfigKey key : KafkaOutboxPublisher.configDef().configKeys().values()) {
            setting(text, 2, RelayConfiguration.relayFileKey(key.name), key, null);
        }
        text.append('\n');

        List<String> names = providers.stream().map(OutboxStoreProvider::name).toList();
        heading(text, "Stores (store=<name>; found on the class path: " + String.join(", ", names) + ")");
        for (OutboxStoreProvider provider : providers) {
            text.append("  store=").append(provider.name()).append("  (").append(provider.getClass().getName())
                    .append(")\n");
            Map<String, ConfigDef.ConfigKey> keys = provider.configDef().configKeys();
            if (keys.isEmpty()) {
                paragraph(text, 8, "Declares no settings; see its documentation.");
            }
            for (ConfigDef.ConfigKey key : keys.values()) {
                setting(text, 4, RelayConfiguration.STORE_PREFIX + key.name, key, null);
            }
            text.append('\n');
        }

        heading(text, "Notification transports (notify.transport=<name>)");
        for (NotificationTransportProvider transport : transports) {
            text.append("  notify.transport=").append(transport.name()).append("  (")
                    .append(transport.getClass().getName()).append(")\n");
            for (ConfigDef.ConfigKey key : transport.configDef().configKeys().values()) {
                setting(text, 4, NotifySettings.PREFIX + transport.name() + "." + key.name, key, null);
            }
            text.append('\n');
        }

        heading(text, "HTTP endpoint (http.<setting>; off unless http.port is set)");
        for (ConfigDef.ConfigKey key : HttpSettings.configDef().configKeys().values()) {
            setting(text, 2, key.name, key, null);
        }
        text.append('\n');

        heading(text, "Kafka producer settings (kafka.<setting>)");
        paragraph(text, 2, "Every Kafka producer setting, passed to the producer without the prefix: at least "
                + "kafka.bootstrap.servers; for example kafka.security.protocol, kafka.sasl.mechanism, "
                + "kafka.sasl.jaas.config, kafka.ssl.truststore.location, kafka.compression.type, kafka.linger.ms. "
                + "See https://kafka.apache.org/documentation/#producerconfigs. A key Kafka does not know is passed "
                + "through with a warning. Enforced by the publisher (rule K1; an overridden value is logged at "
                + "WARN):");
        ENFORCED_KAFKA.forEach((key, rule) -> paragraph(text, 4, RelayConfiguration.KAFKA_PREFIX + key + ": " + rule));
        paragraph(text, 2, "Defaults that differ from Kafka's:");
        KAFKA_DEFAULTS.entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(e ->
                paragraph(text, 4, RelayConfiguration.KAFKA_PREFIX + e.getKey() + ": " + e.getValue()));
        text.append('\n');

        heading(text, "Exit codes");
        exitCode(text, StandaloneRelay.EXIT_OK, "stopped on SIGTERM or SIGINT: the leases were given back, unless "
                + "publishes were still in flight after relay.close.timeout.ms, in which case they expire (logged at "
                + "WARN); or --help, --version, --check or --print-config succeeded");
        exitCode(text, StandaloneRelay.EXIT_ERROR, "unexpected error");
        exitCode(text, StandaloneRelay.EXIT_USAGE, "invalid command line");
        exitCode(text, StandaloneRelay.EXIT_MISCONFIGURATION, "invalid configuration at start, or a fatal "
                + "misconfiguration while running (for example messages in a bucket outside [0, relay.bucket.count))");
        exitCode(text, StandaloneRelay.EXIT_STOP_TIMEOUT, "after SIGTERM or SIGINT the relay did not stop within "
                + "relay.close.timeout.ms plus " + (RelayRunner.STOP_MARGIN.toSeconds() + 1) + " s, and exited "
                + "anyway");
        return text.toString();
    }

    /**
     * The default a relay option shows where its definition's says too little.
     *
     * @param key a relay option's definition; not null
     * @return the text for {@value RelayOptions#RELAY_ID_CONFIG}, null for every other option
     */
    static String relayDefault(ConfigDef.ConfigKey key) {
        return RelayOptions.RELAY_ID_CONFIG.equals(key.name) ? "generated (host name, process id, random suffix)"
                : null;
    }

    private static void exitCode(StringBuilder text, int code, String meaning) {
        StringBuilder wrapped = new StringBuilder();
        paragraph(wrapped, 5, meaning);
        text.append("  ").append(code).append("  ").append(wrapped.substring(5));
    }

    private static void heading(StringBuilder text, String heading) {
        text.append(heading).append('\n');
    }

    private static void setting(StringBuilder text, int indent, String fileKey, ConfigDef.ConfigKey key,
                                String defaultText) {
        text.append(" ".repeat(indent)).append(fileKey).append("  [").append(EnvironmentVariables.variableFor(fileKey))
                .append("]\n");
        Facts facts = Facts.of(key, defaultText);
        List<String> shown = new ArrayList<>();
        shown.add(facts.type());
        shown.add(facts.hasDefault() ? "default: " + facts.defaultValue() : facts.defaultValue());
        if (facts.validValues() != null) {
            shown.add("valid: " + facts.validValues());
        }
        paragraph(text, indent + 4, String.join(", ", shown));
        if (facts.documentation() != null) {
            paragraph(text, indent + 4, facts.documentation());
        }
    }

    /**
     * Appends a Markdown table of settings, one row per key in the definition's order: the key, its
     * key and environment variable in the standalone relay (when {@code fileKey} is given), type,
     * default, valid values, importance and meaning. The reference pages under {@code docs/reference}
     * are made of these tables; the help text shows the same {@link Facts}.
     *
     * @param page the page to append to; not null
     * @param keys the settings; not null
     * @param fileKey the standalone relay's key of a setting's key, or null for a table without that column
     * @param defaultText the shown default of a key, or null for the one {@link #defaultOf} gives
     */
    static void table(StringBuilder page, Collection<ConfigDef.ConfigKey> keys, UnaryOperator<String> fileKey,
                      Function<ConfigDef.ConfigKey, String> defaultText) {
        page.append(fileKey == null ? "| key " : "| key | standalone relay (file; environment) ")
                .append("| type | default | valid values | importance | meaning |\n")
                .append(fileKey == null ? "|---" : "|---|---").append("|---|---|---|---|---|\n");
        for (ConfigDef.ConfigKey key : keys) {
            Facts facts = Facts.of(key, defaultText.apply(key));
            page.append("| `").append(key.name).append("` | ");
            if (fileKey != null) {
                String file = fileKey.apply(key.name);
                page.append('`').append(file).append("`; `").append(EnvironmentVariables.variableFor(file))
                        .append("` | ");
            }
            page.append(facts.type()).append(" | ").append(cell(facts.defaultValue())).append(" | ")
                    .append(facts.validValues() == null ? "" : cell(facts.validValues())).append(" | ")
                    .append(facts.importance()).append(" | ")
                    .append(facts.documentation() == null ? "" : cell(facts.documentation())).append(" |\n");
        }
    }

    /**
     * Text made safe for one cell of a Markdown table.
     *
     * @param text any text; not null
     * @return the text with pipes escaped, angle brackets as entities and line breaks as spaces
     */
    static String cell(String text) {
        return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;").replace("\n", " ");
    }

    /**
     * One setting as every text shows it.
     *
     * @param type the type in lower case, for example {@code long}
     * @param defaultValue {@code required}, {@code none}, {@code empty}, the value, or the hidden mark for a
     *     password
     * @param hasDefault false when the setting is required
     * @param validValues the validator's description, or null when it has none worth showing
     * @param importance the importance in lower case
     * @param documentation the meaning, or null when the definition has none
     */
    record Facts(String type, String defaultValue, boolean hasDefault, String validValues, String importance,
                 String documentation) {

        /**
         * The facts of a definition.
         *
         * @param key the definition; not null
         * @param defaultText the default to show instead of the definition's, or null
         * @return the facts
         */
        static Facts of(ConfigDef.ConfigKey key, String defaultText) {
            String doc = key.documentation == null || key.documentation.isBlank() ? null : key.documentation;
            return new Facts(key.type.name().toLowerCase(Locale.ROOT),
                    defaultText != null ? defaultText : defaultOf(key), key.hasDefault(), SettingsHelp.validValues(key),
                    key.importance == null ? "" : key.importance.name().toLowerCase(Locale.ROOT), doc);
        }
    }

    /** The default as shown: required, none, empty, or the value; never a password's value. */
    static String defaultOf(ConfigDef.ConfigKey key) {
        if (!key.hasDefault()) {
            return "required";
        }
        Object value = key.defaultValue;
        if (value == null) {
            return "none";
        }
        if (key.type == ConfigDef.Type.PASSWORD || value instanceof Password) {
            return Redactor.HIDDEN;
        }
        if (value instanceof Class<?> type) {
            return type.getName();
        }
        if (value instanceof List<?> list) {
            return list.isEmpty() ? "empty" : list.stream().map(String::valueOf).collect(Collectors.joining(","));
        }
        String shown = String.valueOf(value);
        return shown.isEmpty() ? "empty" : shown;
    }

    /** Kafka's own validators describe themselves; a lambda's name says nothing, so it is left out. */
    private static String validValues(ConfigDef.ConfigKey key) {
        if (key.validator == null) {
            return null;
        }
        Class<?> type = key.validator.getClass();
        if (type.isSynthetic() || type.isHidden() || type.isAnonymousClass()) {
            return null;
        }
        String shown = key.validator.toString();
        return shown == null || shown.isBlank() ? null : shown;
    }

    /** Appends a paragraph wrapped at {@link #WIDTH}, every line indented. */
    static void paragraph(StringBuilder text, int indent, String paragraph) {
        String pad = " ".repeat(indent);
        StringBuilder line = new StringBuilder(pad);
        for (String word : paragraph.split(" ")) {
            if (word.isEmpty()) {
                continue;
            }
            if (line.length() > indent && line.length() + 1 + word.length() > WIDTH) {
                text.append(line).append('\n');
                line.setLength(0);
                line.append(pad);
            }
            if (line.length() > indent) {
                line.append(' ');
            }
            line.append(word);
        }
        text.append(line).append('\n');
    }
}
