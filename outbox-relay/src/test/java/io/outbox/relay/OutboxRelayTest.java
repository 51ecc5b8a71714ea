package io.outbox.relay;

import static io.outbox.relay.TestMessages.keyFor;
import static io.outbox.relay.TestMessages.message;
import static io.outbox.relay.TestMessages.messages;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.outbox.OutboxMessage;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.OutboxStore;
import io.outbox.spi.support.BatchBytes;
import io.outbox.tck.InMemoryOutboxStore;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The relay's rules R1-R9 and R11 against the in-memory reference store, a scripted publisher and a test
 * clock that moves only when a test moves it (so leases never age by themselves).
 */
class OutboxRelayTest {

    private static final String TOPIC = "orders";
    private static final int BUCKETS = 4;
    private static final Duration WAIT = Duration.ofSeconds(30);

    private final MutableClock clock = new MutableClock();
    private final InMemoryOutboxStore memory = InMemoryOutboxStore.builder().clock(clock).build();
    private final TestStore.Renewing store = new TestStore.Renewing(memory);
    private final ScriptedPublisher publisher = new ScriptedPublisher();
    private final RecordingListener events = new RecordingListener();
    private final List<OutboxRelay> relays = new ArrayList<>();

    @AfterEach
    void closeRelays() {
        relays.forEach(OutboxRelay::close);
    }

    private static RelayOptions.Builder options() {
        return RelayOptions.builder().relayId("relay-a").bucketCount(BUCKETS).batchSize(10)
                .pollInterval(Duration.ofMillis(50)).leaseDuration(Duration.ofSeconds(30))
                .leaseRenewInterval(Duration.ofSeconds(10)).errorBackoff(Duration.ofMillis(20))
                .maxErrorBackoff(Duration.ofMillis(100)).closeTimeout(Duration.ofSeconds(10));
    }

    private OutboxRelay start(OutboxStore s, RelayOptions options) {
        OutboxRelay relay = OutboxRelay.builder(s, publisher).options(options).clock(clock).listener(events).build();
        relays.add(relay);
        relay.start();
        return relay;
    }

    private OutboxRelay start(RelayOptions options) {
        return start(store, options);
    }

    private List<OutboxMessage> enqueue(int bucket, int count) {
        List<OutboxMessage> batch = messages(TOPIC, keyFor(bucket, BUCKETS), count, BUCKETS, clock);
        memory.enqueue(batch);
        return batch;
    }

    /** Acknowledges every batch and notes the counter's value at each publish. */
    private List<Integer> countAtEachPublish(AtomicInteger counter) {
        List<Integer> seen = new CopyOnWriteArrayList<>();
        publisher.answer(batch -> {
            seen.add(counter.get());
            return PublishResult.success(batch.size());
        });
        return seen;
    }

    private static List<UUID> ids(List<OutboxMessage> messages) {
        return messages.stream().map(OutboxMessage::messageId).toList();
    }

    @Test
    void r2_deletesExactlyTheAcknowledgedPrefixAndRetriesTheRestFromTheHead() {
        List<UUID> ids = ids(enqueue(1, 5));
        RuntimeException boom = new RuntimeException("record 3 refused");
        AtomicInteger attempt = new AtomicInteger();
        publisher.answer(batch -> attempt.getAndIncrement() == 0 ? PublishResult.failure(2, boom)
                : PublishResult.success(batch.size()));

        start(options().build());

        await().atMost(WAIT).until(() -> store.pending() == 0);
        assertThat(publisher.calls()).extracting(ScriptedPublisher.Call::ids)
                .containsExactly(ids, ids.subList(2, 5));
        assertThat(store.deleted).containsExactly(ids.subList(0, 2), ids.subList(2, 5));
        assertThat(events.failures).containsExactly("bucket=1 acknowledged=2 error=" + boom);
    }

    @Test
    void r2_publishesABucketsBatchesInEnqueueOrder() {
        List<UUID> ids = ids(enqueue(2, 25));

        start(options().build());

        await().atMost(WAIT).until(() -> store.pending() == 0);
        assertThat(publisher.calls()).extracting(ScriptedPublisher.Call::ids)
                .containsExactly(ids.subList(0, 10), ids.subList(10, 20), ids.subList(20, 25));
        assertThat(store.deletedIds()).isEqualTo(ids);
    }

    @Test
    void r3_aFailingBucketBacksOffAndRetriesWithoutHoldingUpOtherBuckets() {
        List<UUID> failing = ids(enqueue(0, 2));
        List<UUID> healthy = ids(enqueue(3, 2));
        publisher.answer(batch -> batch.get(0).bucket() == 0
                ? PublishResult.failure(0, new RuntimeException("broker refused")) : PublishResult.success(batch.size()));

        OutboxRelay relay = start(options().build());

        await().atMost(WAIT).until(() -> store.deletedIds().containsAll(healthy));
        await().atMost(WAIT).until(() -> events.failures.size() >= 3);
        assertThat(store.deletedIds()).doesNotContainAnyElementsOf(failing);
        assertThat(store.pending()).isEqualTo(2);
        assertThat(relay.isRunning()).isTrue();
    }

    @Test
    void r3_aStoreErrorDropsTheLeasesBacksOffAndRetries() {
        List<UUID> ids = ids(enqueue(1, 3));
        store.failNextBatches.set(2);

        start(options().build());

        await().atMost(WAIT).until(() -> store.pending() == 0);
        assertThat(events.storeErrors).hasValue(2);
        assertThat(store.acquireCalls).as("the leases are acquired again after each store error").hasValueGreaterThanOrEqualTo(3);
        assertThat(events.ownedChanges).contains(List.of());
        assertThat(store.deletedIds()).isEqualTo(ids);
    }

    @Test
    void r4_aFullBucketDoesNotStarveTheOthersAndDrainsWithoutWaitingForThePoll() {
        int busy = 0;
        int quiet = 3;
        enqueue(busy, 50);
        List<UUID> single = ids(enqueue(quiet, 1));

        // A poll interval of an hour: draining 5 full batches must not wait for it. One store thread
        // makes the order of the two buckets' first publishes deterministic.
        start(options().pollInterval(Duration.ofHours(1)).storeConcurrency(1).build());

        await().atMost(WAIT).until(() -> store.pending() == 0);
        List<Integer> buckets = publisher.calls().stream().map(ScriptedPublisher.Call::bucket).toList();
        assertThat(buckets).containsExactly(busy, quiet, busy, busy, busy, busy);
        assertThat(publisher.calls().get(1).ids()).isEqualTo(single);
    }

    /** Messages of the bucket whose values have these lengths, enqueued in this order. */
    private List<OutboxMessage> enqueueSized(int bucket, int... valueLengths) {
        List<OutboxMessage> batch = new ArrayList<>();
        for (int length : valueLengths) {
            batch.add(message(TOPIC, keyFor(bucket, BUCKETS), "v".repeat(length), BUCKETS, clock));
        }
        memory.enqueue(batch);
        return batch;
    }

    @Test
    void s1_r4_everyReadCarriesTheByteBudgetAndBatchesCutByBytesDrainWithoutWaitingForThePoll() {
        List<OutboxMessage> sized = enqueueSized(1, 1_000, 1_000, 1_000, 1_000, 1_000, 1_000, 1_000);
        long two = BatchBytes.of(sized.get(0)) + BatchBytes.of(sized.get(1));

        // A poll interval of an hour: batches of two cut by bytes are not the bucket's last.
        start(options().batchSize(500).batchMaxBytes(two + 500).pollInterval(Duration.ofHours(1)).build());

        await().atMost(WAIT).until(() -> store.pending() == 0);
        List<UUID> ids = ids(sized);
        assertThat(publisher.calls()).extracting(ScriptedPublisher.Call::ids).containsExactly(ids.subList(0, 2),
                ids.subList(2, 4), ids.subList(4, 6), ids.subList(6, 7));
        assertThat(store.budgets).as("every read asks for the relay's budget").containsOnly(two + 500);
    }

    @Test
    void s1_aMessageOverTheByteBudgetIsPublishedAloneAndItsBucketGoesOn() {
        List<UUID> ids = ids(enqueueSized(2, 50_000, 10, 10));

        start(options().batchMaxBytes(1_000L).pollInterval(Duration.ofHours(1)).build());

        await().atMost(WAIT).until(() -> store.pending() == 0);
        assertThat(publisher.calls()).extracting(ScriptedPublisher.Call::ids)
                .containsExactly(ids.subList(0, 1), ids.subList(1, 3));
    }

    @Test
    void r6_anOutOfMemoryErrorWrappedByTheStoresDriverStopsTheRelayOnceInsteadOfDroppingItsLeasesEachRound()
            throws Exception {
        enqueue(1, 3);
        // Shaped like the PostgreSQL driver's report of an OutOfMemoryError while it reads rows.
        RuntimeException wrapped = new RuntimeException("reading a batch of bucket 1 failed",
                new java.sql.SQLException("Ran out of memory retrieving query results.", "53200",
                        new OutOfMemoryError("Java heap space")));
        store.afterNextBatch = () -> {
            throw wrapped;
        };
        PrintStream originalErr = System.err;
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8)); // where the test's SLF4J binding writes
        OutboxRelay relay;
        try {
            relay = start(options().build());
            assertThatThrownBy(() -> relay.termination().get(WAIT.toSeconds(), TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class).cause().isSameAs(wrapped);
        } finally {
            System.setErr(originalErr);
        }
        String text = log.toString(StandardCharsets.UTF_8);
        originalErr.print(text);
        assertThat(relay.isRunning()).isFalse();
        assertThat(events.storeErrors).as("never a store error").hasValue(0);
        assertThat(store.acquireCalls).as("no lease round after it").hasValue(1);
        assertThat(publisher.calls()).isEmpty();
        assertThat(store.pending()).isEqualTo(3);
        assertThat(events.terminations).containsExactly(wrapped);
        assertThat(text.lines().filter(line -> line.contains(" ERROR "))).singleElement().asString()
                .contains("relay stopped: out of memory", "batch.max.bytes=", "batch.size=10",
                        "raise the heap (-Xmx)");
        assertThat(text).doesNotContain("store call failed");
    }

    @Test
    void r6_anOutOfMemoryErrorFromThePublisherStopsTheRelayAndCountsAgainstNoMessage() {
        List<UUID> ids = ids(enqueue(1, 2));
        OutOfMemoryError oom = new OutOfMemoryError("Java heap space");
        publisher.answer(batch -> PublishResult.failure(0, oom));

        OutboxRelay relay = start(options().build());

        assertThatThrownBy(() -> relay.termination().get(WAIT.toSeconds(), TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).cause().isSameAs(oom);
        assertThat(publisher.calls()).extracting(ScriptedPublisher.Call::ids).containsExactly(ids);
        assertThat(store.deleted).isEmpty();
        assertThat(events.failures).as("not a failed publish to retry").isEmpty();
        assertThat(events.storeErrors).hasValue(0);
    }

    @Test
    void r1_leaseAgeCountsFromBeforeTheAcquireCall() {
        enqueue(1, 1);
        List<Integer> acquiresAtPublish = countAtEachPublish(store.acquireCalls);
        // The first two acquisitions take a whole lease duration: the leases they return are already too old.
        store.afterAcquire = () -> {
            if (store.acquireCalls.get() <= 2) {
                clock.advance(Duration.ofSeconds(30));
            }
        };

        start(options().build());

        await().atMost(WAIT).until(() -> store.pending() == 0);
        assertThat(acquiresAtPublish).containsExactly(3);
    }

    @Test
    void r1_theLeaseIsRecheckedAfterTheFetchAndBeforeThePublish() {
        enqueue(1, 1);
        List<Integer> fetchesAtPublish = countAtEachPublish(store.nextBatchCalls);
        // The first fetch takes a whole lease duration.
        store.afterNextBatch = () -> {
            if (store.nextBatchCalls.get() == 1) {
                clock.advance(Duration.ofSeconds(30));
            }
        };

        start(options().build());

        await().atMost(WAIT).until(() -> store.pending() == 0);
        assertThat(fetchesAtPublish).containsExactly(2);
        assertThat(store.acquireCalls).as("a fresh lease before the second fetch").hasValueGreaterThanOrEqualTo(2);
    }

    @Test
    void r5_r11_leasesStayFreshWhileASlowPublishIsInFlight() {
        List<UUID> ids = ids(enqueue(1, 3));
        publisher.hold();
        OutboxRelay relay = start(options().build());
        await().atMost(WAIT).until(() -> publisher.calls().size() == 1);

        // 33 s of publishing, longer than the 30 s lease: each renew interval the relay re-acquires
        // without waiting for the publish (R11), naming the bucket as busy, which keeps its lease.
        for (int i = 1; i <= 3; i++) {
            clock.advance(Duration.ofSeconds(11));
            int acquisitions = i + 1;
            await().atMost(WAIT).until(() -> store.acquireCalls.get() >= acquisitions);
        }
        assertThat(store.lastAcquire.busyBuckets()).as("the bucket being published is named busy").containsExactly(1);
        assertThat(relay.ownedBuckets()).contains(1);

        publisher.calls().get(0).succeed();

        await().atMost(WAIT).until(() -> store.pending() == 0);
        assertThat(store.deletedIds()).isEqualTo(ids);
    }

    @Test
    void r5_theRenewalThreadKeepsTheLeasesWhileTheLoopWaitsForAPublishAfterAStoreError() throws Exception {
        List<UUID> ids = ids(enqueue(1, 3));
        publisher.hold();
        OutboxRelay relay = start(options().build());
        await().atMost(WAIT).until(() -> publisher.calls().size() == 1);

        // Another bucket's read fails: the loop starts no new work and waits for the publish in flight
        // (R3), so only the renewal thread (C1) keeps the leases alive meanwhile.
        store.failNextBatches.set(1);
        enqueue(2, 1);
        relay.wakeUp(List.of(2));
        await().atMost(WAIT).until(() -> store.nextBatchCalls.get() >= 2);
        Thread.sleep(300); // lets the loop take the failure before the clock moves
        int acquisitions = store.acquireCalls.get();
        clock.advance(Duration.ofSeconds(11));
        await().atMost(WAIT).until(() -> store.renewCalls.get() >= 1);
        assertThat(store.acquireCalls).as("the loop waits for the publish; it does not re-acquire")
                .hasValue(acquisitions);

        publisher.answer(batch -> PublishResult.success(batch.size()));
        publisher.calls().get(0).succeed();
        await().atMost(WAIT).until(() -> store.pending() == 0);
        assertThat(store.deletedIds()).containsAll(ids);
    }

    @Test
    void r5_withoutRenewalAPublishStartsOnlyWhenItsBudgetFitsTheLeaseLeft() {
        TestStore plain = new TestStore(memory);
        enqueue(1, 1);
        List<Integer> acquiresAtPublish = countAtEachPublish(plain.acquireCalls);
        // 30 s lease, 15 s budget + 10 s renew interval = 25 s needed; the first fetch leaves 24 s.
        plain.afterNextBatch = () -> {
            if (plain.nextBatchCalls.get() == 1) {
                clock.advance(Duration.ofSeconds(6));
            }
        };

        start(plain, options().maxPublishDuration(Duration.ofSeconds(15)).build());

        await().atMost(WAIT).until(() -> plain.pending() == 0);
        assertThat(acquiresAtPublish).containsExactly(2);
    }

    @Test
    void r5_withoutRenewalAPublishOverItsBudgetStopsTheRelay() {
        TestStore plain = new TestStore(memory);
        enqueue(1, 2);
        publisher.answer(batch -> {
            clock.advance(Duration.ofSeconds(16));
            return PublishResult.success(batch.size());
        });

        OutboxRelay relay = start(plain, options().maxPublishDuration(Duration.ofSeconds(15)).build());

        assertThatThrownBy(() -> relay.termination().get(WAIT.toSeconds(), TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).cause()
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("took 16000 ms, more than max.publish.duration.ms (15000)");
        assertThat(plain.pending()).as("the acknowledged batch was deleted while the lease was valid").isZero();
        assertThat(relay.isRunning()).isFalse();
    }

    @Test
    void r5_aStoreWithoutRenewalNeedsAPublishBudget() {
        TestStore plain = new TestStore(memory);

        assertThatThrownBy(() -> new OutboxRelay(plain, publisher, options().build()))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("max.publish.duration.ms is required")
                .hasMessageContaining("LeaseRenewal");
    }

    @Test
    void r6_aMisconfiguredStoreStopsTheRelayAndReportsTheCause() {
        // A writer that believes in 16 buckets put a message where a relay with 4 never looks (S8).
        memory.enqueue(message(TOPIC, keyFor(13, 16), "v", 16, clock));

        OutboxRelay relay = start(options().build());

        assertThatThrownBy(() -> relay.termination().get(WAIT.toSeconds(), TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).cause()
                .isInstanceOf(OutboxMisconfigurationException.class).hasMessageContaining("bucket(s) [13]");
        assertThat(relay.isRunning()).isFalse();
        assertThat(events.terminations).singleElement().isInstanceOf(OutboxMisconfigurationException.class);
        assertThat(publisher.calls()).isEmpty();
    }

    @Test
    void r6_aMisconfigurationWhoseMessageSpansLinesIsLoggedAsOneErrorLine() throws Exception {
        enqueue(1, 1);
        String message = "relation \"outbox_messages\" does not exist\n  Position: 23;\r\n recreate the tables";
        publisher.answer(batch -> PublishResult.failure(0, new OutboxMisconfigurationException(message)));
        PrintStream originalErr = System.err;
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8)); // where the test's SLF4J binding writes
        try {
            OutboxRelay relay = start(options().build());
            assertThatThrownBy(() -> relay.termination().get(WAIT.toSeconds(), TimeUnit.SECONDS))
                    .cause().isInstanceOf(OutboxMisconfigurationException.class);
        } finally {
            System.setErr(originalErr);
        }
        String text = log.toString(StandardCharsets.UTF_8);
        originalErr.print(text);
        assertThat(text.lines().filter(line -> line.contains(" ERROR "))).singleElement().asString()
                .contains("relay stopped on a misconfiguration", "relation \"outbox_messages\" does not exist "
                        + "Position: 23; recreate the tables");
        assertThat(text.lines().filter(line -> line.contains("publish failed"))).singleElement().asString()
                .contains("does not exist Position: 23; recreate the tables");
        assertThat(text).doesNotContain("\n  Position", "\tat ");
    }

    @Test
    void r6_aMisconfigurationReportedByThePublisherStopsTheRelay() {
        enqueue(1, 1);
        publisher.answer(batch -> PublishResult.failure(0, new OutboxMisconfigurationException("no such topic")));

        OutboxRelay relay = start(options().build());

        assertThatThrownBy(() -> relay.termination().get(WAIT.toSeconds(), TimeUnit.SECONDS))
                .cause().isInstanceOf(OutboxMisconfigurationException.class).hasMessage("no such topic");
        assertThat(publisher.calls()).hasSize(1);
        assertThat(store.pending()).isEqualTo(1);
        assertThat(memory.leases().values()).allMatch(lease -> lease.owner() == null, "leases released");
    }

    @Test
    void r7_aPublisherThatCannotReachTheBrokerIsRetriedUntilItCan() {
        List<UUID> ids = ids(enqueue(2, 3));
        AtomicInteger attempts = new AtomicInteger();
        publisher.answer(batch -> attempts.incrementAndGet() <= 3
                ? PublishResult.failure(0, new org.apache.kafka.common.errors.TimeoutException("broker unreachable"))
                : PublishResult.success(batch.size()));

        OutboxRelay relay = start(options().build());

        await().atMost(WAIT).until(() -> store.pending() == 0);
        assertThat(events.failures).hasSize(3);
        assertThat(store.deletedIds()).isEqualTo(ids);
        assertThat(relay.isRunning()).isTrue();
    }

    @Test
    void r8_wakeUpEndsAnIdleWaitAtOnce() {
        OutboxRelay relay = start(options().pollInterval(Duration.ofHours(1)).build());
        await().atMost(WAIT).until(() -> store.pendingCalls.get() >= 1 && relay.ownedBuckets().size() == BUCKETS);

        List<UUID> hinted = ids(enqueue(2, 1));
        int probesBefore = store.pendingCalls.get();
        relay.wakeUp(List.of(2));
        await().atMost(WAIT).until(() -> store.deletedIds().containsAll(hinted));
        assertThat(store.pendingCalls).as("a hinted bucket is fetched without probing").hasValue(probesBefore);

        List<UUID> unhinted = ids(enqueue(3, 1));
        relay.wakeUp();
        await().atMost(WAIT).until(() -> store.deletedIds().containsAll(unhinted));
    }

    @Test
    void r8_aWakeUpForABucketWhosePublishIsInFlightIsKept() {
        OutboxRelay relay = start(options().pollInterval(Duration.ofHours(1)).build());
        await().atMost(WAIT).until(() -> store.pendingCalls.get() >= 1 && relay.ownedBuckets().size() == BUCKETS);
        publisher.hold();
        List<UUID> first = ids(enqueue(2, 1));
        relay.wakeUp(List.of(2));
        await().atMost(WAIT).until(() -> publisher.calls().size() == 1);

        List<UUID> second = ids(enqueue(2, 1));
        relay.wakeUp(List.of(2));
        publisher.answer(batch -> PublishResult.success(batch.size()));
        publisher.calls().get(0).succeed();

        await().atMost(WAIT).until(() -> store.deletedIds().containsAll(first) && store.deletedIds().containsAll(second));
    }

    @Test
    void r8_wakeUpRejectsBucketsOutsideTheRange() {
        OutboxRelay relay = start(options().build());

        assertThatThrownBy(() -> relay.wakeUp(List.of(1, BUCKETS)))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("bucket 4 is outside [0, 4)");
    }

    @Test
    void r9_closeWaitsForTheInFlightPublishDeletesItsAcknowledgedPrefixAndReleasesTheLeases() throws Exception {
        List<UUID> ids = ids(enqueue(1, 3));
        publisher.hold();
        OutboxRelay relay = start(options().build());
        await().atMost(WAIT).until(() -> publisher.calls().size() == 1);

        CompletableFuture<Void> closing = CompletableFuture.runAsync(relay::close);
        await().during(Duration.ofMillis(300)).atMost(WAIT).until(() -> !closing.isDone());
        publisher.calls().get(0).future().complete(PublishResult.failure(1, new RuntimeException("late")));
        closing.get(WAIT.toSeconds(), TimeUnit.SECONDS);

        assertThat(store.deleted).containsExactly(ids.subList(0, 1));
        assertThat(store.pending()).isEqualTo(2);
        assertThat(publisher.calls()).hasSize(1);
        assertThat(memory.leases().values()).allMatch(lease -> lease.owner() == null, "leases released");
        assertThat(relay.termination()).isCompleted();
        assertThat(relay.isRunning()).isFalse();
    }

    @Test
    void r9_closeGivesUpAfterItsTimeoutWithoutDeletingOrReleasing() {
        List<UUID> ids = ids(enqueue(1, 3));
        publisher.hold();
        OutboxRelay relay = start(options().closeTimeout(Duration.ofMillis(300)).build());
        await().atMost(WAIT).until(() -> publisher.calls().size() == 1);

        assertTimeoutPreemptively(Duration.ofSeconds(10), relay::close);

        assertThat(relay.termination()).isCompleted();
        assertThat(memory.leases().values()).anyMatch(lease -> "relay-a".equals(lease.owner()));
        publisher.calls().get(0).succeed();
        await().during(Duration.ofMillis(300)).atMost(WAIT).until(() -> store.deleted.isEmpty());
        assertThat(store.pending()).isEqualTo(ids.size());
    }

    @Test
    void r9_aLeaseLostDuringAPublishMeansNoDeleteAndNoFurtherPublishOfThatBucket() {
        List<UUID> ids = ids(enqueue(1, 3));
        publisher.hold();
        OutboxRelay relay = start(options().build());
        await().atMost(WAIT).until(() -> publisher.calls().size() == 1);

        // A peer takes the buckets over: renewal and acquisition no longer return them.
        store.renewAnswer = held -> List.of();
        store.acquireAnswer = owned -> List.of();
        clock.advance(Duration.ofSeconds(11));
        await().atMost(WAIT).until(() -> store.acquireCalls.get() >= 2 || store.renewCalls.get() >= 1);
        await().atMost(WAIT).until(() -> relay.ownedBuckets().isEmpty());
        publisher.calls().get(0).succeed();

        await().during(Duration.ofMillis(500)).atMost(WAIT).until(() -> store.deleted.isEmpty());
        assertThat(publisher.calls()).hasSize(1);
        assertThat(store.pending()).isEqualTo(ids.size());
    }

    @Test
    void r9_startAndCloseAreGuarded() {
        OutboxRelay relay = start(options().build());

        assertThatThrownBy(relay::start).isInstanceOf(IllegalStateException.class).hasMessageContaining("already");
        relay.close();
        relay.close();
        assertThatThrownBy(relay::start).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        assertThat(relay.termination()).isCompleted();
    }

    @Test
    void closingARelayThatNeverStartedCompletesItsTermination() throws Exception {
        OutboxRelay relay = new OutboxRelay(store, publisher, options().build());
        relay.close();

        assertThat(relay.termination().get(1, TimeUnit.SECONDS)).isNull();
        assertThat(relay.isRunning()).isFalse();
    }

    @Test
    void aListenerThatThrowsDoesNotDisturbTheRelay() {
        enqueue(1, 2);
        OutboxRelay relay = OutboxRelay.builder(store, publisher).options(options().build()).clock(clock)
                .listener(new RelayListener() {
                    @Override
                    public void onPublished(int bucket, int count) {
                        throw new IllegalStateException("listener bug");
                    }
                }).build();
        relays.add(relay);
        relay.start();

        await().atMost(WAIT).until(() -> store.pending() == 0);
        assertThat(relay.isRunning()).isTrue();
    }

    /** Records what the relay reports. */
    static final class RecordingListener implements RelayListener {
        final List<String> failures = new CopyOnWriteArrayList<>();
        final List<List<Integer>> ownedChanges = new CopyOnWriteArrayList<>();
        final List<Throwable> terminations = new CopyOnWriteArrayList<>();
        final AtomicInteger storeErrors = new AtomicInteger();

        @Override
        public void onOwnedBucketsChanged(List<Integer> ownedBuckets) {
            ownedChanges.add(ownedBuckets);
        }

        @Override
        public void onPublishFailed(int bucket, int acknowledged, Throwable error) {
            failures.add("bucket=" + bucket + " acknowledged=" + acknowledged + " error=" + error);
        }

        @Override
        public void onStoreError(Throwable error) {
            storeErrors.incrementAndGet();
        }

        @Override
        public void onTerminated(Throwable fatalError) {
            if (fatalError != null) {
                terminations.add(fatalError);
            }
        }
    }
}
