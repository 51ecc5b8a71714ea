package io.outbox.spi;

import io.outbox.spi.support.OutboxStoreConfig;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.config.ConfigDef;

/**
 * Creates a store from string settings; found by {@link OutboxStores} through
 * {@link java.util.ServiceLoader}. Store modules register theirs with
 * {@code @AutoService(OutboxStoreProvider.class)}.
 *
 * <p>Implementations have a public no-argument constructor and are thread-safe.
 */
public interface OutboxStoreProvider {

    /**
     * The name users select the store by, for example {@code jdbc}, {@code mongodb},
     * {@code dynamodb}.
     *
     * @return a short lower-case name, unique among the providers on the class path; not null
     */
    String name();

    /**
     * Creates a store. Implementations validate the settings with
     * {@link OutboxStoreConfig#parse(String, ConfigDef, Map)}, so an unknown or malformed setting
     * fails here, naming the key and the value.
     *
     * @param config the settings, without any prefix (for example {@code url}, {@code user});
     *     not null
     * @return a new store that owns its client (pool, connection), owned by the caller: its
     *     {@link CloseableOutboxStore#close()} releases them
     * @throws OutboxMisconfigurationException if a setting is unknown, missing or malformed
     * @throws RuntimeException if the store cannot be created (the database is unreachable, say)
     */
    CloseableOutboxStore create(Map<String, String> config);

    /**
     * Validates settings exactly as {@link #create(Map)} does before it connects to anything: the
     * standalone relay's {@code --check} calls it, so a configuration check refuses what a start
     * would refuse, with the same message. The default parses the settings with
     * {@link #configDef()} (when it defines any); providers with checks across settings (a value
     * required unless another one gives it) override it and call it from {@link #create(Map)}.
     *
     * @param config the settings, without any prefix; not null
     * @throws OutboxMisconfigurationException if a setting is unknown, missing or malformed, or
     *     can never work (a URL the driver cannot parse), naming it; secrets are never shown
     */
    default void validate(Map<String, String> config) {
        ConfigDef definition = configDef();
        if (!definition.names().isEmpty()) {
            OutboxStoreConfig.parse(name(), definition, config);
        }
    }

    /**
     * The settings {@link #create(Map)} accepts, with their types, defaults and documentation;
     * settings of type {@link ConfigDef.Type#PASSWORD} are never logged.
     *
     * @return the definition; never null
     */
    default ConfigDef configDef() {
        return new ConfigDef();
    }

    /**
     * The boolean settings that make {@link #create(Map)} change the database's schema (create
     * tables, indexes), for example {@code create.schema}. Commands that only read or repair data
     * (the standalone relay's {@code pending} and {@code dead-letters}) open the store with each of
     * them set to {@code false}, so a mistyped prefix is reported as absent tables instead of
     * creating an empty outbox beside the real one.
     *
     * @return the setting names, without any prefix; empty (the default) when none does
     */
    default Set<String> schemaChangingSettings() {
        return Set.of();
    }
}
