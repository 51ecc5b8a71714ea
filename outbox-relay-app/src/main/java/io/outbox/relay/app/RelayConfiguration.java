package io.outbox.relay.app;

import io.outbox.notify.NotifySettings;
import io.outbox.relay.RelayOptions;
import io.outbox.relay.internal.Redactor;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.relay.kafka.KafkaTransactions;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.OutboxStoreProvider;
import io.outbox.spi.OutboxStores;
import io.outbox.spi.support.OutboxStoreConfig;
import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.types.Password;

/**
 * The standalone relay's configuration: one properties file, overridden by environment variables
 * ({@link EnvironmentVariables}). Keys:
 *
 * <ul>
 *   <li>{@code store}: the store's provider name, found with {@link OutboxStores};</li>
 *   <li>{@code store.<setting>}: the provider's settings, passed without the prefix;</li>
 *   <li>{@code kafka.<setting>}: Kafka producer settings, passed without the prefix to
 *       {@link KafkaOutboxPublisher}, which enforces its own (rule K1);</li>
 *   <li>{@code relay.<option>}: {@link RelayOptions}, by their keys, with {@code relay.} put in
 *       front of those that do not start with it ({@code relay.bucket.count}, but
 *       {@code relay.id}), and the publisher's own options ({@link KafkaOutboxPublisher#configDef()},
 *       {@code relay.message.id.header}).</li>
 *   <li>{@code notify.transport} and {@code notify.<transport>.<setting>}: cross-process wake-ups,
 *       see {@link NotifySettings}.</li>
 * </ul>
 *
 * <p>{@link #read} reads and sorts the settings and finds the provider and the secrets, without
 * validating values, so that a {@link Redactor} exists before any value can appear in a message;
 * {@link #resolve()} then validates everything without connecting to anything.
 */
final class RelayConfiguration {

    /** Key of the store's provider name. */
    static final String STORE = "store";
    /** Prefix of store settings. */
    static final String STORE_PREFIX = "store.";
    /** Prefix of Kafka producer settings. */
    static final String KAFKA_PREFIX = "kafka.";
    /** Prefix of relay options. */
    static final String RELAY_PREFIX = "relay.";

    /** Kafka's {@code client.id} when not set: this prefix and the relay id. */
    static final String CLIENT_ID_PREFIX = "outbox-relay-";

    /** How {@code origins} marks a setting from an environment variable: this, then its name. */
    private static final String ENVIRONMENT = "environment ";

    /** Relay option keys by the key they have in the file. */
    /** The publisher's own options, written as relay options ({@code relay.message.id.header}). */
    private static final Set<String> PUBLISHER_OPTIONS = KafkaOutboxPublisher.configDef().names();
    private static final Map<String, String> RELAY_KEYS = relayKeys();

    private final Map<String, String> storeSettings;
    private final Map<String, String> kafkaSettings;
    private final Map<String, String> relaySettings;
    private final NotifySettings notifySettings;
    private final HttpSettings httpSettings;
    private final Map<String, String> httpValues;
    private final Map<String, String> origins;
    private final List<String> ignoredVariables;
    private final OutboxStoreProvider provider;
    private final Set<String> secretKeys;
    private final Redactor redactor;

    private RelayConfiguration(Map<String, String> storeSettings, Map<String, String> kafkaSettings,
                               Map<String, String> relaySettings, NotifySettings notifySettings,
                               HttpSettings httpSettings, Map<String, String> httpValues,
                               Map<String, String> origins,
                               List<String> ignoredVariables, OutboxStoreProvider provider, Set<String> secretKeys,
                               Redactor redactor) {
        this.storeSettings = storeSettings;
        this.kafkaSettings = kafkaSettings;
        this.relaySettings = relaySettings;
        this.notifySettings = notifySettings;
        this.httpSettings = httpSettings;
        this.httpValues = httpValues;
        this.origins = origins;
        this.ignoredVariables = ignoredVariables;
        this.provider = provider;
        this.secretKeys = secretKeys;
        this.redactor = redactor;
    }

    /**
     * Reads the settings of a file and an environment; the environment wins.
     *
     * @param file the properties file (UTF-8), or null for the environment alone
     * @param environment the environment variables; not null
     * @return the configuration, not yet validated
     * @throws OutboxMisconfigurationException if the file cannot be read, a key is unknown, no
     *     store is selected, or no provider has the store's name; messages name keys, never values
     */
    static RelayConfiguration read(Path file, Map<String, String> environment) {
        Map<String, String> settings = new TreeMap<>();
        Map<String, String> origins = new TreeMap<>();
        if (file != null) {
            Properties properties = load(file);
            for (String key : properties.stringPropertyNames()) {
                settings.put(key, properties.getProperty(key));
                origins.put(key, file.toString());
            }
        }
        EnvironmentVariables.Found env = EnvironmentVariables.read(environment);
        settings.putAll(env.settings());
        env.variables().forEach((key, variable) -> origins.put(key, ENVIRONMENT + variable));

        Groups groups = Groups.of(settings, env.variables());
        String storeName = settings.get(STORE);
        if (storeName == null || storeName.isBlank()) {
            throw new OutboxMisconfigurationException("no store selected: set '" + STORE + "' (environment "
                    + EnvironmentVariables.variableFor(STORE) + ") to one of " + providerNames());
        }
        if (OutboxStoreConfig.notAsWritten(storeName) != null) {
            throw new OutboxMisconfigurationException(STORE + "=" + OutboxStoreConfig.quoted(storeName) + " "
                    + OutboxStoreConfig.notAsWritten(storeName) + fromVariable(env.variables().get(STORE)));
        }
        OutboxStoreProvider provider;
        try {
            provider = OutboxStores.provider(storeName);
        } catch (OutboxMisconfigurationException e) {
            throw new OutboxMisconfigurationException(STORE + "=" + storeName
                    + fromVariable(env.variables().get(STORE)) + ": " + e.getMessage(), e);
        }

        Set<String> secretKeys = new TreeSet<>();
        Set<String> secrets = new LinkedHashSet<>();
        ConfigDef storeDef = provider.configDef();
        storeDef.configKeys().values().forEach(key -> {
            if (key.type == ConfigDef.Type.PASSWORD && key.hasDefault() && key.defaultValue != null) {
                secrets.add(key.defaultValue instanceof Password p ? p.value() : String.valueOf(key.defaultValue));
            }
        });
        findSecrets(STORE_PREFIX, groups.store(), storeDef, secretKeys, secrets);
        findSecrets(KAFKA_PREFIX, groups.kafka(), ProducerConfig.configDef(), secretKeys, secrets);
        settings.values().forEach(value -> secrets.addAll(Redactor.embeddedSecrets(value)));
        NotifySettings notify = NotifySettings.of(groups.notifications(), provider.name(), groups.store());
        findSecrets("", groups.notifications(), new ConfigDef(), secretKeys, secrets);
        findSecrets("", groups.http(), HttpSettings.configDef(), secretKeys, secrets);
        HttpSettings http = HttpSettings.of(groups.http());
        return new RelayConfiguration(groups.store(), groups.kafka(), groups.relay(), notify, http, groups.http(),
                Collections.unmodifiableMap(origins), env.ignored(), provider, Collections.unmodifiableSet(secretKeys),
                Redactor.of(secrets));
    }

    /**
     * The keys of settings that hold secrets ({@link Redactor#isSecretSetting}: by type, by name,
     * or for a setting the definition does not declare by the wider rule of
     * {@link Redactor#isSecretKey}), and their values, hidden wherever they occur. A value
     * {@code true}, {@code false} or a number of a setting secret only by the wider rule
     * ({@code kafka.bearer.auth.cache.expiry.buffer.seconds=300}) is hidden where the setting is
     * shown but not wherever it occurs, which would hide every {@code 300} of every log line.
     */
    private static void findSecrets(String prefix, Map<String, String> settings, ConfigDef definition,
                                    Set<String> secretKeys, Set<String> secrets) {
        settings.forEach((key, value) -> {
            ConfigDef.ConfigKey configKey = definition.configKeys().get(key);
            ConfigDef.Type type = configKey == null ? null : configKey.type;
            if (Redactor.isSecretSetting(key, type)) {
                secretKeys.add(prefix + key);
                // Secret by type or by a word that always means one, as opposed to the wider rule alone.
                boolean certain = Redactor.isSecretSetting(key, type == null ? ConfigDef.Type.STRING : type);
                if (certain || !FLAG_OR_NUMBER.matcher(value).matches()) {
                    secrets.add(value);
                }
            }
        });
    }

    /** A value that is a flag or a number, never hidden where it occurs for the wider rule's sake. */
    private static final Pattern FLAG_OR_NUMBER = Pattern.compile("(?i)true|false|-?[0-9]{1,18}");

    /**
     * The settings sorted by prefix, without it; relay options under their {@link RelayOptions}
     * keys.
     */
    private record Groups(Map<String, String> store, Map<String, String> kafka, Map<String, String> relay,
                          Map<String, String> notifications, Map<String, String> http) {

        static Groups of(Map<String, String> settings, Map<String, String> variables) {
            Map<String, String> store = new TreeMap<>();
            Map<String, String> kafka = new TreeMap<>();
            Map<String, String> relay = new TreeMap<>();
            Map<String, String> notify = new TreeMap<>();
            Map<String, String> http = new TreeMap<>();
            Set<String> unknown = new TreeSet<>();
            Set<String> unknownRelay = new TreeSet<>();
            settings.forEach((key, value) -> {
                if (key.equals(STORE)) {
                    return;
                }
                if (key.startsWith(STORE_PREFIX) && key.length() > STORE_PREFIX.length()) {
                    store.put(key.substring(STORE_PREFIX.length()), value);
                } else if (key.startsWith(KAFKA_PREFIX) && key.length() > KAFKA_PREFIX.length()) {
                    kafka.put(key.substring(KAFKA_PREFIX.length()), value);
                } else if (key.startsWith(RELAY_PREFIX) && RELAY_KEYS.containsKey(key)) {
                    relay.put(RELAY_KEYS.get(key), value);
                } else if (key.startsWith(RELAY_PREFIX)) {
                    unknownRelay.add(key);
                } else if (key.startsWith(NotifySettings.PREFIX)) {
                    notify.put(key, value);
                } else if (key.startsWith(HttpSettings.PREFIX)) {
                    http.put(key, value);
                } else {
                    unknown.add(key);
                }
            });
            if (!unknown.isEmpty()) {
                throw new OutboxMisconfigurationException("unknown setting(s) " + asWritten(unknown, variables)
                        + ": a key is '" + STORE + "' or starts with '" + STORE_PREFIX + "', '" + KAFKA_PREFIX
                        + "', '" + RELAY_PREFIX + "', '" + NotifySettings.PREFIX + "' or '" + HttpSettings.PREFIX + "'");
            }
            if (!unknownRelay.isEmpty()) {
                throw new OutboxMisconfigurationException("unknown relay option(s) "
                        + asWritten(unknownRelay, variables) + "; the relay accepts " + RELAY_KEYS.keySet());
            }
            return new Groups(Collections.unmodifiableMap(store), Collections.unmodifiableMap(kafka),
                    Collections.unmodifiableMap(relay), Collections.unmodifiableMap(notify),
                    Collections.unmodifiableMap(http));
        }

        /** Keys, each followed by the environment variable it came from, if it did. */
        private static List<String> asWritten(Set<String> keys, Map<String, String> variables) {
            return keys.stream().map(key -> key + fromVariable(variables.get(key))).toList();
        }
    }

    /** The largest configuration file read, in bytes: 1 MiB. */
    static final int MAX_FILE_BYTES = 1 << 20;

    private static Properties load(Path file) {
        String special = notRegularFile("configuration file " + file, file);
        if (special != null) {
            throw new OutboxMisconfigurationException(special);
        }
        KeysCounted properties = new KeysCounted();
        try {
            String text = utf8(file, readBounded(file));
            properties.load(new StringReader(text));
            if (properties.repeated) {
                refuseDuplicateKeys(file, text); // finds the key and its lines
            }
        } catch (NoSuchFileException e) {
            throw new OutboxMisconfigurationException("configuration file " + file + " does not exist", e);
        } catch (IOException e) {
            throw new OutboxMisconfigurationException("cannot read configuration file " + file + ": " + e, e);
        } catch (IllegalArgumentException e) {
            throw new OutboxMisconfigurationException("configuration file " + file + " is not a valid properties "
                    + "file: " + e.getMessage(), e);
        }
        return properties;
    }

    /**
     * Why a file the relay was named must not be opened: it exists but is no regular file (or
     * link to one). Opening a FIFO waits for a writer, for ever if none comes; a device or socket
     * never ends or blocks too; a directory cannot be read. Checked before the file is opened,
     * without opening it.
     *
     * @param named how the message names the file, its path included, such as
     *     {@code configuration file /etc/relay.properties}
     * @param file the file
     * @return null when the file is regular or does not exist (opening it then says so), else the
     *     error, naming the file and what it is
     */
    static String notRegularFile(String named, Path file) {
        if (!Files.exists(file) || Files.isRegularFile(file)) {
            return null;
        }
        return named + " is " + fileKind(file) + ", not a regular file; the relay reads only regular "
                + "files (a FIFO would block it until something writes to it)";
    }

    /** What a file that is not regular is, as far as the platform tells. */
    private static String fileKind(Path file) {
        if (Files.isDirectory(file)) {
            return "a directory";
        }
        try {
            int type = (Integer) Files.getAttribute(file, "unix:mode") & 0170000; // S_IFMT of stat(2)
            return switch (type) {
                case 0010000 -> "a FIFO (named pipe)";
                case 0020000 -> "a character device";
                case 0060000 -> "a block device";
                case 0140000 -> "a socket";
                default -> "a special file";
            };
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return "a special file (FIFO, device or socket)";
        }
    }

    /**
     * The file's bytes, at most {@link #MAX_FILE_BYTES}: a larger file (or an endless one such as
     * {@code /dev/zero}) is refused naming its size, never read whole into memory.
     */
    private static byte[] readBounded(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            byte[] bytes = in.readNBytes(MAX_FILE_BYTES + 1);
            if (bytes.length > MAX_FILE_BYTES) {
                long size = Files.isRegularFile(file) ? Files.size(file) : -1;
                throw new OutboxMisconfigurationException("configuration file " + file + " is "
                        + (size > 0 ? size + " bytes" : "more than " + MAX_FILE_BYTES + " bytes (not a regular file)")
                        + ", larger than the limit of " + MAX_FILE_BYTES + " bytes (1 MiB)");
            }
            return bytes;
        }
    }

    /** Properties that note whether a key was loaded twice: one pass over the file for the usual case. */
    private static final class KeysCounted extends Properties {

        private static final long serialVersionUID = 1L;

        private boolean repeated;

        @Override
        public synchronized Object put(Object key, Object value) {
            Object previous = super.put(key, value);
            repeated |= previous != null;
            return previous;
        }
    }

    /**
     * Refuses a key given on two lines of the file, naming the key and both lines: with
     * {@code java.util.Properties} the last one would silently win, and a wrong
     * {@code relay.bucket.count} is an ordering hazard. Lines are numbered from 1; a key continued
     * over several lines counts at its first.
     */
    private static void refuseDuplicateKeys(Path file, String text) throws IOException {
        Map<String, Integer> firstLine = new HashMap<>();
        String[] lines = text.split("\r\n|\r|\n", -1);
        for (int i = 0; i < lines.length; i++) {
            int start = i;
            StringBuilder logical = new StringBuilder(lines[i]);
            while (continues(lines[i]) && i + 1 < lines.length && !isComment(lines[start])) {
                i++;
                logical.append('\n').append(lines[i]);
            }
            Properties one = new Properties();
            one.load(new StringReader(logical.toString()));
            for (String key : one.stringPropertyNames()) {
                Integer earlier = firstLine.putIfAbsent(key, start + 1);
                if (earlier != null) {
                    throw new OutboxMisconfigurationException("configuration file " + file + " sets '" + key
                            + "' twice, on lines " + earlier + " and " + (start + 1) + "; keep one");
                }
            }
        }
    }

    private static boolean isComment(String line) {
        String stripped = line.stripLeading();
        return stripped.startsWith("#") || stripped.startsWith("!");
    }

    /** Whether a properties line ends in an odd number of backslashes, continuing on the next. */
    private static boolean continues(String line) {
        int backslashes = 0;
        for (int i = line.length() - 1; i >= 0 && line.charAt(i) == '\\'; i--) {
            backslashes++;
        }
        return backslashes % 2 == 1;
    }

    /** The file's bytes as UTF-8 text; a byte sequence that is not UTF-8 is refused, naming where it is. */
    private static String utf8(Path file, byte[] bytes) {
        ByteBuffer in = ByteBuffer.wrap(bytes);
        CharBuffer out = CharBuffer.allocate(bytes.length);
        CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT);
        CoderResult result = decoder.decode(in, out, true);
        if (!result.isError()) {
            result = decoder.flush(out);
        }
        if (result.isError()) {
            int offset = in.position();
            int line = 1;
            for (int i = 0; i < offset; i++) {
                line += bytes[i] == '\n' ? 1 : 0;
            }
            throw new OutboxMisconfigurationException("configuration file " + file + " is not valid UTF-8: byte "
                    + String.format("0x%02X", bytes[offset] & 0xFF) + " at byte offset " + offset + " (line " + line
                    + ") does not belong there; save the file as UTF-8 (or ASCII, writing other characters as "
                    + "\\uXXXX)");
        }
        String text = out.flip().toString();
        // A byte order mark (Windows editors write one) would otherwise become part of the first key.
        return text.startsWith("\uFEFF") ? text.substring(1) : text;
    }

    private static List<String> providerNames() {
        return OutboxStores.providers().stream().map(OutboxStoreProvider::name).toList();
    }

    /**
     * The key a relay option has in the file and in the environment.
     *
     * @param option a {@link RelayOptions} key, for example {@code bucket.count}
     * @return the file key, for example {@code relay.bucket.count}; {@code relay.id} stays as is
     */
    static String relayFileKey(String option) {
        return option.startsWith(RELAY_PREFIX) ? option : RELAY_PREFIX + option;
    }

    private static Map<String, String> relayKeys() {
        Map<String, String> keys = new TreeMap<>();
        RelayOptions.configDef().names().forEach(option -> keys.put(relayFileKey(option), option));
        PUBLISHER_OPTIONS.forEach(option -> keys.put(relayFileKey(option), option));
        return Collections.unmodifiableMap(keys);
    }

    /**
     * The redactor that hides this configuration's secrets.
     *
     * @return the redactor
     */
    Redactor redactor() {
        return redactor;
    }

    /**
     * The store's provider.
     *
     * @return the provider named by {@value #STORE}
     */
    OutboxStoreProvider provider() {
        return provider;
    }

    /**
     * The cross-process wake-up settings ({@code notify.*}).
     *
     * @return the settings; polling only when no transport is set
     */
    NotifySettings notifySettings() {
        return notifySettings;
    }

    /**
     * The HTTP endpoint's settings ({@code http.*}, rule H1).
     *
     * @return the settings; the endpoint is off when {@link HttpSettings#enabled()} is false
     */
    HttpSettings httpSettings() {
        return httpSettings;
    }

    /**
     * The store settings, without the prefix.
     *
     * @return the settings, sorted; immutable
     */
    Map<String, String> storeSettings() {
        return storeSettings;
    }

    /**
     * Validates every setting, without connecting to anything: the store settings against the
     * provider's definition (when it has one) and {@link OutboxStoreProvider#validate(Map)}, the
     * same checks a start runs before it connects, the relay options, and the Kafka producer settings
     * against Kafka's definition (types, required {@code bootstrap.servers}).
     *
     * @return the validated configuration
     * @throws OutboxMisconfigurationException naming the setting; the message may hold a value,
     *     so pass it through {@link #redactor()} before showing it
     */
    Resolved resolve() {
        ConfigDef storeDef = provider.configDef();
        OutboxStoreConfig storeConfig = null;
        if (!storeDef.names().isEmpty()) {
            try {
                storeConfig = OutboxStoreConfig.parse(provider.name(), storeDef, storeSettings);
                provider.validate(storeSettings); // everything a start checks before it connects
            } catch (OutboxMisconfigurationException e) {
                throw new OutboxMisconfigurationException("store settings (" + STORE_PREFIX + "*): "
                        + storeKeysAsWritten(e.getMessage()), e);
            }
        }
        requireRelayAndNotifyValuesAsWritten();
        Map<String, String> engineSettings = new TreeMap<>(relaySettings);
        Map<String, String> publisherSettings = new TreeMap<>();
        for (String name : PUBLISHER_OPTIONS) {
            String value = engineSettings.remove(name);
            if (value != null) {
                publisherSettings.put(name, value);
            }
        }
        RelayOptions options;
        String messageIdHeader;
        boolean tracingTimeInOutboxSpan;
        try {
            options = RelayOptions.fromProperties(engineSettings);
            Map<String, Object> publisherOptions = KafkaOutboxPublisher.configDef().parse(publisherSettings);
            messageIdHeader = (String) publisherOptions.get(KafkaOutboxPublisher.MESSAGE_ID_HEADER_CONFIG);
            tracingTimeInOutboxSpan = (Boolean) publisherOptions.get(KafkaOutboxPublisher.TIME_IN_OUTBOX_SPAN_CONFIG);
        } catch (OutboxMisconfigurationException e) {
            throw new OutboxMisconfigurationException(asWritten(e.getMessage(), RELAY_KEYS), e);
        } catch (ConfigException e) {
            throw new OutboxMisconfigurationException(asWritten("invalid publisher option: " + e.getMessage(),
                    RELAY_KEYS), e);
        }
        requireKafkaValuesOfTheirType();
        requireKafkaFilesRegular();
        notifySettings.validate();
        Map<String, Object> producer = new LinkedHashMap<>(kafkaSettings);
        producer.putIfAbsent(ProducerConfig.CLIENT_ID_CONFIG, CLIENT_ID_PREFIX + options.relayId());
        Map<String, Object> effective = KafkaOutboxPublisher.effectiveConfig(producer);
        try {
            ProducerConfig.configDef().parse(effective);
        } catch (ConfigException e) {
            throw invalidKafkaSetting(e);
        }
        Set<String> unknownKafka = new TreeSet<>(kafkaSettings.keySet());
        unknownKafka.removeAll(ProducerConfig.configNames());
        unknownKafka.removeAll(Set.of(KafkaTransactions.TRANSACTIONS_CONFIG, // the publisher's own (K5)
                KafkaTransactions.TRANSACTIONAL_ID_PREFIX_CONFIG, KafkaTransactions.MAX_BUCKETS_CONFIG));
        return new Resolved(options, messageIdHeader, tracingTimeInOutboxSpan, storeConfig, Collections.unmodifiableMap(producer),
                Collections.unmodifiableMap(new TreeMap<>(effective)), Collections.unmodifiableSet(unknownKafka));
    }

    /**
     * The store's rule for text values ({@link OutboxStoreConfig#notAsWritten}) applied to the
     * relay's own text options ({@code relay.id}, {@code relay.message.id.header}) and to every
     * {@code notify.*} value: {@code relay.id=relay-1 } must not silently become {@code relay-1}.
     * A secret's value is never shown. Kafka settings are Kafka's to parse.
     */
    private void requireRelayAndNotifyValuesAsWritten() {
        Map<String, ConfigDef.ConfigKey> definitions = new TreeMap<>(RelayOptions.configDef().configKeys());
        definitions.putAll(KafkaOutboxPublisher.configDef().configKeys());
        relaySettings.forEach((option, value) -> {
            ConfigDef.ConfigKey key = definitions.get(option);
            if (key != null && (key.type == ConfigDef.Type.STRING || key.type == ConfigDef.Type.PASSWORD)) {
                requireAsWritten(relayFileKey(option), value);
            }
        });
        notifySettings.settings().forEach((setting, value) -> requireAsWritten(NotifySettings.PREFIX
                + notifySettings.transport() + "." + setting, value));
    }

    private void requireAsWritten(String key, String value) {
        String problem = value == null ? null : OutboxStoreConfig.notAsWritten(value);
        if (problem != null) {
            String shown = secretKeys.contains(key) || Redactor.isSecretKey(key) ? Redactor.HIDDEN
                    : OutboxStoreConfig.quoted(value);
            String origin = origins.get(key);
            throw new OutboxMisconfigurationException(key + "=" + shown + " " + problem
                    + (origin != null && origin.startsWith(ENVIRONMENT) ? "; " + key + " came from environment "
                    + "variable " + origin.substring(ENVIRONMENT.length()) : ""));
        }
    }

    /**
     * Checks the type and range of each Kafka producer setting the user wrote, before rule K1
     * replaces some of them: {@code max.in.flight.requests.per.connection=abc} is an error, not a
     * value silently replaced by 5. Class settings are left to K1 and the producer.
     */
    private void requireKafkaValuesOfTheirType() {
        Map<String, ConfigDef.ConfigKey> keys = ProducerConfig.configDef().configKeys();
        kafkaSettings.forEach((name, value) -> {
            ConfigDef.ConfigKey key = keys.get(name);
            if (key == null || key.type == ConfigDef.Type.CLASS) {
                return;
            }
            try {
                Object parsed = ConfigDef.parseType(name, value, key.type);
                if (key.validator != null) {
                    key.validator.ensureValid(name, parsed);
                }
            } catch (ConfigException e) {
                throw invalidKafkaSetting(e);
            }
        });
    }

    /**
     * Refuses a Kafka setting that names a file ({@code ssl.truststore.location},
     * {@code ssl.keystore.location}, a serializer's {@code *.location}, Kafka's
     * {@code sasl.oauthbearer.assertion.*.file}) when that file is a FIFO, device, socket or
     * directory: the producer would open it at start and, for a FIFO, wait there for ever.
     */
    private void requireKafkaFilesRegular() {
        kafkaSettings.forEach((name, value) -> {
            if ((name.endsWith(".location") || name.endsWith(".file")) && value != null && !value.isBlank()) {
                Path file;
                try {
                    file = Path.of(value);
                } catch (InvalidPathException e) {
                    return; // not a path: the producer says so
                }
                String special = notRegularFile(KAFKA_PREFIX + name + "=" + value, file);
                if (special != null) {
                    throw new OutboxMisconfigurationException(special);
                }
            }
        });
    }

    private OutboxMisconfigurationException invalidKafkaSetting(ConfigException e) {
        Map<String, String> keys = new TreeMap<>();
        ProducerConfig.configNames().forEach(name -> keys.put(KAFKA_PREFIX + name, name));
        kafkaSettings.keySet().forEach(name -> keys.put(KAFKA_PREFIX + name, name));
        return new OutboxMisconfigurationException("invalid Kafka producer setting (" + KAFKA_PREFIX + "*): "
                + asWritten(e.getMessage(), keys), e);
    }

    /**
     * A store's message with its setting names as the user writes them: {@code create.schema}
     * becomes {@code store.create.schema}; the message ends naming the environment variable of
     * each named setting that came from one.
     *
     * @param message a message of the store's provider; not null
     * @return the message with the names rewritten
     */
    String storeKeysAsWritten(String message) {
        Map<String, String> keys = new TreeMap<>();
        provider.configDef().names().forEach(name -> keys.put(STORE_PREFIX + name, name));
        storeSettings.keySet().forEach(name -> keys.put(STORE_PREFIX + name, name));
        return asWritten(message, keys);
    }

    /**
     * A message with each name of a group of settings (as the validator knows it) replaced by the
     * key the user writes: relay option {@code bucket.count} becomes {@code relay.bucket.count}.
     * For each named setting that came from an environment variable, the message ends with
     * {@code ; relay.bucket.count came from environment variable OUTBOX_RELAY_BUCKET_COUNT}: at
     * the end, not after the name, where it would split a name from its value
     * ({@code relay.lease.duration.ms (5000)}) or from its {@code =}. A name with a dot is
     * replaced wherever it stands as a whole word (a run of letters, digits, {@code _}, {@code .}
     * and {@code -}, without a sentence's closing dot); one without (such as {@code url}, also an
     * English word) only as {@code configuration url}, {@code url=} or in a list
     * ({@code [url, user]}).
     *
     * <p>One pass over the message with a map lookup per word: linear in the message's length and
     * the number of names, however many settings the file has.
     *
     * @param message the message; not null
     * @param keys key as written to name the validator knows
     * @return the message with the names rewritten
     */
    private String asWritten(String message, Map<String, String> keys) {
        Map<String, String> byName = new HashMap<>();
        keys.forEach((key, name) -> byName.putIfAbsent(name, key));
        StringBuilder text = new StringBuilder(message.length());
        Set<String> named = new LinkedHashSet<>();
        int copied = 0;
        int i = 0;
        while (i < message.length()) {
            if (!isNameChar(message.charAt(i)) || (i > 0 && isNameChar(message.charAt(i - 1)))) {
                i++;
                continue;
            }
            int end = i;
            while (end < message.length() && isNameChar(message.charAt(end))) {
                end++;
            }
            String word = message.substring(i, end);
            String key = byName.get(word);
            if (key != null && word.indexOf('.') < 0 && !standsAsSettingName(message, i, end)) {
                key = null;
            }
            int matchEnd = end;
            if (key == null) {
                while (matchEnd > i && message.charAt(matchEnd - 1) == '.') {
                    matchEnd--; // a sentence's closing dot: "set store.url."
                }
                String trimmed = message.substring(i, matchEnd);
                key = matchEnd < end && trimmed.indexOf('.') >= 0 ? byName.get(trimmed) : null;
            }
            if (key != null) {
                text.append(message, copied, i).append(key);
                copied = matchEnd;
                named.add(key);
            }
            i = end;
        }
        text.append(message, copied, message.length());
        for (String key : named) {
            String origin = origins.get(key);
            if (origin != null && origin.startsWith(ENVIRONMENT)) {
                text.append("; ").append(key).append(" came from environment variable ")
                        .append(origin.substring(ENVIRONMENT.length()));
            }
        }
        return text.toString();
    }

    /** A character of a setting's name as messages write it: a letter, a digit, '_', '.' or '-'. */
    private static boolean isNameChar(char c) {
        return Character.isLetterOrDigit(c) || c == '_' || c == '.' || c == '-';
    }

    /**
     * Whether the word at [start, end) of a message is used as a setting's name there, for a name
     * without a dot: {@code url=}, {@code configuration url} before a colon, white space or the
     * end, or an item of a list ({@code [url, user]}).
     */
    private static boolean standsAsSettingName(String message, int start, int end) {
        char next = end < message.length() ? message.charAt(end) : '\n';
        if (next == '=') {
            return true;
        }
        if (message.startsWith("configuration ", start - "configuration ".length())
                && (next == ':' || Character.isWhitespace(next))) {
            return true;
        }
        boolean listed = (start >= 1 && message.charAt(start - 1) == '[')
                || (start >= 2 && message.startsWith(", ", start - 2));
        return listed && (next == ']' || next == ',');
    }

    private static String fromVariable(String variable) {
        return variable == null ? "" : " (environment variable " + variable + ")";
    }

    /**
     * A validated configuration.
     *
     * @param options the relay options; a relay id is generated when none is set, once
     * @param messageIdHeader the publisher's message-id header (rule K2)
     * @param tracingTimeInOutboxSpan the publisher's {@value KafkaOutboxPublisher#TIME_IN_OUTBOX_SPAN_CONFIG} (rule O2)
     * @param storeConfig the parsed store settings with their defaults, or null when the provider
     *     declares no settings
     * @param producerSettings the producer settings to give the publisher: the user's, and a
     *     {@code client.id} when they set none; the publisher applies rule K1 to them and logs
     *     what it overrides
     * @param producerConfig the producer settings the publisher will use (rule K1 applied), sorted
     * @param unknownKafkaKeys Kafka settings that are not producer settings (passed through)
     */
    record Resolved(RelayOptions options, String messageIdHeader, boolean tracingTimeInOutboxSpan,
                    OutboxStoreConfig storeConfig, Map<String, Object> producerSettings,
                    Map<String, Object> producerConfig, Set<String> unknownKafkaKeys) {
    }

    /**
     * The effective configuration as a properties text with every secret shown as
     * {@value Redactor#HIDDEN}: the relay options, the store settings with their defaults (unset
     * ones commented out) and the producer settings with K1 applied, then where each value came
     * from: the file, an environment variable, a default, generated for this run, or rule K1.
     *
     * @param resolved this configuration, validated
     * @return the text, one setting per line
     */
    String describe(Resolved resolved) {
        StringBuilder text = new StringBuilder();
        List<String> keys = new ArrayList<>();
        text.append("# outbox-relay configuration; secrets are shown as ").append(Redactor.HIDDEN).append('\n');
        text.append("\n# relay options\n");
        RelayOptions options = resolved.options();
        options.toProperties().forEach((option, value) -> line(text, keys, relayFileKey(option), value));
        line(text, keys, relayFileKey(KafkaOutboxPublisher.MESSAGE_ID_HEADER_CONFIG), resolved.messageIdHeader());
        line(text, keys, relayFileKey(KafkaOutboxPublisher.TIME_IN_OUTBOX_SPAN_CONFIG), resolved.tracingTimeInOutboxSpan());
        if (!relaySettings.containsKey(RelayOptions.RELAY_ID_CONFIG)) {
            text.append("# relay.id was not set: generated for this run\n");
        }
        if (options.maxPublishDuration() == null) {
            line(text, keys, relayFileKey(RelayOptions.MAX_PUBLISH_DURATION_MS_CONFIG), null);
        }
        text.append("\n# store\n");
        line(text, keys, STORE, provider.name());
        Map<String, Object> store = new TreeMap<>(storeSettings);
        if (resolved.storeConfig() != null) {
            store.putAll(resolved.storeConfig().values());
        }
        store.forEach((key, value) -> line(text, keys, STORE_PREFIX + key, value));
        text.append("\n# notifications\n");
        line(text, keys, NotifySettings.TRANSPORT, notifySettings.transport());
        notifySettings.settings().forEach((key, value) -> line(text, keys,
                NotifySettings.PREFIX + notifySettings.transport() + "." + key, value));
        text.append("\n# http endpoint\n");
        HttpSettings.configDef().names().stream().sorted().forEach(key -> line(text, keys, key, httpValues.get(key)));
        text.append("\n# kafka producer (rule K1 applied)\n");
        resolved.producerConfig().forEach((key, value) -> line(text, keys, KAFKA_PREFIX + key, value));
        kafkaSettings.forEach((key, value) -> {
            Object effective = resolved.producerConfig().get(key);
            if (effective == null) {
                text.append("# ").append(KAFKA_PREFIX).append(key).append(" was removed (rule K1)\n");
            } else if (!secretKeys.contains(KAFKA_PREFIX + key) && !String.valueOf(effective).equals(value)) {
                text.append("# ").append(KAFKA_PREFIX).append(key).append('=').append(escape(redactor.redact(value)))
                        .append(" was replaced (rule K1)\n");
            }
        });
        text.append("\n# where each value came from: a file, an environment variable (OUTBOX_*), a default,"
                + " generated for this run, or rule K1\n");
        keys.forEach(key -> text.append("#   ").append(key).append(" <- ").append(source(key, resolved))
                .append('\n'));
        if (!ignoredVariables.isEmpty()) {
            text.append("\n# ignored environment variables (not settings): ").append(ignoredVariables).append('\n');
        }
        return text.toString();
    }

    /** Where the value {@link #describe} shows for a key came from. */
    private String source(String key, Resolved resolved) {
        String origin = origins.get(key);
        if (key.startsWith(KAFKA_PREFIX)) {
            String name = key.substring(KAFKA_PREFIX.length());
            Object effective = resolved.producerConfig().get(name);
            if (origin != null && !String.valueOf(effective).equals(kafkaSettings.get(name))) {
                return "rule K1, replacing the value of " + originText(origin);
            }
            if (origin == null) {
                if (name.equals(ProducerConfig.CLIENT_ID_CONFIG)) {
                    return "generated: " + CLIENT_ID_PREFIX + "<relay.id>";
                }
                return name.equals(ProducerConfig.MAX_BLOCK_MS_CONFIG) ? "default of the relay's publisher"
                        : "rule K1";
            }
        }
        if (origin != null) {
            return originText(origin);
        }
        if (key.startsWith(NotifySettings.PREFIX) && !key.equals(NotifySettings.TRANSPORT)) {
            return "the store's setting of that name";
        }
        return key.equals(RelayOptions.RELAY_ID_CONFIG) ? "generated for this run" : "default";
    }

    private static String originText(String origin) {
        return origin.startsWith(ENVIRONMENT) ? origin.substring(ENVIRONMENT.length()) : "file " + origin;
    }

    private void line(StringBuilder text, List<String> keys, String key, Object value) {
        keys.add(key);
        if (value == null) {
            text.append('#').append(key).append("=\n");
            return;
        }
        String shown;
        if (value instanceof Password || secretKeys.contains(key)) {
            shown = Redactor.HIDDEN;
        } else if (value instanceof Class<?> type) {
            shown = type.getName();
        } else if (value instanceof List<?> list) {
            shown = String.join(",", list.stream().map(String::valueOf).toList());
        } else {
            shown = redactor.redact(String.valueOf(value));
        }
        text.append(key).append('=').append(escape(shown)).append('\n');
    }

    private static String escape(String value) {
        StringBuilder escaped = new StringBuilder();
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '\\' -> escaped.append("\\\\");
                case '\n' -> escaped.append("\\n");
                case '\r' -> escaped.append("\\r");
                case '\t' -> escaped.append("\\t");
                default -> escaped.append(c);
            }
        }
        return escaped.toString();
    }

    /**
     * Environment variables that start with {@value EnvironmentVariables#PREFIX} but are no
     * setting; they were ignored.
     *
     * @return the names, sorted
     */
    List<String> ignoredVariables() {
        return ignoredVariables;
    }
}
