package io.outbox.relay;

import static io.outbox.relay.TestMessages.keyFor;
import static io.outbox.relay.TestMessages.message;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.tck.InMemoryOutboxStore;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Rule R11: rebalancing and new batches never wait for a publish in flight. A bucket whose publish
 * hangs keeps its lease (it is never given away mid-publish) but stalls only itself: the other
 * buckets drain at full rate and a joining relay gets its share within two renew intervals. A busy
 * bucket kept above the share is released once its task ends. In-memory store shared by the relays,
 * the system clock.
 */
class SlowPublishRebalanceTest {

    private static final String TOPIC = "orders";
    private static final Duration RENEW = Duration.ofSeconds(1);

    private final InMemoryOutboxStore store = InMemoryOutboxStore.builder().clock(Clock.systemUTC()).build();
    private final HeldPublisher publisher = new HeldPublisher();
    private final List<OutboxRelay> relays = new ArrayList<>();

    @AfterEach
    void close() {
        for (int bucket = 0; bucket < 8; bucket++) {
            publisher.release(bucket);
        }
        relays.forEach(OutboxRelay::close);
    }

    private OutboxRelay start(String id, int buckets) {
        RelayOptions options = RelayOptions.builder().relayId(id).bucketCount(buckets).batchSize(50)
                .pollInterval(Duration.ofMillis(100)).leaseRenewInterval(RENEW).leaseDuration(Duration.ofSeconds(10))
                .closeTimeout(Duration.ofSeconds(5)).build();
        OutboxRelay relay = OutboxRelay.builder(store, publisher.forRelay(id)).options(options).build();
        relays.add(relay);
        relay.start();
        return relay;
    }

    private void enqueue(int bucket, int buckets) {
        store.enqueue(message(TOPIC, keyFor(bucket, buckets), "v", buckets, Clock.systemUTC()));
    }

    @Test
    void r11_aPublishBlockedFor30sStallsOnlyItsBucketAndAJoiningRelayStillGetsItsShare() throws Exception {
        int buckets = 4;
        publisher.hold(3); // bucket 3's first publish would take 30 s; the test releases it when done
        OutboxRelay a = start("relay-a", buckets);
        enqueue(3, buckets);
        await().atMost(Duration.ofSeconds(10)).until(() -> publisher.isHeld(3));

        AtomicBoolean writing = new AtomicBoolean(true);
        Thread writer = new Thread(() -> {
            while (writing.get()) {
                for (int bucket = 0; bucket < 3; bucket++) {
                    enqueue(bucket, buckets);
                }
                try {
                    Thread.sleep(25);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        writer.start();
        Thread.sleep(2_000);
        long joinedAt = System.nanoTime();
        OutboxRelay b = start("relay-b", buckets);
        await().atMost(RENEW.multipliedBy(2)).pollInterval(Duration.ofMillis(20))
                .until(() -> b.ownedBuckets().size() == 2);
        long shareAfterMs = (System.nanoTime() - joinedAt) / 1_000_000;
        Thread.sleep(3_000);
        writing.set(false);
        writer.join();
        await().atMost(Duration.ofSeconds(10)).until(() -> drainedExcept(3));

        long maxWait = publisher.acked().stream().filter(m -> m.bucket() != 3)
                .mapToLong(HeldPublisher.Acked::waitMillis).max().orElseThrow();
        long overOneSecond = publisher.acked().stream().filter(m -> m.bucket() != 3 && m.waitMillis() > 1_000).count();
        long others = publisher.acked().stream().filter(m -> m.bucket() != 3).count();
        System.out.printf("R11 blocked bucket 3: other buckets' max wait %d ms (%d of %d messages over 1 s); "
                + "the joining relay owned its share of 2 after %d ms%n", maxWait, overOneSecond, others, shareAfterMs);

        assertThat(a.ownedBuckets()).as("the bucket with a publish in flight stays with its relay").contains(3);
        assertThat(b.ownedBuckets()).doesNotContain(3);
        assertThat(publisher.acked()).filteredOn(m -> m.bucket() == 3).isEmpty();
        assertThat(maxWait).as("the other buckets never wait for the blocked publish (30 s)").isLessThan(5_000);
        assertThat(publisher.acked()).filteredOn(m -> m.relay().equals("relay-b")).isNotEmpty();

        publisher.release(3);
        await().atMost(Duration.ofSeconds(10)).until(() -> pending() == 0);
        assertThat(publisher.acked()).filteredOn(m -> m.bucket() == 3).singleElement()
                .extracting(HeldPublisher.Acked::relay).isEqualTo("relay-a");
    }

    @Test
    void r11_busyBucketsAboveTheShareAreKeptUntilTheirTaskEndsThenReleased() throws Exception {
        int buckets = 2;
        publisher.hold(0);
        publisher.hold(1);
        OutboxRelay a = start("relay-a", buckets);
        enqueue(0, buckets);
        enqueue(1, buckets);
        await().atMost(Duration.ofSeconds(10)).until(() -> publisher.isHeld(0) && publisher.isHeld(1));

        OutboxRelay b = start("relay-b", buckets);
        Thread.sleep(RENEW.multipliedBy(3).toMillis()); // several rebalances while both publishes are in flight
        assertThat(a.ownedBuckets()).as("no bucket is given away while its publish is in flight").containsExactly(0, 1);
        assertThat(b.ownedBuckets()).isEmpty();

        long releasedAt = System.nanoTime();
        publisher.release(0);
        await().atMost(RENEW.multipliedBy(2)).pollInterval(Duration.ofMillis(20))
                .until(() -> b.ownedBuckets().equals(List.of(0)));
        System.out.printf("R11 a busy bucket above the share moved to the joining relay %d ms after its publish "
                + "ended%n", (System.nanoTime() - releasedAt) / 1_000_000);
        assertThat(a.ownedBuckets()).containsExactly(1);
        publisher.release(1);
        await().atMost(Duration.ofSeconds(10)).until(() -> pending() == 0);
    }

    private long pending() {
        return store.pendingMetrics(Duration.ofSeconds(1)).pendingCount();
    }

    private boolean drainedExcept(int bucket) {
        return pending() == 1 && store.bucketsWithPending(List.of(0, 1, 2, 3)).equals(List.of(bucket));
    }
}
