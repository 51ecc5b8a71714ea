package ${package};

import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.CloseableOutboxStore;
import io.outbox.spi.OutboxStoreProvider;
import io.outbox.spi.support.OutboxStoreConfig;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.apache.kafka.common.config.ConfigDef;

/**
 * Opens {@link MyOutboxStore} by name, for relays configured from properties and for the kit's
 * discovery test; registered in {@code META-INF/services/io.outbox.spi.OutboxStoreProvider}.
 * Replace the settings with your database's (a URL, credentials, a table prefix) and open a client
 * in {@link #create(Map)}; validate them with {@code OutboxStoreConfig.parse(name, configDef, settings)} so unknown keys are
 * refused.
 *
 * <p>As generated: provider of {@link MyOutboxStore} under the name {@value #NAME}. Without the
 * {@value #NAME_CONFIG} setting every call to {@link #create(Map)} returns a new, empty,
 * independent store on the system UTC clock; with it, the store {@linkplain #register registered}
 * under that name in this JVM, so that code opening stores by name (a relay configured from
 * properties, the compatibility kit) reaches a store the application or test made itself.
 */
public final class MyOutboxStoreProvider implements OutboxStoreProvider {

    /** The provider name. */
    public static final String NAME = "my-store";

    /** Setting: the name of a registered store to return instead of a new one. */
    public static final String NAME_CONFIG = "name";

    /** Setting: the largest payload accepted, in bytes. */
    public static final String MAX_PAYLOAD_BYTES = "max.payload.bytes";

    private static final ConfigDef CONFIG = new ConfigDef()
            .define(MAX_PAYLOAD_BYTES, ConfigDef.Type.LONG, MyOutboxStore.DEFAULT_MAX_PAYLOAD_BYTES,
                    ConfigDef.Range.atLeast(0), ConfigDef.Importance.LOW,
                    "The largest payload (key + value + encoded headers) the store accepts, in bytes.")
            .define(NAME_CONFIG, ConfigDef.Type.STRING, null, ConfigDef.Importance.LOW,
                    "The name of a store registered with MyOutboxStoreProvider.register in this JVM; "
                            + "when set, that store is returned (and max.payload.bytes is ignored).");

    private static final ConcurrentMap<String, MyOutboxStore> REGISTERED = new ConcurrentHashMap<>();

    /** Creates the provider; called by {@link java.util.ServiceLoader}. */
    public MyOutboxStoreProvider() {
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public ConfigDef configDef() {
        return CONFIG;
    }

    @Override
    public CloseableOutboxStore create(Map<String, String> config) {
        OutboxStoreConfig parsed = OutboxStoreConfig.parse(NAME, CONFIG, config);
        String name = parsed.getString(NAME_CONFIG);
        if (name == null) {
            return MyOutboxStore.builder().maxPayloadBytes(parsed.getLong(MAX_PAYLOAD_BYTES)).build();
        }
        MyOutboxStore store = REGISTERED.get(name);
        if (store == null) {
            throw new OutboxMisconfigurationException("no in-memory outbox store is registered as '" + name
                    + "'; registered: " + new TreeSet<>(REGISTERED.keySet()));
        }
        return store;
    }

    /**
     * Registers a store under a name, so that {@code OutboxStores.open("my-store", Map.of("name",
     * name))} returns it. A later registration under the same name replaces the earlier one.
     *
     * @param name the name; not null
     * @param store the store; not null
     */
    public static void register(String name, MyOutboxStore store) {
        REGISTERED.put(Objects.requireNonNull(name, "name must not be null"),
                Objects.requireNonNull(store, "store must not be null"));
    }

    /**
     * Removes a registration; a no-op when there is none.
     *
     * @param name the name; not null
     */
    public static void unregister(String name) {
        REGISTERED.remove(Objects.requireNonNull(name, "name must not be null"));
    }
}
