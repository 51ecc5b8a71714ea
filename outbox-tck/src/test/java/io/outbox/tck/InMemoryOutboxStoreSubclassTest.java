package io.outbox.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.spi.Pending;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;

/**
 * The reference store is usable as a base: a subclass that wraps its SPI methods (here it counts
 * them) inherits the behaviour the kit pins, and passes the whole kit.
 */
class InMemoryOutboxStoreSubclassTest extends InMemoryOutboxStoreTck {

    private static final AtomicInteger CALLS = new AtomicInteger();

    @Override
    protected InMemoryOutboxStore newInMemoryStore(Clock clock) {
        return new InMemoryOutboxStore(InMemoryOutboxStore.builder().clock(clock)) {
            @Override
            public List<Pending> nextBatch(int bucket, int maxCount, long maxBytes) {
                CALLS.incrementAndGet();
                return super.nextBatch(bucket, maxCount, maxBytes);
            }

            @Override
            public List<Integer> acquireBucketLeases(io.outbox.spi.LeaseRequest request) {
                CALLS.incrementAndGet();
                return super.acquireBucketLeases(request);
            }
        };
    }

    @AfterAll
    static void theSubclassWasTheStoreUnderTest() {
        assertThat(CALLS.get()).as("SPI calls through the subclass during the kit").isGreaterThan(1_000);
    }
}
