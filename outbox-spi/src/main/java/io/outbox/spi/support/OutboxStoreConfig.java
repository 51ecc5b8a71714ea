package io.outbox.spi.support;

import io.outbox.spi.OutboxMisconfigurationException;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.types.Password;

/**
 * Parsed and validated store settings, on Kafka's {@link ConfigDef}: typed getters
 * ({@code getString}, {@code getInt}, {@code getPassword}, ...), defaults applied, and secrets of
 * type {@link ConfigDef.Type#PASSWORD} hidden from {@link #toString()}.
 *
 * <p>Text values are taken as written: Kafka's parser trims {@code STRING} and {@code PASSWORD}
 * values, so {@link #parse} first refuses one that starts or ends with whitespace or holds a
 * control character, naming the setting (and, unless it is a secret, the value with the
 * offending characters escaped).
 *
 * <p>Unlike a Kafka client, which only warns about unknown keys, a store refuses them: a typo in
 * a store setting would otherwise silently fall back to a default. Instances are immutable.
 */
public final class OutboxStoreConfig extends AbstractConfig {

    private final String storeName;

    private OutboxStoreConfig(String storeName, ConfigDef definition, Map<String, String> config) {
        super(definition, config, false);
        this.storeName = storeName;
    }

    /**
     * Validates settings against a definition.
     *
     * @param storeName the store's provider name, used in error messages; not null
     * @param definition the accepted settings; not null
     * @param config the settings; not null, no null keys
     * @return the parsed settings
     * @throws OutboxMisconfigurationException naming the store, the setting and the bad value when
     *     a key is unknown, a required setting is missing, or a value does not parse or validate
     */
    public static OutboxStoreConfig parse(String storeName, ConfigDef definition, Map<String, String> config) {
        Objects.requireNonNull(storeName, "storeName must not be null");
        Objects.requireNonNull(definition, "definition must not be null");
        Objects.requireNonNull(config, "config must not be null");
        Set<String> unknown = new TreeSet<>(config.keySet());
        unknown.removeAll(definition.names());
        if (!unknown.isEmpty()) {
            throw new OutboxMisconfigurationException("unknown setting(s) " + unknown + " for the '" + storeName
                    + "' outbox store; it accepts " + new TreeSet<>(definition.names()));
        }
        config.forEach((key, value) -> requireUntrimmed(storeName, definition.configKeys().get(key), value));
        try {
            return new OutboxStoreConfig(storeName, definition, config);
        } catch (ConfigException e) {
            throw new OutboxMisconfigurationException("invalid setting for the '" + storeName + "' outbox store: "
                    + abbreviated(String.valueOf(e.getMessage()), config), e);
        }
    }

    /** Values longer than this are shown abbreviated in messages. */
    static final int MAX_SHOWN_VALUE = 100;

    /**
     * The message with each value of more than {@value #MAX_SHOWN_VALUE} characters cut to its
     * first 40 and its length: a value of a megabyte must not become a log line of a megabyte.
     */
    private static String abbreviated(String message, Map<String, String> config) {
        String shown = message;
        for (String value : config.values()) {
            if (value != null && value.length() > MAX_SHOWN_VALUE && shown.contains(value)) {
                shown = shown.replace(value, value.substring(0, 40) + "...(" + value.length() + " characters)");
            }
        }
        return shown;
    }

    /**
     * Refuses a text value that Kafka's parser would silently trim, or that holds a control
     * character: {@code table.prefix=abc } must not become {@code abc}, nor a trailing NUL vanish.
     * A secret's value is never shown.
     */
    private static void requireUntrimmed(String storeName, ConfigDef.ConfigKey key, String value) {
        if (value == null || (key.type != ConfigDef.Type.STRING && key.type != ConfigDef.Type.PASSWORD)) {
            return;
        }
        String problem = notAsWritten(value);
        if (problem != null) {
            String shown = key.type == ConfigDef.Type.PASSWORD ? Password.HIDDEN : quoted(value);
            throw new OutboxMisconfigurationException("invalid setting for the '" + storeName + "' outbox store: "
                    + key.name + "=" + shown + " " + problem);
        }
    }

    /**
     * What keeps a text value from being taken as written: Kafka's parser (and {@code trim()})
     * would drop white space at either end, and a control character (a NUL, a tab) is never part
     * of a name or identifier. The same rule holds for every text setting of the standalone relay.
     *
     * @param value the value as written; not null
     * @return null when the value is fine, else the reason, such as
     *     {@code holds a control character; values are taken as written, never trimmed}
     */
    public static String notAsWritten(String value) {
        boolean padded = !value.equals(value.strip()) || !value.equals(value.trim());
        boolean control = value.chars().anyMatch(Character::isISOControl);
        if (!padded && !control) {
            return null;
        }
        return (control ? "holds a control character" : "starts or ends with whitespace")
                + "; values are taken as written, never trimmed";
    }

    /**
     * The value quoted, with control characters and non-ASCII whitespace as escapes
     * (a NUL as a backslash, u and 0000), for a message about a value that is no secret.
     *
     * @param value the value; not null
     * @return the quoted value
     */
    public static String quoted(String value) {
        StringBuilder out = new StringBuilder("'");
        value.codePoints().forEach(c -> {
            if (c != ' ' && (Character.isISOControl(c) || Character.isWhitespace(c) || Character.isSpaceChar(c))) {
                out.append(String.format("\\u%04x", c));
            } else {
                out.appendCodePoint(c);
            }
        });
        return out.append('\'').toString();
    }

    /**
     * The store this configuration belongs to.
     *
     * @return the provider name
     */
    public String storeName() {
        return storeName;
    }

    /** Lists every setting with its value; passwords show as {@code [hidden]}. */
    @Override
    public String toString() {
        Map<String, Object> shown = new TreeMap<>();
        values().forEach((k, v) -> shown.put(k, v instanceof Password ? Password.HIDDEN : v));
        return "OutboxStoreConfig[" + storeName + ", " + shown + "]";
    }
}
