package io.outbox.spi;

import com.google.auto.service.AutoService;
import io.outbox.spi.support.OutboxStoreConfig;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;

/** A provider registered through auto-service, for the discovery test. */
@AutoService(OutboxStoreProvider.class)
public final class TestStoreProvider implements OutboxStoreProvider {

    private static final ConfigDef CONFIG = new ConfigDef()
            .define("greeting", ConfigDef.Type.STRING, "hello", ConfigDef.Importance.LOW, "A greeting.")
            .define("size", ConfigDef.Type.INT, 1, ConfigDef.Range.atLeast(1), ConfigDef.Importance.LOW, "A size.")
            .define("password", ConfigDef.Type.PASSWORD, null, ConfigDef.Importance.LOW, "A secret.");

    @Override
    public String name() {
        return "test-memory";
    }

    @Override
    public ConfigDef configDef() {
        return CONFIG;
    }

    @Override
    public CloseableOutboxStore create(Map<String, String> config) {
        return new TestStore(OutboxStoreConfig.parse(name(), CONFIG, config));
    }

    /** Holds its configuration; the store methods are not exercised here. */
    static final class TestStore implements CloseableOutboxStore {
        final OutboxStoreConfig config;
        final java.util.concurrent.atomic.AtomicInteger closes = new java.util.concurrent.atomic.AtomicInteger();

        TestStore(OutboxStoreConfig config) {
            this.config = config;
        }

        @Override
        public List<Integer> acquireBucketLeases(LeaseRequest request) {
            throw new UnsupportedOperationException("discovery test only");
        }

        @Override
        public List<Integer> bucketsWithPending(List<Integer> buckets) {
            throw new UnsupportedOperationException("discovery test only");
        }

        @Override
        public List<Pending> nextBatch(int bucket, int maxCount, long maxBytes) {
            throw new UnsupportedOperationException("discovery test only");
        }

        @Override
        public void markPublished(int bucket, List<Pending> published) {
            throw new UnsupportedOperationException("discovery test only");
        }

        @Override
        public void close() {
            closes.incrementAndGet();
        }
    }
}
