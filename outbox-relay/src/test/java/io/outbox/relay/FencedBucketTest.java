package io.outbox.relay;

import static io.outbox.relay.TestMessages.keyFor;
import static io.outbox.relay.TestMessages.messages;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.OutboxMessage;
import io.outbox.tck.InMemoryOutboxStore;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The relay's side of K5 and K6 with a scripted publisher: it reports the buckets it acquires and
 * releases, and a fenced publish is a lost lease (nothing deleted, the bucket dropped and
 * re-acquired at the next regular rebalance, no error backoff).
 */
class FencedBucketTest {

    private static final int BUCKETS = 2;

    /** Acknowledges every batch except the first of bucket 0, which it answers as fenced. */
    static final class FencingOncePublisher implements OutboxPublisher {
        final List<String> hooks = new CopyOnWriteArrayList<>();
        final List<List<UUID>> published = new CopyOnWriteArrayList<>();
        final AtomicInteger bucketZeroCalls = new AtomicInteger();

        @Override
        public CompletableFuture<PublishResult> publish(List<OutboxMessage> batch) {
            if (batch.get(0).bucket() == 0 && bucketZeroCalls.getAndIncrement() == 0) {
                return CompletableFuture.completedFuture(PublishResult.failure(0,
                        new BucketFencedException(0, "bucket 0 fenced by a newer producer", null)));
            }
            published.add(batch.stream().map(OutboxMessage::messageId).toList());
            return CompletableFuture.completedFuture(PublishResult.success(batch.size()));
        }

        @Override
        public void bucketsAcquired(Set<Integer> buckets) {
            hooks.add("acquired " + new java.util.TreeSet<>(buckets));
        }

        @Override
        public void bucketsReleased(Set<Integer> buckets) {
            hooks.add("released " + new java.util.TreeSet<>(buckets));
        }
    }

    @Test
    void k5_k6_r1_aFencedPublishDeletesNothingDropsTheBucketAndItIsReacquiredWithoutBackoff() {
        TestStore.Renewing store = new TestStore.Renewing(InMemoryOutboxStore.builder().build());
        List<OutboxMessage> batch = messages("orders", keyFor(0, BUCKETS), 5, BUCKETS, Clock.systemUTC());
        store.delegate.enqueue(batch);
        FencingOncePublisher publisher = new FencingOncePublisher();
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        RelayListener listener = new RelayListener() {
            @Override
            public void onPublishFailed(int bucket, int acknowledged, Throwable error) {
                failures.add(error);
            }
        };
        // An error backoff of a minute: a fenced bucket that backed off would not be published in this test.
        RelayOptions options = RelayOptions.builder().relayId("r").bucketCount(BUCKETS).batchSize(10)
                .pollInterval(Duration.ofMillis(50)).leaseDuration(Duration.ofSeconds(3))
                .leaseRenewInterval(Duration.ofMillis(300)).errorBackoff(Duration.ofSeconds(60))
                .maxErrorBackoff(Duration.ofSeconds(60)).build();
        try (OutboxRelay relay = OutboxRelay.builder(store, publisher).options(options).listener(listener).build()) {
            relay.start();
            await().atMost(Duration.ofSeconds(20)).until(() -> store.pending() == 0);
        }
        List<UUID> ids = batch.stream().map(OutboxMessage::messageId).toList();
        assertThat(failures).singleElement().isInstanceOf(BucketFencedException.class);
        assertThat(store.deleted).as("the fenced attempt deleted nothing; the next one deleted the batch")
                .containsExactly(ids);
        assertThat(publisher.published).containsExactly(ids);
        assertThat(publisher.hooks).as("bucket 0 released when fenced, acquired again at the next rebalance")
                .startsWith("acquired [0, 1]", "released [0]", "acquired [0]");
        assertThat(publisher.hooks.get(publisher.hooks.size() - 1)).isEqualTo("released [0, 1]");
    }
}
