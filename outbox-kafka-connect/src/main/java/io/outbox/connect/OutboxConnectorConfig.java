package io.outbox.connect;

import io.outbox.notify.NotifySettings;
import io.outbox.relay.RelayOptions;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.OutboxStoreProvider;
import io.outbox.spi.OutboxStores;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.ConfigValue;

/**
 * The source connector's configuration: the standalone relay's keys, checked setting by setting so
 * that Connect's validate endpoint ({@code PUT /connector-plugins/OutboxSourceConnector/config/validate})
 * shows each error on its setting.
 *
 * <ul>
 *   <li>{@value #STORE}: the store's provider name ({@link OutboxStores}: {@code jdbc},
 *       {@code mongodb}, {@code dynamodb}, or a store of yours in the plugin directory);</li>
 *   <li>{@code store.<setting>}: the provider's settings ({@link OutboxStoreProvider#configDef()}),
 *       with their types; secrets such as {@code store.password} are {@code PASSWORD}s;</li>
 *   <li>{@code relay.<option>}: {@link RelayOptions}, by the standalone relay's keys
 *       ({@code relay.bucket.count}, {@code relay.batch.size}, {@code relay.lease.duration.ms}, ...),
 *       with the same definitions, defaults and ranges; {@code relay.id} excepted, since each
 *       task names its own relay ({@link #relayId}); and {@value #MESSAGE_ID_HEADER}
 *       (rule K2);</li>
 *   <li>{@value NotifySettings#TRANSPORT} and {@code notify.<transport>.<setting>}: cross-process
 *       wake-ups ({@link NotifySettings});</li>
 *   <li>{@value #KEY_CONVERTER}, {@value #VALUE_CONVERTER} and {@value #HEADER_CONVERTER}: each
 *       must be {@value #BYTE_ARRAY_CONVERTER}, set in the connector's own configuration (a
 *       connector cannot see the worker's defaults), so that the bytes the writer stored are the
 *       bytes Kafka gets (rule X2).</li>
 * </ul>
 * Other keys are Connect's own ({@code name}, {@code tasks.max}, {@code transforms}, ...) and are
 * left to it; an unknown key under {@code store.}, {@code relay.} or {@code notify.} is an error.
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class OutboxConnectorConfig {

    /** Key of the store's provider name. */
    public static final String STORE = "store";
    /** Prefix of the store's settings. */
    public static final String STORE_PREFIX = "store.";
    /** Prefix of the relay options. */
    public static final String RELAY_PREFIX = "relay.";
    /** Key of the message-id header (rule K2), the publisher option the standalone relay takes. */
    public static final String MESSAGE_ID_HEADER = RELAY_PREFIX + KafkaOutboxPublisher.MESSAGE_ID_HEADER_CONFIG;
    /** Connect's key of the connector's key converter. */
    public static final String KEY_CONVERTER = "key.converter";
    /** Connect's key of the connector's value converter. */
    public static final String VALUE_CONVERTER = "value.converter";
    /** Connect's key of the connector's header converter. */
    public static final String HEADER_CONVERTER = "header.converter";
    /** The converter each of the three must be: the bytes pass through unchanged. */
    public static final String BYTE_ARRAY_CONVERTER = "org.apache.kafka.connect.converters.ByteArrayConverter";

    /** The relay option the connector sets itself, per task. */
    private static final Set<String> TASK_OWNED = Set.of(RelayOptions.RELAY_ID_CONFIG);
    private static final String STORE_GROUP = "Store";
    private static final String RELAY_GROUP = "Relay";
    private static final String NOTIFY_GROUP = "Notifications";
    private static final List<String> CONVERTERS = List.of(KEY_CONVERTER, VALUE_CONVERTER, HEADER_CONVERTER);
    /** A dotted setting name standing as a word in a message. */
    private static final Pattern DOTTED_NAME = Pattern.compile("(?<![\\w.-])[a-z][a-z0-9_-]*(?:\\.[a-z0-9_-]+)+");

    private final String storeName;
    private final Map<String, String> storeSettings;
    private final Map<String, String> relaySettings;
    private final String messageIdHeader;
    private final NotifySettings notifySettings;
    private final int bucketCount;

    private OutboxConnectorConfig(String storeName, Map<String, String> storeSettings, Map<String, String> relaySettings,
                                  String messageIdHeader, NotifySettings notifySettings, int bucketCount) {
        this.storeName = storeName;
        this.storeSettings = storeSettings;
        this.relaySettings = relaySettings;
        this.messageIdHeader = messageIdHeader;
        this.notifySettings = notifySettings;
        this.bucketCount = bucketCount;
    }

    /**
     * The settings every configuration has, whatever its store: {@value #STORE}, the relay options,
     * {@value #MESSAGE_ID_HEADER} and {@value NotifySettings#TRANSPORT}. The store's own settings
     * join them in {@link #validate} once {@value #STORE} names a provider.
     *
     * @return a new definition
     */
    public static ConfigDef configDef() {
        ConfigDef def = new ConfigDef();
        def.define(STORE, ConfigDef.Type.STRING, ConfigDef.NO_DEFAULT_VALUE, new ConfigDef.NonEmptyString(),
                ConfigDef.Importance.HIGH, "The store's provider name: jdbc, mongodb, dynamodb, or the name of a "
                        + "store of your own in the plugin directory. Its settings follow as store.<setting>.",
                STORE_GROUP, 0, ConfigDef.Width.SHORT, STORE);
        int order = 0;
        for (ConfigDef.ConfigKey key : RelayOptions.configDef().configKeys().values()) {
            if (!TASK_OWNED.contains(key.name)) {
                define(def, relayKey(key.name), key, RELAY_GROUP, order++);
            }
        }
        for (ConfigDef.ConfigKey key : KafkaOutboxPublisher.configDef().configKeys().values()) {
            if (!key.name.equals(KafkaOutboxPublisher.TIME_IN_OUTBOX_SPAN_CONFIG)) { // Connect's records carry no span
                define(def, relayKey(key.name), key, RELAY_GROUP, order++);
            }
        }
        def.define(NotifySettings.TRANSPORT, ConfigDef.Type.STRING, NotifySettings.NONE, ConfigDef.Importance.LOW,
                "Cross-process wake-ups: none (polling only), redis or postgres. The transport's settings follow as "
                        + "notify.<transport>.<setting>; polling at relay.poll.interval.ms stays on.",
                NOTIFY_GROUP, 0, ConfigDef.Width.SHORT, NotifySettings.TRANSPORT);
        return def;
    }

    private static void define(ConfigDef def, String name, ConfigDef.ConfigKey key, String group, int order) {
        def.define(name, key.type, key.defaultValue, key.validator, key.importance, key.documentation, group, order,
                ConfigDef.Width.MEDIUM, name);
    }

    /**
     * The key the standalone relay and this connector give a relay option.
     *
     * @param option a {@link RelayOptions} or publisher key, such as {@code bucket.count}
     * @return the key with {@value #RELAY_PREFIX} in front, unless it starts with it already
     */
    public static String relayKey(String option) {
        return option.startsWith(RELAY_PREFIX) ? option : RELAY_PREFIX + option;
    }

    /**
     * Checks every setting, each error on the setting it concerns, without connecting to anything:
     * types and ranges by the definitions, then the rules across settings (the store provider's
     * {@link OutboxStoreProvider#validate}, {@link RelayOptions}' rules between options, the
     * notification transport's checks) and the converters.
     *
     * @param props the connector's configuration as Connect passes it; not null
     * @return one value per setting checked, those with problems carrying error messages
     */
    public static List<ConfigValue> validate(Map<String, String> props) {
        Objects.requireNonNull(props, "props must not be null");
        Map<String, ConfigValue> values = new LinkedHashMap<>();
        for (ConfigValue value : configDef().validate(props)) {
            values.put(value.name(), value);
        }
        refuseUnknown(props, RELAY_PREFIX, configDef().names(), values,
                "unknown relay option; the connector accepts " + relayNames()
                        + " (relay.id is set by each task itself)");
        Map<String, String> storeSettings = withoutPrefix(props, STORE_PREFIX);
        String storeName = props.get(STORE);
        OutboxStoreProvider provider = null;
        if (values.get(STORE).errorMessages().isEmpty()) {
            try {
                provider = OutboxStores.provider(storeName, OutboxConnectorConfig.class.getClassLoader());
            } catch (OutboxMisconfigurationException e) {
                values.get(STORE).addErrorMessage(e.getMessage());
            }
        }
        if (provider != null) {
            validateStore(provider, props, storeSettings, values);
        }
        validateRelayRules(props, values);
        validateNotifications(props, storeName, storeSettings, values);
        for (String converter : CONVERTERS) {
            String value = props.get(converter);
            if (!BYTE_ARRAY_CONVERTER.equals(value == null ? null : value.trim())) {
                // No value: Connect's REST layer formats a converter's value as a Class.
                ConfigValue checked = values.computeIfAbsent(converter, name -> new ConfigValue(name, null,
                        new ArrayList<>(), new ArrayList<>()));
                checked.addErrorMessage(converter + " must be " + BYTE_ARRAY_CONVERTER + " in the connector's own "
                        + "configuration (the worker's default is not visible to a connector) so that keys, values and "
                        + "headers reach Kafka as the writer stored them, but was " + (value == null ? "not set"
                        : "'" + value + "'"));
            }
        }
        return List.copyOf(values.values());
    }

    private static void validateStore(OutboxStoreProvider provider, Map<String, String> props,
                                      Map<String, String> storeSettings, Map<String, ConfigValue> values) {
        ConfigDef storeDef = storeDefinition(provider);
        int before = errorCount(values);
        storeDef.validate(props).forEach(value -> values.put(value.name(), value));
        if (!provider.configDef().names().isEmpty()) {
            refuseUnknown(props, STORE_PREFIX, storeDef.names(), values, "unknown setting of store '"
                    + provider.name() + "'; it accepts " + new TreeSet<>(storeDef.names()));
        }
        if (errorCount(values) > before) {
            return;
        }
        try {
            provider.validate(storeSettings);
        } catch (OutboxMisconfigurationException e) {
            attach(values, STORE_PREFIX, storeDef.names(), STORE, e.getMessage());
        }
    }

    /** The provider's settings under {@value #STORE_PREFIX}, with their types (passwords stay passwords). */
    private static ConfigDef storeDefinition(OutboxStoreProvider provider) {
        ConfigDef def = new ConfigDef();
        int order = 0;
        for (ConfigDef.ConfigKey key : provider.configDef().configKeys().values()) {
            define(def, STORE_PREFIX + key.name, key, STORE_GROUP, ++order);
        }
        return def;
    }

    private static void validateRelayRules(Map<String, String> props, Map<String, ConfigValue> values) {
        boolean typesOk = values.values().stream()
                .filter(v -> v.name().startsWith(RELAY_PREFIX))
                .allMatch(v -> v.errorMessages().isEmpty());
        if (!typesOk) {
            return;
        }
        try {
            RelayOptions.fromProperties(relayOptionSettings(props));
        } catch (OutboxMisconfigurationException e) {
            attach(values, RELAY_PREFIX, configDef().names(), relayKey(RelayOptions.BUCKET_COUNT_CONFIG),
                    e.getMessage());
        }
    }

    private static void validateNotifications(Map<String, String> props, String storeName,
                                              Map<String, String> storeSettings, Map<String, ConfigValue> values) {
        Map<String, String> notify = new TreeMap<>();
        props.forEach((key, value) -> {
            if (key.startsWith(NotifySettings.PREFIX)) {
                notify.put(key, value);
            }
        });
        try {
            NotifySettings.of(notify, storeName, storeSettings).validate();
        } catch (OutboxMisconfigurationException e) {
            Set<String> known = new TreeSet<>(notify.keySet());
            known.add(NotifySettings.TRANSPORT);
            attach(values, NotifySettings.PREFIX, known, NotifySettings.TRANSPORT, e.getMessage());
        }
    }

    /**
     * Puts an error on the first setting of a group the message names, else on a fallback, writing
     * bare option names ({@code lease.duration.ms}) as the keys users write
     * ({@code relay.lease.duration.ms}).
     */
    private static void attach(Map<String, ConfigValue> values, String prefix, Set<String> keys, String fallback,
                               String message) {
        String target = null;
        StringBuilder text = new StringBuilder();
        Matcher m = DOTTED_NAME.matcher(message);
        int copied = 0;
        while (m.find()) {
            String word = m.group();
            String key = keys.contains(word) ? word : keys.contains(prefix + word) ? prefix + word : null;
            if (key != null) {
                text.append(message, copied, m.start()).append(key);
                copied = m.end();
                target = target == null ? key : target;
            }
        }
        text.append(message, copied, message.length());
        String name = target == null ? fallback : target;
        values.computeIfAbsent(name, n -> new ConfigValue(n, null, new ArrayList<>(), new ArrayList<>()))
                .addErrorMessage(text.toString());
    }

    private static void refuseUnknown(Map<String, String> props, String prefix, Set<String> known,
                                      Map<String, ConfigValue> values, String message) {
        props.forEach((key, value) -> {
            if (key.startsWith(prefix) && !known.contains(key)) {
                values.computeIfAbsent(key, k -> new ConfigValue(k, value, new ArrayList<>(), new ArrayList<>()))
                        .addErrorMessage(key + ": " + message);
            }
        });
    }

    private static int errorCount(Map<String, ConfigValue> values) {
        return values.values().stream().mapToInt(v -> v.errorMessages().size()).sum();
    }

    private static List<String> relayNames() {
        List<String> names = new ArrayList<>();
        configDef().names().stream().filter(n -> n.startsWith(RELAY_PREFIX)).sorted().forEach(names::add);
        return names;
    }

    private static Map<String, String> withoutPrefix(Map<String, String> props, String prefix) {
        Map<String, String> settings = new TreeMap<>();
        props.forEach((key, value) -> {
            if (key.startsWith(prefix) && key.length() > prefix.length() && value != null) {
                settings.put(key.substring(prefix.length()), value);
            }
        });
        return Collections.unmodifiableMap(settings);
    }

    /** The relay options among the settings, by their {@link RelayOptions} keys. */
    private static Map<String, String> relayOptionSettings(Map<String, String> props) {
        Map<String, String> options = new TreeMap<>();
        for (String option : RelayOptions.configDef().names()) {
            String value = props.get(relayKey(option));
            if (value != null && !TASK_OWNED.contains(option)) {
                options.put(option, value);
            }
        }
        return options;
    }

    /**
     * Validates a configuration and keeps what the connector and its tasks need.
     *
     * @param props the connector's or a task's configuration; not null
     * @return the configuration
     * @throws ConfigException listing every setting with a problem and its messages
     */
    public static OutboxConnectorConfig parse(Map<String, String> props) {
        List<String> problems = new ArrayList<>();
        for (ConfigValue value : validate(props)) {
            value.errorMessages().forEach(message -> problems.add(value.name() + ": " + message));
        }
        if (!problems.isEmpty()) {
            throw new ConfigException("invalid outbox source connector configuration: " + String.join("; ", problems));
        }
        Map<String, String> storeSettings = withoutPrefix(props, STORE_PREFIX);
        Map<String, String> relaySettings = Collections.unmodifiableMap(relayOptionSettings(props));
        Map<String, String> notify = new TreeMap<>();
        props.forEach((key, value) -> {
            if (key.startsWith(NotifySettings.PREFIX)) {
                notify.put(key, value);
            }
        });
        String header = props.getOrDefault(MESSAGE_ID_HEADER, KafkaOutboxPublisher.DEFAULT_MESSAGE_ID_HEADER);
        RelayOptions options = RelayOptions.fromProperties(relaySettings);
        return new OutboxConnectorConfig(props.get(STORE), storeSettings, relaySettings, header,
                NotifySettings.of(notify, props.get(STORE), storeSettings), options.bucketCount());
    }

    /**
     * The relay id of a task: the connector's name, the task's number with five digits, and eight
     * random hex digits, such as {@code orders-outbox-00002-3fa85f64}. Task ids sort in task order,
     * so when the connector's tasks are the store's only relays, the store's fair share (which
     * ranks relays by id) makes the range {@link OutboxSourceConnector#taskConfigs} gave task
     * {@code i} its preferred range. The random part tells a task
     * apart from an earlier instance of itself that is still alive (a zombie): they never share
     * a lease.
     *
     * @param connectorName the connector's name; not null
     * @param task the task's number, {@code >= 0}
     * @param random eight hex digits
     * @return a valid relay id, at most 120 characters
     */
    static String relayId(String connectorName, int task, String random) {
        String name = connectorName.replaceAll("\\p{Cntrl}", "_").strip();
        if (name.isEmpty()) {
            name = "outbox-connect";
        }
        if (name.length() > 100) {
            name = name.substring(0, 100);
        }
        return String.format("%s-%05d-%s", name, task, random);
    }

    /**
     * The store's provider name.
     *
     * @return the name, such as {@code jdbc}
     */
    public String storeName() {
        return storeName;
    }

    /**
     * The store's settings, without the {@value #STORE_PREFIX} prefix.
     *
     * @return sorted; immutable
     */
    public Map<String, String> storeSettings() {
        return storeSettings;
    }

    /**
     * The relay options of one task.
     *
     * @param relayId the task's relay id; not null
     * @return the options, validated
     * @throws OutboxMisconfigurationException if the relay id is invalid
     */
    public RelayOptions relayOptions(String relayId) {
        Map<String, String> settings = new TreeMap<>(relaySettings);
        settings.put(RelayOptions.RELAY_ID_CONFIG, relayId);
        return RelayOptions.fromProperties(settings);
    }

    /**
     * The number of buckets ({@code relay.bucket.count}).
     *
     * @return the bucket count, {@code >= 1}
     */
    public int bucketCount() {
        return bucketCount;
    }

    /**
     * The header each record carries the message id in (rule K2).
     *
     * @return the header name, not blank
     */
    public String messageIdHeader() {
        return messageIdHeader;
    }

    /**
     * The cross-process wake-up settings.
     *
     * @return the settings; polling only when no transport is set
     */
    public NotifySettings notifySettings() {
        return notifySettings;
    }
}
