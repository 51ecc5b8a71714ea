package io.outbox.relay;

import static io.outbox.relay.TestMessages.keyFor;
import static io.outbox.relay.TestMessages.messages;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.OutboxMessage;
import io.outbox.spi.LeaseRequest;
import io.outbox.spi.Pending;
import io.outbox.spi.ReadAhead;
import io.outbox.spi.support.BatchBytes;
import io.outbox.tck.InMemoryOutboxStore;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * The pipelined drain (option {@code prefetch}, capability C5): a bucket's next batch is read
 * while its batch in flight is published; a failed publish, a lost lease or a counted failure
 * discards the batch read ahead, and the bucket reads from its head again (R1, R2, R3, R9, R12).
 */
class PipelinedDrainTest {

    private static final String TOPIC = "orders";

    /** The test store with read ahead (C5), read latency and a log of its reads. */
    static final class ReadingAheadStore extends TestStore.Renewing implements ReadAhead.Self {
        final List<String> events;
        final AtomicInteger readAheadCalls = new AtomicInteger();
        volatile long readLatencyMillis;
        /** Runs after each markPublished. */
        volatile Runnable afterDelete = () -> { };
        /** The byte budget of the latest read ahead. */
        volatile long readAheadMaxBytes;
        /** Runs instead of the plain read ahead: gets the batch in flight and the count, returns the batch. */
        volatile BiFunction<List<Pending>, Integer, List<Pending>> readAheadAnswer;

        ReadingAheadStore(InMemoryOutboxStore delegate, List<String> events) {
            super(delegate);
            this.events = events;
            this.readAheadAnswer = (inFlight, max) -> delegate.nextBatchExcluding(0, inFlight, max, readAheadMaxBytes);
        }

        @Override
        public List<Pending> nextBatch(int bucket, int maxCount, long maxBytes) {
            events.add("read start");
            sleep(readLatencyMillis);
            List<Pending> batch = super.nextBatch(bucket, maxCount, maxBytes);
            events.add("read end");
            return batch;
        }

        @Override
        public void markPublished(int bucket, List<Pending> published) {
            super.markPublished(bucket, published);
            afterDelete.run();
        }

        @Override
        public List<Pending> nextBatchExcluding(int bucket, List<Pending> inFlight, int maxCount, long maxBytes) {
            readAheadCalls.incrementAndGet();
            readAheadMaxBytes = maxBytes;
            events.add("read-ahead start");
            sleep(readLatencyMillis);
            List<Pending> batch = readAheadAnswer.apply(inFlight, maxCount);
            events.add("read-ahead end");
            return batch;
        }
    }

    /** Acknowledges every batch whole after a delay, logging when each publish starts and ends. */
    static final class SlowPublisher implements OutboxPublisher {
        final List<String> events;
        final List<List<UUID>> published = new CopyOnWriteArrayList<>();
        final long ackLatencyMillis;
        final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();

        SlowPublisher(List<String> events, long ackLatencyMillis) {
            this.events = events;
            this.ackLatencyMillis = ackLatencyMillis;
        }

        @Override
        public CompletableFuture<PublishResult> publish(List<OutboxMessage> batch) {
            int n = published.size();
            published.add(ids(batch));
            events.add("publish start " + n);
            CompletableFuture<PublishResult> future = new CompletableFuture<>();
            timer.schedule(() -> {
                events.add("publish end " + n);
                future.complete(PublishResult.success(batch.size()));
            }, ackLatencyMillis, TimeUnit.MILLISECONDS);
            return future;
        }
    }

    private static RelayOptions.Builder options() {
        return RelayOptions.builder().relayId("r").bucketCount(1).batchSize(10).pollInterval(Duration.ofMillis(50))
                .leaseDuration(Duration.ofSeconds(30)).leaseRenewInterval(Duration.ofSeconds(10))
                .errorBackoff(Duration.ofMillis(20)).maxErrorBackoff(Duration.ofMillis(40));
    }

    /**
     * R2 with prefetch: each batch's successor is read while the batch is published (the next read
     * starts before the publish ends), so the store's and the publisher's latencies overlap; the
     * successors are published without another read from the head. With prefetch off, on the same
     * store, no read overlaps a publish.
     */
    @Test
    void r2_prefetchReadsTheNextBatchWhileTheBatchBeforeItIsPublished() {
        List<String> events = drain(true);
        List<Integer> starts = indexes(events, "publish start");
        assertThat(starts).hasSize(3);
        for (int i = 0; i < 2; i++) {
            int start = events.indexOf("publish start " + i);
            int end = events.indexOf("publish end " + i);
            assertThat(events.subList(start, end)).as("events during publish %d: %s", i, events)
                    .contains("read-ahead start", "read-ahead end");
            assertThat(events.subList(end, events.indexOf("publish start " + (i + 1))))
                    .as("between publish %d and the next: published from the batch read ahead, no read", i)
                    .doesNotContain("read start");
        }
        assertThat(events.subList(0, starts.get(0))).as("the first batch is read from the head")
                .containsExactly("read start", "read end");

        List<String> sequential = drain(false);
        for (int i = 0; i < 3; i++) {
            int start = sequential.indexOf("publish start " + i);
            int end = sequential.indexOf("publish end " + i);
            assertThat(sequential.subList(start, end)).as("prefetch off: nothing read during publish %d", i)
                    .doesNotContain("read start", "read-ahead start");
        }
        assertThat(sequential).as("prefetch off: the store's read ahead is never called")
                .doesNotContain("read-ahead start");
        assertThat(indexes(sequential, "read start")).as("prefetch off: one head read per batch, and a last one")
                .hasSizeGreaterThanOrEqualTo(3);
    }

    /**
     * S1 with prefetch: a batch cut by the byte budget, not by the count, is full too, so the next
     * batch is read ahead during its publish, with the same budget.
     */
    @Test
    void s1_batchesCutByTheByteBudgetAreReadAheadWithTheSameBudget() {
        List<String> events = new CopyOnWriteArrayList<>();
        ReadingAheadStore store = new ReadingAheadStore(InMemoryOutboxStore.builder().build(), events);
        List<OutboxMessage> all = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            all.add(TestMessages.message(TOPIC, keyFor(0, 1), "x".repeat(200), 1, Clock.systemUTC()));
        }
        store.delegate.enqueue(all);
        long four = 4 * BatchBytes.of(all.get(0));
        SlowPublisher publisher = new SlowPublisher(events, 100);
        try (OutboxRelay relay = OutboxRelay.builder(store, publisher)
                .options(options().batchMaxBytes(four).pollInterval(Duration.ofHours(1)).build()).build()) {
            relay.start();
            await().atMost(Duration.ofSeconds(20)).until(() -> store.pending() == 0);
        } finally {
            publisher.timer.shutdownNow();
        }
        assertThat(publisher.published).containsExactly(ids(all.subList(0, 4)), ids(all.subList(4, 8)),
                ids(all.subList(8, 12)));
        assertThat(store.readAheadCalls).as("the batches after the first were read ahead")
                .hasValueGreaterThanOrEqualTo(2);
        assertThat(store.readAheadMaxBytes).isEqualTo(four);
        assertThat(store.budgets).containsOnly(four);
    }

    /** Drains 25 messages in batches of 10, 10, 5 with 50 ms reads and 150 ms acknowledgements. */
    private static List<String> drain(boolean prefetch) {
        List<String> events = new CopyOnWriteArrayList<>();
        ReadingAheadStore store = new ReadingAheadStore(InMemoryOutboxStore.builder().build(), events);
        store.readLatencyMillis = 50;
        List<OutboxMessage> all = messages(TOPIC, keyFor(0, 1), 25, 1, Clock.systemUTC());
        store.delegate.enqueue(all);
        SlowPublisher publisher = new SlowPublisher(events, 150);
        try (OutboxRelay relay = OutboxRelay.builder(store, publisher).options(options().prefetch(prefetch).build())
                .build()) {
            relay.start();
            await().atMost(Duration.ofSeconds(20)).until(() -> store.pending() == 0);
        } finally {
            publisher.timer.shutdownNow();
        }
        assertThat(publisher.published).as("prefetch=%s: batches in enqueue order, each once", prefetch)
                .containsExactly(ids(all.subList(0, 10)), ids(all.subList(10, 20)), ids(all.subList(20, 25)));
        assertThat(store.deleted).as("prefetch=%s: each acknowledged batch deleted, in order", prefetch)
                .containsExactly(ids(all.subList(0, 10)), ids(all.subList(10, 20)), ids(all.subList(20, 25)));
        return List.copyOf(events);
    }

    /**
     * R8 with prefetch: a commit hinted while its bucket's batch (not full) is published is read
     * ahead during that publish, leaving the batch in flight out, and the bucket's next publish
     * sends it as soon as the first is acknowledged, without a read from the head. When the
     * publish fails instead, the batch read ahead is never sent: the bucket reads from its head.
     */
    @Test
    void r8_aCommitHintedDuringAPublishIsReadAheadAndSentWithoutAnotherRead() {
        for (boolean fail : new boolean[] {false, true}) {
            List<String> events = new CopyOnWriteArrayList<>();
            ReadingAheadStore store = new ReadingAheadStore(InMemoryOutboxStore.builder().build(), events);
            List<OutboxMessage> all = messages(TOPIC, keyFor(0, 1), 5, 1, Clock.systemUTC());
            store.delegate.enqueue(all.subList(0, 3));
            ScriptedPublisher publisher = new ScriptedPublisher().hold();
            try (OutboxRelay relay = OutboxRelay.builder(store, publisher).options(options().build()).build()) {
                relay.start();
                await().atMost(Duration.ofSeconds(10)).until(() -> publisher.calls().size() == 1);
                assertThat(store.readAheadCalls.get()).as("a batch that is not full has no read ahead by itself")
                        .isZero();
                store.delegate.enqueue(all.subList(3, 5));
                relay.wakeUp(List.of(0));
                await().atMost(Duration.ofSeconds(10)).until(() -> events.contains("read-ahead end"));
                int headReads = store.nextBatchCalls.get();
                if (fail) {
                    publisher.calls().get(0).future().complete(PublishResult.failure(0, new TimeoutException("x")));
                } else {
                    publisher.calls().get(0).succeed();
                }
                await().atMost(Duration.ofSeconds(10)).until(() -> publisher.calls().size() >= 2);
                if (fail) {
                    assertThat(publisher.calls().get(1).ids()).as("after the failure: from the head")
                            .isEqualTo(ids(all));
                    assertThat(store.nextBatchCalls.get()).isGreaterThan(headReads);
                } else {
                    assertThat(publisher.calls().get(1).ids()).as("the hinted commit, read ahead")
                            .isEqualTo(ids(all.subList(3, 5)));
                    assertThat(store.nextBatchCalls.get()).as("no read from the head before it").isEqualTo(headReads);
                }
                publisher.answer(batch -> PublishResult.success(batch.size()));
                publisher.calls().forEach(ScriptedPublisher.Call::succeed);
                await().atMost(Duration.ofSeconds(10)).until(() -> store.pending() == 0);
            }
            assertThat(firstDeliveries(publisher)).as("fail=%s: first deliveries in enqueue order, none lost", fail)
                    .containsExactlyElementsOf(ids(all));
            assertThat(store.deletedIds()).as("deleted once each, in order").containsExactlyElementsOf(ids(all));
        }
    }

    /**
     * R2, R3: a publish that fails after the next batch was read ahead: that batch is never sent;
     * the bucket reads from its head again, from the first unacknowledged message, and the
     * consumer sees no record out of order and none lost.
     */
    @Test
    void r3_aFailedPublishDiscardsTheBatchReadAheadAndTheBucketReadsFromItsHead() {
        FailedAtThree run = failAtThreeAfterReadAhead(new TimeoutException("injected"));
        List<UUID> all = run.all();
        assertThat(run.headReadsBeforeTheFailure()).as("the first batch read from the head").isEqualTo(1);
        assertThat(run.retry()).as("after the failure: a head read from message 3, not the batch read ahead "
                + "(messages 10-19)").isEqualTo(all.subList(3, 13));
        assertThat(run.headReadsAtTheRetry()).as("the bucket read from its head again").isEqualTo(2);
        assertThat(run.publishes()).as("no publish starts with the discarded batch read ahead")
                .noneMatch(ids -> ids.get(0).equals(all.get(10)));
    }

    /**
     * R12: a message-specific failure at position 3 after a batch was read ahead: the batch read
     * ahead is discarded and message 3 is sent alone, with no read ahead behind it.
     */
    @Test
    void r12_aMessageFailureAfterAReadAheadSendsThatMessageAlone() {
        FailedAtThree run = failAtThreeAfterReadAhead(new RecordTooLargeException("injected: message 3 too large"));
        assertThat(run.retry()).as("message 3 alone").containsExactly(run.all().get(3));
        assertThat(run.readAheadsAtTheRetry()).as("no read ahead behind a message sent alone").isEqualTo(1);
    }

    /** What {@link #failAtThreeAfterReadAhead} saw: message ids, and store calls counted at two moments. */
    private record FailedAtThree(List<UUID> all, List<List<UUID>> publishes, List<UUID> retry,
                                 int headReadsBeforeTheFailure, int headReadsAtTheRetry, int readAheadsAtTheRetry) {
    }

    /**
     * Drains 30 messages in batches of 10: the first publish fails at message 3 with {@code error}
     * once the next batch was read ahead; the publish after it, and all later ones, succeed. Checks
     * that the first deliveries are every message in enqueue order and that each was deleted
     * once, in order.
     */
    private static FailedAtThree failAtThreeAfterReadAhead(Throwable error) {
        List<String> events = new CopyOnWriteArrayList<>();
        ReadingAheadStore store = new ReadingAheadStore(InMemoryOutboxStore.builder().build(), events);
        List<OutboxMessage> all = messages(TOPIC, keyFor(0, 1), 30, 1, Clock.systemUTC());
        store.delegate.enqueue(all);
        ScriptedPublisher publisher = new ScriptedPublisher().hold();
        int headReadsBefore;
        int headReadsAtRetry;
        int readAheadsAtRetry;
        try (OutboxRelay relay = OutboxRelay.builder(store, publisher).options(options().build()).build()) {
            relay.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> events.contains("read-ahead end"));
            assertThat(publisher.calls()).hasSize(1);
            headReadsBefore = store.nextBatchCalls.get();
            publisher.calls().get(0).future().complete(PublishResult.failure(3, error));
            await().atMost(Duration.ofSeconds(10)).until(() -> publisher.calls().size() == 2);
            headReadsAtRetry = store.nextBatchCalls.get();
            sleep(300); // a read ahead behind the retry would start right after its publish did
            readAheadsAtRetry = store.readAheadCalls.get();
            publisher.answer(batch -> PublishResult.success(batch.size()));
            publisher.calls().get(1).succeed();
            await().atMost(Duration.ofSeconds(10)).until(() -> store.pending() == 0);
        }
        assertThat(firstDeliveries(publisher)).as("first deliveries: in enqueue order, none lost")
                .containsExactlyElementsOf(ids(all));
        assertThat(store.deletedIds()).as("deleted once each, in order").containsExactlyElementsOf(ids(all));
        return new FailedAtThree(ids(all), publisher.calls().stream().map(ScriptedPublisher.Call::ids).toList(),
                publisher.calls().get(1).ids(), headReadsBefore, headReadsAtRetry, readAheadsAtRetry);
    }

    /**
     * R1, R9: the lease is lost while the next batch is read ahead, and the new owner publishes
     * and deletes both batches. The relay never publishes (nor deletes) the batch it read ahead,
     * and once it holds the bucket again it reads from the head.
     */
    @Test
    void r1_r9_aLeaseLostDuringTheReadAheadDiscardsTheBatchReadAhead() {
        Clocked f = clocked();
        RelayOptions options = options().build();
        LeaseRequest peer = new LeaseRequest("peer", 1, options.leaseDuration(), List.of(), List.of());
        List<UUID> takenOver = new CopyOnWriteArrayList<>();
        f.store().readAheadAnswer = (inFlight, max) -> {
            List<Pending> ahead = f.memory().nextBatchExcluding(0, inFlight, max);
            if (!takenOver.isEmpty()) {
                return ahead; // the takeover happens once
            }
            // The relay stalls here for two lease durations; a peer takes the bucket over and drains both batches.
            f.memory().acquireBucketLeases(peer);
            f.clock().advance(options.leaseDuration().plusMillis(1));
            f.memory().acquireBucketLeases(peer);
            f.clock().advance(options.leaseDuration().plusMillis(1));
            assertThat(f.memory().acquireBucketLeases(peer)).as("the peer took bucket 0 over").containsExactly(0);
            List<Pending> drained = f.memory().nextBatch(0, 20);
            f.memory().markPublished(0, drained);
            takenOver.addAll(ids(Pending.messages(drained)));
            f.memory().releaseBucketLeases("peer");
            return ahead;
        };
        ScriptedPublisher publisher = new ScriptedPublisher().hold();
        try (OutboxRelay relay = OutboxRelay.builder(f.store(), publisher).options(options).clock(f.clock()).build()) {
            relay.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> f.events().contains("read-ahead end"));
            publisher.answer(batch -> PublishResult.success(batch.size()));
            publisher.calls().get(0).succeed();
            // The relay's lease round after the takeover may have been scheduled after the clock's jumps
            // (when it ran during the stalled read ahead): one renew interval more makes it due.
            f.clock().advance(options.leaseRenewInterval().plusMillis(1));
            await().atMost(Duration.ofSeconds(30)).until(() -> f.store().pending() == 0);
        }
        assertThat(takenOver).isEqualTo(ids(f.all().subList(0, 20)));
        assertThat(publisher.calls()).extracting(ScriptedPublisher.Call::ids)
                .as("the batch in flight, then the head read after the bucket came back: never the batch read ahead")
                .containsExactly(ids(f.all().subList(0, 10)), ids(f.all().subList(20, 30)));
        // The batch in flight is deleted only if the relay held the bucket again when it was acknowledged (the
        // peer had deleted it already: a no-op); the batch read ahead, never published, is never deleted by it.
        assertThat(f.store().deletedIds()).as("deleted by the relay")
                .doesNotContainAnyElementsOf(ids(f.all().subList(10, 20)))
                .endsWith(ids(f.all().subList(20, 30)).toArray(UUID[]::new));
        assertThat(f.store().deleted.size()).as("deletes: the batch in flight at most, then the head read")
                .isBetween(1, 2);
    }

    /**
     * R1, R11: the batch in flight is acknowledged and deleted, and then the relay's rebalance
     * gives the bucket up; its new owner publishes and deletes the batch that was read ahead. When
     * the bucket comes back, the relay reads from the head and never publishes that batch.
     */
    @Test
    void r1_aBucketGivenUpAfterItsPublishDropsTheBatchReadAhead() {
        Clocked f = clocked();
        RelayOptions options = options().build();
        java.util.concurrent.atomic.AtomicBoolean giveUp = new java.util.concurrent.atomic.AtomicBoolean();
        List<UUID> takenOver = new CopyOnWriteArrayList<>();
        f.store().acquireAnswer = owned -> {
            if (giveUp.compareAndSet(true, false)) {
                // The plan gives bucket 0 to another relay, which publishes and deletes messages 10-19.
                List<Pending> next = f.memory().nextBatchExcluding(0, List.of(), 10);
                f.memory().markPublished(0, next);
                takenOver.addAll(ids(Pending.messages(next)));
                return List.of();
            }
            return owned;
        };
        f.store().afterDelete = () -> {
            if (f.store().deleted.size() == 1) {
                f.clock().advance(options.leaseRenewInterval()); // the next cycle rebalances
                giveUp.set(true);
            }
        };
        ScriptedPublisher publisher = new ScriptedPublisher().hold();
        try (OutboxRelay relay = OutboxRelay.builder(f.store(), publisher).options(options).clock(f.clock()).build()) {
            relay.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> f.events().contains("read-ahead end"));
            publisher.answer(batch -> PublishResult.success(batch.size()));
            publisher.calls().get(0).succeed();
            await().atMost(Duration.ofSeconds(10)).until(() -> !takenOver.isEmpty());
            f.clock().advance(options.leaseRenewInterval()); // the rebalance after that gives the bucket back
            relay.wakeUp();
            await().atMost(Duration.ofSeconds(20)).until(() -> f.store().pending() == 0);
        }
        assertThat(takenOver).isEqualTo(ids(f.all().subList(10, 20)));
        assertThat(publisher.calls()).extracting(ScriptedPublisher.Call::ids)
                .as("the batch in flight, then a head read once the bucket came back: never the batch read ahead")
                .containsExactly(ids(f.all().subList(0, 10)), ids(f.all().subList(20, 30)));
        assertThat(f.store().deleted).containsExactly(ids(f.all().subList(0, 10)), ids(f.all().subList(20, 30)));
    }

    /** A store on a test clock holding 30 messages of bucket 0, for the lease tests. */
    private record Clocked(MutableClock clock, List<String> events, InMemoryOutboxStore memory,
                           ReadingAheadStore store, List<OutboxMessage> all) {
    }

    private static Clocked clocked() {
        MutableClock clock = new MutableClock();
        List<String> events = new CopyOnWriteArrayList<>();
        InMemoryOutboxStore memory = InMemoryOutboxStore.builder().clock(clock).build();
        List<OutboxMessage> all = messages(TOPIC, keyFor(0, 1), 30, 1, clock);
        memory.enqueue(all);
        return new Clocked(clock, events, memory, new ReadingAheadStore(memory, events), all);
    }

    private static List<UUID> firstDeliveries(ScriptedPublisher publisher) {
        LinkedHashSet<UUID> first = new LinkedHashSet<>();
        publisher.calls().forEach(call -> first.addAll(call.ids()));
        return List.copyOf(first);
    }

    private static List<Integer> indexes(List<String> events, String prefix) {
        List<Integer> found = new ArrayList<>();
        for (int i = 0; i < events.size(); i++) {
            if (events.get(i).startsWith(prefix)) {
                found.add(i);
            }
        }
        return found;
    }

    private static List<UUID> ids(List<OutboxMessage> batch) {
        return batch.stream().map(OutboxMessage::messageId).toList();
    }

    private static void sleep(long millis) {
        if (millis <= 0) {
            return;
        }
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
