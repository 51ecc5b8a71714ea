package io.outbox.relay;

import static io.outbox.relay.TestMessages.keyFor;
import static io.outbox.relay.TestMessages.messages;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.outbox.OutboxMessage;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.Pending;
import io.outbox.tck.InMemoryOutboxStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The relay's store work on {@link RelayOptions#storeConcurrency()} threads: store calls of
 * different buckets overlap, one bucket never has two batches in flight (R2), and a failure in one
 * bucket's task still lets the others delete their acknowledged prefixes (R3) or stops the relay
 * when it is a misconfiguration (R6).
 */
class RelayStoreConcurrencyTest {

    private static final String TOPIC = "orders";
    private static final int BUCKETS = 4;
    private static final Duration WAIT = Duration.ofSeconds(30);

    private final MutableClock clock = new MutableClock();
    private final InMemoryOutboxStore memory = InMemoryOutboxStore.builder().clock(clock).build();
    private final ScriptedPublisher publisher = new ScriptedPublisher();
    private final OutboxRelayTest.RecordingListener events = new OutboxRelayTest.RecordingListener();
    private final List<OutboxRelay> relays = new ArrayList<>();
    /** Deletes and store errors, in the order they happened. */
    private final List<String> history = new CopyOnWriteArrayList<>();

    @AfterEach
    void closeRelays() {
        relays.forEach(OutboxRelay::close);
    }

    private static RelayOptions.Builder options(int storeConcurrency) {
        return RelayOptions.builder().relayId("relay-a").bucketCount(BUCKETS).batchSize(10)
                .pollInterval(Duration.ofMillis(50)).errorBackoff(Duration.ofMillis(20))
                .maxErrorBackoff(Duration.ofMillis(100)).closeTimeout(Duration.ofSeconds(10))
                .storeConcurrency(storeConcurrency);
    }

    private OutboxRelay start(TestStore store, OutboxPublisher with, RelayOptions options) {
        OutboxRelay relay = OutboxRelay.builder(store, with).options(options).clock(clock).listener(events)
                .listener(new RelayListener() {
                    @Override
                    public void onStoreError(Throwable error) {
                        history.add("store error");
                    }
                }).build();
        relays.add(relay);
        relay.start();
        return relay;
    }

    private List<UUID> enqueue(int bucket, int count) {
        List<OutboxMessage> batch = messages(TOPIC, keyFor(bucket, BUCKETS), count, BUCKETS, clock);
        memory.enqueue(batch);
        return batch.stream().map(OutboxMessage::messageId).toList();
    }

    /** A store whose first {@code parties} nextBatch calls each wait until all of them are inside at once. */
    private static final class BarrierStore extends TestStore.Renewing {
        final CyclicBarrier barrier;
        final AtomicInteger arrivals = new AtomicInteger();
        final AtomicBoolean tripped = new AtomicBoolean();

        BarrierStore(InMemoryOutboxStore delegate, int parties) {
            super(delegate);
            this.barrier = new CyclicBarrier(parties, () -> tripped.set(true));
        }

        @Override
        public List<Pending> nextBatch(int bucket, int maxCount, long maxBytes) {
            if (arrivals.incrementAndGet() <= barrier.getParties()) {
                try {
                    barrier.await(2, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                } catch (BrokenBarrierException | TimeoutException e) {
                    throw new IllegalStateException("store calls of different buckets did not overlap", e);
                }
            }
            return super.nextBatch(bucket, maxCount, maxBytes);
        }
    }

    @Test
    void storeCallsOfDifferentBucketsOverlap() {
        for (int bucket = 0; bucket < BUCKETS; bucket++) {
            enqueue(bucket, 3);
        }
        BarrierStore store = new BarrierStore(memory, BUCKETS);

        start(store, publisher, options(BUCKETS).build());

        await().atMost(WAIT).until(() -> store.pending() == 0);
        assertThat(store.tripped).as("all buckets' reads were inside the store at once").isTrue();
        assertThat(events.storeErrors).hasValue(0);
    }

    @Test
    void withOneStoreThreadStoreCallsNeverOverlap() {
        for (int bucket = 0; bucket < BUCKETS; bucket++) {
            enqueue(bucket, 25);
        }
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        TestStore.Renewing store = new TestStore.Renewing(memory) {
            @Override
            public List<Pending> nextBatch(int bucket, int maxCount, long maxBytes) {
                most.accumulateAndGet(inside.incrementAndGet(), Math::max);
                try {
                    return super.nextBatch(bucket, maxCount, maxBytes);
                } finally {
                    inside.decrementAndGet();
                }
            }

            @Override
            public void markPublished(int bucket, List<Pending> published) {
                most.accumulateAndGet(inside.incrementAndGet(), Math::max);
                try {
                    super.markPublished(bucket, published);
                } finally {
                    inside.decrementAndGet();
                }
            }
        };

        start(store, publisher, options(1).build());

        await().atMost(WAIT).until(() -> store.pending() == 0);
        assertThat(most).hasValue(1);
    }

    @Test
    void r2_aBucketNeverHasTwoBatchesInFlightAndKeepsItsOrder() {
        Map<Integer, List<UUID>> enqueued = new ConcurrentHashMap<>();
        for (int bucket = 0; bucket < BUCKETS; bucket++) {
            enqueued.put(bucket, enqueue(bucket, 95));
        }
        Map<Integer, AtomicInteger> inFlight = new ConcurrentHashMap<>();
        AtomicInteger overlaps = new AtomicInteger();
        Map<Integer, List<UUID>> deletedByBucket = new ConcurrentHashMap<>();
        TestStore.Renewing store = new TestStore.Renewing(memory) {
            @Override
            public List<Pending> nextBatch(int bucket, int maxCount, long maxBytes) {
                if (inFlight.computeIfAbsent(bucket, b -> new AtomicInteger()).incrementAndGet() > 1) {
                    overlaps.incrementAndGet();
                }
                List<Pending> batch = super.nextBatch(bucket, maxCount, maxBytes);
                if (batch.isEmpty()) {
                    inFlight.get(bucket).decrementAndGet();
                }
                return batch;
            }

            @Override
            public void markPublished(int bucket, List<Pending> published) {
                super.markPublished(bucket, published);
                deletedByBucket.computeIfAbsent(bucket, b -> new CopyOnWriteArrayList<>())
                        .addAll(published.stream().map(p -> p.message().messageId()).toList());
                inFlight.get(bucket).decrementAndGet();
            }
        };
        // Acknowledges each batch after a random delay, so the buckets' batches interleave.
        OutboxPublisher slow = batch -> CompletableFuture.supplyAsync(() -> PublishResult.success(batch.size()),
                CompletableFuture.delayedExecutor(ThreadLocalRandom.current().nextInt(5), TimeUnit.MILLISECONDS));

        start(store, slow, options(3).build());

        await().atMost(WAIT).until(() -> store.pending() == 0);
        assertThat(overlaps).as("a bucket's next batch read while its last one was in flight").hasValue(0);
        assertThat(deletedByBucket).isEqualTo(enqueued);
    }

    @Test
    void r3_aStoreErrorInOneBucketStillDeletesTheOtherBucketsAcknowledgedPrefixesThenBacksOff() {
        Map<Integer, List<UUID>> enqueued = new ConcurrentHashMap<>();
        for (int bucket = 0; bucket < BUCKETS; bucket++) {
            enqueued.put(bucket, enqueue(bucket, 2));
        }
        AtomicBoolean failed = new AtomicBoolean();
        TestStore.Renewing store = new TestStore.Renewing(memory) {
            @Override
            public List<Pending> nextBatch(int bucket, int maxCount, long maxBytes) {
                if (bucket == 2 && failed.compareAndSet(false, true)) {
                    // Fail only once the other three buckets' publishes are in flight.
                    await().atMost(WAIT).until(() -> publisher.calls().size() == BUCKETS - 1);
                    throw new IllegalStateException("injected store failure");
                }
                return super.nextBatch(bucket, maxCount, maxBytes);
            }

            @Override
            public void markPublished(int bucket, List<Pending> published) {
                super.markPublished(bucket, published);
                history.add("deleted bucket " + bucket);
            }
        };
        publisher.hold();

        start(store, publisher, options(BUCKETS).build());
        await().atMost(WAIT).until(failed::get);
        await().during(Duration.ofMillis(200)).atMost(WAIT).until(() -> history.isEmpty());
        publisher.calls().forEach(ScriptedPublisher.Call::succeed);
        publisher.answer(batch -> PublishResult.success(batch.size()));

        await().atMost(WAIT).until(() -> store.pending() == 0);
        assertThat(history.subList(0, 4)).containsExactlyInAnyOrder("deleted bucket 0", "deleted bucket 1",
                "deleted bucket 3", "store error").endsWith("store error");
        assertThat(history).endsWith("deleted bucket 2");
        assertThat(events.storeErrors).hasValue(1);
        assertThat(store.deletedIds()).containsExactlyInAnyOrderElementsOf(
                enqueued.values().stream().flatMap(List::stream).toList());
    }

    @Test
    void r6_aMisconfigurationInOneBucketsTaskStopsTheRelayAfterTheOthersDeletedTheirPrefixes() {
        for (int bucket = 0; bucket < BUCKETS; bucket++) {
            enqueue(bucket, 2);
        }
        TestStore.Renewing store = new TestStore.Renewing(memory) {
            @Override
            public List<Pending> nextBatch(int bucket, int maxCount, long maxBytes) {
                if (bucket == 1) {
                    await().atMost(WAIT).until(() -> publisher.calls().size() == BUCKETS - 1);
                    throw new OutboxMisconfigurationException("bucket 1 holds rows of another table");
                }
                return super.nextBatch(bucket, maxCount, maxBytes);
            }
        };
        publisher.hold();

        OutboxRelay relay = start(store, publisher, options(BUCKETS).build());
        await().atMost(WAIT).until(() -> publisher.calls().size() == BUCKETS - 1);
        await().during(Duration.ofMillis(200)).atMost(WAIT).until(() -> relay.isRunning());
        publisher.calls().forEach(ScriptedPublisher.Call::succeed);

        assertThatThrownBy(() -> relay.termination().get(WAIT.toSeconds(), TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).cause()
                .isInstanceOf(OutboxMisconfigurationException.class).hasMessage("bucket 1 holds rows of another table");
        assertThat(store.pending()).as("only bucket 1's messages are left").isEqualTo(2);
        assertThat(publisher.calls()).hasSize(BUCKETS - 1);
        assertThat(memory.leases().values()).allMatch(lease -> lease.owner() == null, "leases released");
    }

    @Test
    void r9_closeWaitsForEveryBucketsTaskAndDeletesTheirAcknowledgedPrefixes() throws Exception {
        for (int bucket = 0; bucket < BUCKETS; bucket++) {
            enqueue(bucket, 3);
        }
        TestStore.Renewing store = new TestStore.Renewing(memory);
        publisher.hold();
        OutboxRelay relay = start(store, publisher, options(BUCKETS).build());
        await().atMost(WAIT).until(() -> publisher.calls().size() == BUCKETS);

        CompletableFuture<Void> closing = CompletableFuture.runAsync(relay::close);
        await().during(Duration.ofMillis(300)).atMost(WAIT).until(() -> !closing.isDone());
        publisher.calls().forEach(ScriptedPublisher.Call::succeed);
        closing.get(WAIT.toSeconds(), TimeUnit.SECONDS);

        assertThat(store.pending()).isZero();
        assertThat(publisher.calls()).hasSize(BUCKETS);
        assertThat(memory.leases().values()).allMatch(lease -> lease.owner() == null, "leases released");
    }

    @Test
    void theStoreThreadsAreNamedDaemonsAndEndWithTheRelay() {
        enqueue(0, 1);
        TestStore.Renewing store = new TestStore.Renewing(memory);
        OutboxRelay relay = start(store, publisher, options(2).build());
        await().atMost(WAIT).until(() -> store.pending() == 0);

        assertThat(storeThreads()).isNotEmpty().allMatch(Thread::isDaemon);
        relay.close();
        await().atMost(WAIT).until(() -> storeThreads().isEmpty());
    }

    private static List<Thread> storeThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("outbox-relay-relay-a-store-") && t.isAlive()).toList();
    }
}
