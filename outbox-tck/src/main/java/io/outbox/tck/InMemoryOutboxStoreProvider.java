package io.outbox.tck;

import com.google.auto.service.AutoService;
import io.outbox.spi.OutboxStore;
import io.outbox.spi.OutboxStoreConfig;
import io.outbox.spi.OutboxStoreProvider;
import java.time.Clock;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;

/**
 * Provider of {@link InMemoryOutboxStore} under the name {@value #NAME}. Every call to
 * {@link #create(Map)} returns a new, empty, independent store on the system UTC clock.
 */
@AutoService(OutboxStoreProvider.class)
public final class InMemoryOutboxStoreProvider implements OutboxStoreProvider {

    /** The provider name. */
    public static final String NAME = "memory";

    /** Setting: the largest payload accepted, in bytes. */
    public static final String MAX_PAYLOAD_BYTES = "max.payload.bytes";

    private static final ConfigDef CONFIG = new ConfigDef()
            .define(MAX_PAYLOAD_BYTES, ConfigDef.Type.LONG, InMemoryOutboxStore.DEFAULT_MAX_PAYLOAD_BYTES,
                    ConfigDef.Range.atLeast(0), ConfigDef.Importance.LOW,
                    "The largest payload (key + value + encoded headers) the store accepts, in bytes.");

    /** Creates the provider; called by {@link java.util.ServiceLoader}. */
    public InMemoryOutboxStoreProvider() {
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
    public OutboxStore create(Map<String, String> config) {
        OutboxStoreConfig parsed = OutboxStoreConfig.parse(NAME, CONFIG, config);
        return new InMemoryOutboxStore(Clock.systemUTC(), parsed.getLong(MAX_PAYLOAD_BYTES));
    }
}
