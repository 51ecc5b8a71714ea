package io.outbox.spi;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.TreeMap;

/**
 * Finds {@link OutboxStoreProvider}s on the class path with {@link ServiceLoader} and opens stores
 * by name. Thread-safe; each call loads the providers afresh.
 */
public final class OutboxStores {

    /** Which artifact adds which of this project's stores, for error messages. */
    private static final String PROJECT_STORES = "The jar io.outbox:outbox-store-jdbc adds the store 'jdbc', "
            + "outbox-store-mongodb adds 'mongodb' and outbox-store-dynamodb adds 'dynamodb': put the one you need "
            + "on the class path.";

    private OutboxStores() {
    }

    /**
     * Opens a store by provider name, with the thread's context class loader.
     *
     * @param name the provider name, for example {@code jdbc}; not null
     * @param config the store settings; not null
     * @return a new store owned by the caller, which owns its client: close it (try-with-resources)
     * @throws OutboxMisconfigurationException if no provider has that name (the message lists the
     *     names found), two providers share it, or the settings are invalid
     * @throws RuntimeException if the provider cannot create the store
     */
    public static CloseableOutboxStore open(String name, Map<String, String> config) {
        return open(name, config, defaultClassLoader());
    }

    /**
     * Opens a store by provider name, with the given class loader.
     *
     * @param name the provider name; not null
     * @param config the store settings; not null
     * @param classLoader where to look for providers; not null
     * @return a new store owned by the caller, which owns its client: close it
     * @throws OutboxMisconfigurationException if no provider has that name, two share it, or the
     *     settings are invalid
     */
    public static CloseableOutboxStore open(String name, Map<String, String> config, ClassLoader classLoader) {
        Objects.requireNonNull(config, "config must not be null");
        return provider(name, classLoader).create(Map.copyOf(config));
    }

    /**
     * The provider with a given name, with the thread's context class loader.
     *
     * @param name the provider name; not null
     * @return the provider
     * @throws OutboxMisconfigurationException if none or several have that name
     */
    public static OutboxStoreProvider provider(String name) {
        return provider(name, defaultClassLoader());
    }

    /**
     * The provider with a given name.
     *
     * @param name the provider name; not null
     * @param classLoader where to look; not null
     * @return the provider
     * @throws OutboxMisconfigurationException if none or several have that name; the message lists
     *     the names found
     */
    public static OutboxStoreProvider provider(String name, ClassLoader classLoader) {
        Objects.requireNonNull(name, "name must not be null");
        List<OutboxStoreProvider> all = providers(classLoader);
        List<OutboxStoreProvider> matches = all.stream().filter(p -> name.equals(p.name())).toList();
        if (matches.isEmpty()) {
            throw new OutboxMisconfigurationException("no outbox store named '" + name + "' on the class path; found "
                    + names(all) + ". " + PROJECT_STORES);
        }
        if (matches.size() > 1) {
            throw new OutboxMisconfigurationException("several outbox stores are named '" + name + "': "
                    + matches.stream().map(p -> p.getClass().getName()).toList());
        }
        return matches.get(0);
    }

    /**
     * All providers found, with the thread's context class loader.
     *
     * @return the providers, sorted by name; immutable
     * @throws OutboxMisconfigurationException if a registered provider cannot be loaded
     */
    public static List<OutboxStoreProvider> providers() {
        return providers(defaultClassLoader());
    }

    /**
     * All providers found.
     *
     * @param classLoader where to look; not null
     * @return the providers, sorted by name; immutable
     * @throws OutboxMisconfigurationException if a registered provider cannot be loaded
     */
    public static List<OutboxStoreProvider> providers(ClassLoader classLoader) {
        Objects.requireNonNull(classLoader, "classLoader must not be null");
        List<OutboxStoreProvider> found = new ArrayList<>();
        try {
            ServiceLoader.load(OutboxStoreProvider.class, classLoader).forEach(found::add);
        } catch (ServiceConfigurationError e) {
            throw new OutboxMisconfigurationException("an outbox store provider could not be loaded: "
                    + e.getMessage(), e);
        }
        found.sort(Comparator.comparing(OutboxStoreProvider::name));
        return List.copyOf(found);
    }

    private static List<String> names(List<OutboxStoreProvider> providers) {
        Map<String, String> byName = new TreeMap<>();
        providers.forEach(p -> byName.put(p.name(), p.getClass().getName()));
        return List.copyOf(byName.keySet());
    }

    private static ClassLoader defaultClassLoader() {
        ClassLoader context = Thread.currentThread().getContextClassLoader();
        return context != null ? context : OutboxStores.class.getClassLoader();
    }
}
