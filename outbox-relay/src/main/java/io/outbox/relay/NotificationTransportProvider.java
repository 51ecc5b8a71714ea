package io.outbox.relay;

import java.util.Map;

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
     * The settings this provider accepts, each with its meaning and default, for help texts and
     * the standalone relay's checks.
     *
     * @return setting name (without any prefix) to a one-line description; immutable
     */
    Map<String, String> settings();

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
