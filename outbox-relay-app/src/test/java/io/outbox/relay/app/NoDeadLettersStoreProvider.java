package io.outbox.relay.app;

import com.google.auto.service.AutoService;
import io.outbox.spi.CloseableOutboxStore;
import io.outbox.spi.LeaseRequest;
import io.outbox.spi.OutboxStoreProvider;
import io.outbox.spi.Pending;
import io.outbox.tck.InMemoryOutboxStore;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;

/**
 * A store provider for the operator commands' tests, named {@value #NAME}: a store with the four
 * SPI methods only, no capability (no dead letters, C4).
 */
@AutoService(OutboxStoreProvider.class)
public final class NoDeadLettersStoreProvider implements OutboxStoreProvider {

    /** The provider name. */
    static final String NAME = "no-dead-letters";

    /** Called by ServiceLoader. */
    public NoDeadLettersStoreProvider() {
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public ConfigDef configDef() {
        return new ConfigDef();
    }

    @Override
    public CloseableOutboxStore create(Map<String, String> config) {
        InMemoryOutboxStore inner = InMemoryOutboxStore.builder().build();
        return new CloseableOutboxStore() {
            @Override
            public void close() {
            }

            @Override
            public List<Integer> acquireBucketLeases(LeaseRequest request) {
                return inner.acquireBucketLeases(request);
            }

            @Override
            public List<Integer> bucketsWithPending(List<Integer> buckets) {
                return inner.bucketsWithPending(buckets);
            }

            @Override
            public List<Pending> nextBatch(int bucket, int maxCount, long maxBytes) {
                return inner.nextBatch(bucket, maxCount, maxBytes);
            }

            @Override
            public void markPublished(int bucket, List<Pending> published) {
                inner.markPublished(bucket, published);
            }
        };
    }
}
