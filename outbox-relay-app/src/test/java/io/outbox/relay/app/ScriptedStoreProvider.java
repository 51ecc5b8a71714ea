package io.outbox.relay.app;

import com.google.auto.service.AutoService;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.CloseableOutboxStore;
import io.outbox.spi.OutboxStoreProvider;
import io.outbox.spi.support.OutboxStoreConfig;
import io.outbox.tck.InMemoryOutboxStoreProvider;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.config.ConfigDef;

/**
 * A store provider for the standalone relay's tests, named {@value #NAME}: it returns the
 * in-memory store registered under {@code name}, after failing the first {@code failures} calls
 * for that name with an error whose message holds the {@code password} (as a driver's message
 * may), and it declares a password setting; with {@code misconfiguration} set, every call fails
 * with a misconfiguration of that message.
 */
@AutoService(OutboxStoreProvider.class)
public final class ScriptedStoreProvider implements OutboxStoreProvider {

    /** The provider name. */
    static final String NAME = "scripted";

    private static final ConfigDef CONFIG = new ConfigDef()
            .define("name", ConfigDef.Type.STRING, ConfigDef.NO_DEFAULT_VALUE, ConfigDef.Importance.HIGH,
                    "The name of the registered in-memory store to return.")
            .define("failures", ConfigDef.Type.INT, 0, ConfigDef.Range.atLeast(0), ConfigDef.Importance.LOW,
                    "How many calls fail before one succeeds.")
            .define("misconfiguration", ConfigDef.Type.STRING, "", ConfigDef.Importance.LOW,
                    "When not empty, every call fails with an OutboxMisconfigurationException of this message, "
                            + "'|' standing for a line break.")
            .define("password", ConfigDef.Type.PASSWORD, "default-secret", ConfigDef.Importance.LOW,
                    "A secret, shown in the failures' messages.");

    private static final ConcurrentMap<String, AtomicInteger> CALLS = new ConcurrentHashMap<>();

    /** Called by ServiceLoader. */
    public ScriptedStoreProvider() {
    }

    /**
     * How many times a store of this name was asked for.
     *
     * @param name the registered store's name
     * @return the number of calls, failed ones included
     */
    static int calls(String name) {
        AtomicInteger calls = CALLS.get(name);
        return calls == null ? 0 : calls.get();
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
        String name = parsed.getString("name");
        int call = CALLS.computeIfAbsent(name, n -> new AtomicInteger()).incrementAndGet();
        String misconfiguration = parsed.getString("misconfiguration");
        if (!misconfiguration.isEmpty()) {
            throw new OutboxMisconfigurationException(misconfiguration.replace("|", "\n"));
        }
        if (call <= parsed.getInt("failures")) {
            String password = parsed.getPassword("password").value();
            throw new IllegalStateException("cannot connect to jdbc:test://app:" + password + "@db/x (password "
                    + password + " refused)", new RuntimeException("inner cause mentions " + password));
        }
        return new InMemoryOutboxStoreProvider().create(Map.of(InMemoryOutboxStoreProvider.NAME_CONFIG, name));
    }
}
