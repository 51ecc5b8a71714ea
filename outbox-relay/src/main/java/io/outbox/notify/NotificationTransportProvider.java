package io.outbox.notify;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;

/**
 * Creates {@link NotificationTransport}s from settings; registered with
 * {@link java.util.ServiceLoader} (each transport module uses {@code @AutoService}) and found by
 * {@link NotificationTransports#open(String, Map)}.
 */
public interface NotificationTransportProvider {

    /**
     * The name a configuration selects this transport by.
     *
     * @return for example {@code redis} or {@code postgres}; never null
     */
    String name();

    /**
     * The settings this provider accepts, each defined once: key (without any prefix), type, default
     * and meaning (with the valid values), for help texts, the reference page
     * {@code docs/reference/relay-options.md} and the standalone relay's checks.
     *
     * @return a definition; never null
     */
    ConfigDef configDef();

    /**
     * The settings' keys and meanings, from {@link #configDef()}.
     *
     * @return setting name (without any prefix) to its documentation, in definition order; immutable
     */
    default Map<String, String> settings() {
        Map<String, String> settings = new LinkedHashMap<>();
        configDef().configKeys().forEach((key, definition) -> settings.put(key,
                definition.documentation == null ? "" : definition.documentation));
        return Collections.unmodifiableMap(settings);
    }

    /**
     * Checks settings without connecting to anything or starting threads, as a standalone relay's
     * {@code --check} does. The default accepts everything {@link #create(Map)} would.
     *
     * @param settings the settings, without prefix; not null
     * @throws io.outbox.spi.OutboxMisconfigurationException naming an unknown or invalid setting
     */
    default void validate(Map<String, String> settings) {
    }

    /**
     * Creates a transport. It connects lazily or in the background: an unreachable server is no
     * error here (N4), only a setting that can never work is.
     *
     * @param settings the settings, without prefix; not null
     * @return a new transport owned by the caller
     * @throws io.outbox.spi.OutboxMisconfigurationException naming an unknown or invalid setting
     */
    NotificationTransport create(Map<String, String> settings);
}
