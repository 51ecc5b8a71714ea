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
        try {
            return new OutboxStoreConfig(storeName, definition, config);
        } catch (ConfigException e) {
            throw new OutboxMisconfigurationException("invalid setting for the '" + storeName + "' outbox store: "
                    + e.getMessage(), e);
        }
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
