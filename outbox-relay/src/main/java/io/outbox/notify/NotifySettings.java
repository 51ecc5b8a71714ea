package io.outbox.notify;

import io.outbox.relay.OutboxRelay;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.support.OutboxStoreConfig;
import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Cross-process wake-up settings as the standalone relay and the Kafka Connect source connector
 * take them (rules N2-N5), kept apart from the rest of their configuration:
 *
 * <ul>
 *   <li>{@code notify.transport}: {@code none} (the default: polling only), or a transport's
 *       provider name such as {@code redis} or {@code postgres}
 *       ({@link NotificationTransports});</li>
 *   <li>{@code notify.<transport>.<setting>}: that transport's settings, passed without the
 *       prefix, for example {@code notify.redis.uri=redis://cache:6379},
 *       {@code notify.redis.channel=orders-outbox}, {@code notify.postgres.channel=orders_outbox}.
 *       For {@code postgres} on a {@code jdbc} store with a PostgreSQL URL, {@code url},
 *       {@code user} and {@code password} default to the store's.</li>
 * </ul>
 *
 * <p>The relay never depends on the transport to deliver: polling stays on, a transport that is
 * down at start-up or later only costs latency. Immutable.
 */
public final class NotifySettings {

    /** Prefix of every notification setting. */
    public static final String PREFIX = "notify.";
    /** Key of the transport's name. */
    public static final String TRANSPORT = PREFIX + "transport";
    /** The transport name for polling only. */
    public static final String NONE = "none";

    private final String transport;
    private final Map<String, String> settings;

    private NotifySettings(String transport, Map<String, String> settings) {
        this.transport = transport;
        this.settings = settings;
    }

    /**
     * Sorts the {@code notify.*} settings; checks the keys, not the values.
     *
     * @param notify every setting whose key starts with {@value #PREFIX}, by full key; not null
     * @param storeName the store's provider name
     * @param storeSettings the store settings without prefix, for PostgreSQL defaults
     * @return the settings
     * @throws OutboxMisconfigurationException naming an unknown transport or setting
     */
    public static NotifySettings of(Map<String, String> notify, String storeName, Map<String, String> storeSettings) {
        String name = notify.getOrDefault(TRANSPORT, NONE);
        String problem = OutboxStoreConfig.notAsWritten(name);
        if (problem != null) {
            throw new OutboxMisconfigurationException(TRANSPORT + "=" + OutboxStoreConfig.quoted(name) + " " + problem);
        }
        Set<String> others = new TreeSet<>(notify.keySet());
        others.remove(TRANSPORT);
        if (name.isEmpty() || name.equals(NONE)) {
            if (!others.isEmpty()) {
                throw new OutboxMisconfigurationException("notification setting(s) " + others + " are set but "
                        + TRANSPORT + " is not: set it to one of " + transportNames() + ", or remove them");
            }
            return new NotifySettings(null, Map.of());
        }
        NotificationTransportProvider provider;
        try {
            provider = NotificationTransports.provider(name);
        } catch (OutboxMisconfigurationException e) {
            throw new OutboxMisconfigurationException(TRANSPORT + "=" + name + ": " + e.getMessage(), e);
        }
        String own = PREFIX + name + ".";
        Map<String, String> settings = new TreeMap<>();
        Set<String> unknown = new TreeSet<>();
        for (String key : others) {
            String setting = key.startsWith(own) ? key.substring(own.length()) : null;
            if (setting == null || !provider.settings().containsKey(setting)) {
                unknown.add(key);
            } else {
                settings.put(setting, notify.get(key));
            }
        }
        if (!unknown.isEmpty()) {
            throw new OutboxMisconfigurationException("unknown notification setting(s) " + unknown + " for "
                    + TRANSPORT + "=" + name + "; it accepts " + provider.settings().keySet().stream()
                    .map(s -> own + s).toList());
        }
        if (name.equals("postgres") && "jdbc".equals(storeName)
                && storeSettings.getOrDefault("url", "").startsWith("jdbc:postgresql:")) {
            for (String key : new String[] {"url", "user", "password"}) {
                if (!settings.containsKey(key) && storeSettings.containsKey(key)) {
                    settings.put(key, storeSettings.get(key));
                }
            }
        }
        return new NotifySettings(name, Collections.unmodifiableMap(settings));
    }

    private static String transportNames() {
        TreeSet<String> names = new TreeSet<>();
        names.add(NONE);
        NotificationTransports.providers().forEach(p -> names.add(p.name()));
        return names.toString();
    }

    /**
     * Whether a transport is configured.
     *
     * @return false for polling only
     */
    public boolean enabled() {
        return transport != null;
    }

    /**
     * The transport's name.
     *
     * @return the name, or {@value #NONE}
     */
    public String transport() {
        return transport == null ? NONE : transport;
    }

    /**
     * The transport's settings, without prefix, with the PostgreSQL defaults from the store.
     *
     * @return sorted; immutable
     */
    public Map<String, String> settings() {
        return settings;
    }

    /**
     * Checks the transport's setting values without connecting ({@code --check}).
     *
     * @throws OutboxMisconfigurationException naming a bad value
     */
    public void validate() {
        if (transport != null) {
            try {
                NotificationTransports.provider(transport).validate(settings);
            } catch (OutboxMisconfigurationException e) {
                throw new OutboxMisconfigurationException("notification settings (" + PREFIX + transport + ".*): "
                        + e.getMessage(), e);
            }
        }
    }

    /**
     * Opens the transport and a notifier that wakes the relay with what it hears.
     *
     * @param relay the running relay; not null
     * @return closes the notifier, then the transport; null when no transport is configured
     * @throws OutboxMisconfigurationException if a setting's value is invalid
     */
    public AutoCloseable start(OutboxRelay relay) {
        if (transport == null) {
            return null;
        }
        NotificationTransport opened = NotificationTransports.open(transport, settings);
        OutboxNotifier notifier;
        try {
            notifier = OutboxNotifier.builder().transport(opened).relay(relay).build();
        } catch (RuntimeException e) {
            opened.close();
            throw e;
        }
        return () -> {
            notifier.close();
            opened.close();
        };
    }
}
