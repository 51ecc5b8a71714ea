package io.outbox.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.OutboxMessage;
import io.outbox.tck.InMemoryOutboxStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Rule H3: a drained relay gives its buckets to a peer and takes none until resumed; nothing is
 * lost and no bucket has two owners meanwhile. Prints the time to hand over.
 */
class DrainTest {

    private static final int BUCKETS = 8;
    private static final Duration LEASE = Duration.ofSeconds(3);

    private final InMemoryOutboxStore memory = InMemoryOutboxStore.builder().build();
    private final List<OutboxRelay> relays = new ArrayList<>();

    @AfterEach
    void tearDown() {
        relays.forEach(OutboxRelay::close);
    }

    private OutboxRelay start(String id, ScriptedPublisher publisher) {
        OutboxRelay relay = OutboxRelay.builder(memory, publisher).options(RelayOptions.builder().relayId(id)
                .bucketCount(BUCKETS).batchSize(10).pollInterval(Duration.ofMillis(50)).leaseDuration(LEASE)
                .leaseRenewInterval(Duration.ofMillis(500)).errorBackoff(Duration.ofMillis(20))
                .maxErrorBackoff(Duration.ofMillis(100)).closeTimeout(Duration.ofSeconds(5)).build()).build();
        relays.add(relay);
        relay.start();
        return relay;
    }

    private static Set<UUID> published(ScriptedPublisher... publishers) {
        Set<UUID> ids = new HashSet<>();
        for (ScriptedPublisher p : publishers) {
            p.calls().forEach(call -> ids.addAll(call.ids()));
        }
        return ids;
    }

    @Test
    void h3_aDrainedRelayHandsItsBucketsToAPeerLosingNothingAndNeverSharingABucket() throws Exception {
        ScriptedPublisher pa = new ScriptedPublisher();
        ScriptedPublisher pb = new ScriptedPublisher();
        OutboxRelay a = start("relay-a", pa);
        OutboxRelay b = start("relay-b", pb);
        await().atMost(Duration.ofSeconds(20)).until(() -> a.ownedBuckets().size() + b.ownedBuckets().size() == BUCKETS
                && !a.ownedBuckets().isEmpty() && !b.ownedBuckets().isEmpty());

        Set<UUID> enqueued = new HashSet<>();
        AtomicBoolean writing = new AtomicBoolean(true);
        AtomicInteger overlaps = new AtomicInteger();
        Thread writer = new Thread(() -> {
            for (int i = 0; writing.get(); i++) {
                OutboxMessage m = TestMessages.message("orders", "k" + i, "v" + i, BUCKETS,
                        java.time.Clock.systemUTC());
                memory.enqueue(m);
                synchronized (enqueued) {
                    enqueued.add(m.messageId());
                }
                Set<Integer> owners = new HashSet<>(a.ownedBuckets());
                for (int bucket : b.ownedBuckets()) {
                    if (owners.contains(bucket)) {
                        overlaps.incrementAndGet();
                    }
                }
                java.util.concurrent.locks.LockSupport.parkNanos(1_000_000); // about 1,000 messages a second
            }
        });
        writer.start();
        try {
            long start = System.nanoTime();
            a.drain();
            assertThat(a.isDraining()).isTrue();
            await().atMost(LEASE.multipliedBy(3)).until(() -> b.ownedBuckets().size() == BUCKETS
                    && a.ownedBuckets().isEmpty());
            long handOverMillis = (System.nanoTime() - start) / 1_000_000;
            System.out.printf("H3 hand-over: %d ms for %d buckets (lease %d ms, renew 500 ms)%n", handOverMillis,
                    BUCKETS, LEASE.toMillis());
            assertThat(handOverMillis).as("released (C3), not left to expire").isLessThan(LEASE.toMillis());

            await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(12))
                    .until(() -> a.ownedBuckets().isEmpty() && a.isDraining());
            a.resume();
            await().atMost(Duration.ofSeconds(20)).until(() -> !a.ownedBuckets().isEmpty()
                    && a.ownedBuckets().size() + b.ownedBuckets().size() == BUCKETS);
        } finally {
            writing.set(false);
            writer.join();
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> memory.pendingBuckets().isEmpty());
        assertThat(published(pa, pb)).as("0 lost").containsAll(enqueued);
        assertThat(overlaps.get()).as("no bucket owned by both relays at once").isZero();
    }
}
