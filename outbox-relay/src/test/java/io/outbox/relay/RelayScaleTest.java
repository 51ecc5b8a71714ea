package io.outbox.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.OutboxHeader;
import io.outbox.OutboxMessage;
import io.outbox.tck.InMemoryOutboxStore;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * The relay at the largest bucket count, 65,536 (R10's upper bound): it owns every bucket and
 * publishes one message from each. Speed is the benchmark's job ({@link RelayCycleBenchmark});
 * here only the generous bound of the await stands between a quadratic cycle and a pass.
 */
class RelayScaleTest {

    private static final int BUCKETS = RelayOptions.MAX_BUCKET_COUNT;

    @Test
    void r4_aRelayWith65536BucketsOwnsThemAllAndPublishesEveryBucket() {
        InMemoryOutboxStore store = InMemoryOutboxStore.builder().clock(Clock.systemUTC()).build();
        StringSerializer string = new StringSerializer();
        List<OutboxMessage> messages = new ArrayList<>(BUCKETS);
        for (int b = 0; b < BUCKETS; b++) { // an explicit partition p lands in bucket p % bucketCount (E2)
            messages.add(OutboxMessage.create("scale", "k", "v", string, string, List.<OutboxHeader>of(), BUCKETS, b));
        }
        store.enqueue(messages);
        Set<Integer> published = ConcurrentHashMap.newKeySet();
        AtomicInteger calls = new AtomicInteger();
        OutboxPublisher publisher = batch -> {
            calls.incrementAndGet();
            batch.forEach(m -> published.add(m.bucket()));
            return CompletableFuture.completedFuture(PublishResult.success(batch.size()));
        };
        RelayOptions options = RelayOptions.builder().relayId("scale").bucketCount(BUCKETS)
                .pollInterval(Duration.ofMillis(100)).leaseRenewInterval(Duration.ofSeconds(1)).build();

        try (OutboxRelay relay = OutboxRelay.builder(store, publisher).options(options).build()) {
            relay.start();
            await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(100))
                    .until(() -> store.pendingMetrics(Duration.ofSeconds(1)).pendingCount() == 0);

            assertThat(published).hasSize(BUCKETS);
            assertThat(relay.ownedBuckets()).hasSize(BUCKETS).startsWith(0).endsWith(BUCKETS - 1);
            assertThat(calls).as("one publish per bucket").hasValue(BUCKETS);
        }
    }
}
