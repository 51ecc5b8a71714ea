package io.outbox.notify;

import io.outbox.spi.OutboxMisconfigurationException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;

/**
 * Finds {@link NotificationTransportProvider}s on the class path with {@link ServiceLoader} and
 * opens transports by name. Thread-safe.
 */
public final class NotificationTransports {

    private static final String PROJECT_TRANSPORTS = "The jar io.outbox:outbox-notify-redis adds the transport "
            + "'redis' and outbox-notify-postgres adds 'postgres': put the one you need on the class path.";

    private NotificationTransports() {
    }

    /**
     * Opens a transport by provider name.
     *
     * @param name the provider name, for example {@code redis}; not null
     * @param settings its settings, without prefix; not null
     * @return a new transport owned by the caller
     * @throws OutboxMisconfigurationException if no provider has that name (the message lists the
     *     names found) or the settings are invalid
     */
    public static NotificationTransport open(String name, Map<String, String> settings) {
        Objects.requireNonNull(settings, "settings must not be null");
        return provider(name).create(Map.copyOf(settings));
    }

    /**
     * The provider with a given name, with the thread's context class loader.
     *
     * @param name not null
     * @return the provider
     * @throws OutboxMisconfigurationException if none or several have that name
     */
    public static NotificationTransportProvider provider(String name) {
        Objects.requireNonNull(name, "name must not be null");
        List<NotificationTransportProvider> all = providers();
        List<NotificationTransportProvider> matches = all.stream().filter(p -> name.equals(p.name())).toList();
        if (matches.isEmpty()) {
            throw new OutboxMisconfigurationException("no notification transport named '" + name
                    + "' on the class path; found " + all.stream().map(NotificationTransportProvider::name).toList()
                    + ". " + PROJECT_TRANSPORTS);
        }
        if (matches.size() > 1) {
            throw new OutboxMisconfigurationException("several notification transports are named '" + name + "': "
                    + matches.stream().map(p -> p.getClass().getName()).toList());
        }
        return matches.get(0);
    }

    /**
     * All providers found with the thread's context class loader.
     *
     * @return sorted by name; immutable
     * @throws OutboxMisconfigurationException if a registered provider cannot be loaded
     */
    public static List<NotificationTransportProvider> providers() {
        ClassLoader context = Thread.currentThread().getContextClassLoader();
        ClassLoader loader = context != null ? context : NotificationTransports.class.getClassLoader();
        List<NotificationTransportProvider> found = new ArrayList<>();
        try {
            ServiceLoader.load(NotificationTransportProvider.class, loader).forEach(found::add);
        } catch (ServiceConfigurationError e) {
            throw new OutboxMisconfigurationException("a notification transport provider could not be loaded: "
                    + e.getMessage(), e);
        }
        found.sort(Comparator.comparing(NotificationTransportProvider::name));
        return List.copyOf(found);
    }
}
