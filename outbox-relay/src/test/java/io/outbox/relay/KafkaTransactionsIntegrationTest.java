package io.outbox.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.OutboxMessage;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.relay.kafka.KafkaTransactions;
import io.outbox.relay.kafka.TestPublishers;
import io.outbox.spi.LeaseRequest;
import io.outbox.spi.Pending;
import io.outbox.tck.InMemoryOutboxStore;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The transactional mode against the in-process broker (its transaction state log is set up for
 * one node): a read_committed consumer sees each key in enqueue order across a partial failure, a
 * stalled owner, a relay that died mid-transaction, and a peer whose clock runs 15 s fast (K5-K7).
 */
class KafkaTransactionsIntegrationTest {

    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final StringSerializer STRING = new StringSerializer();
    private static final String READ_COMMITTED = "read_committed";
    @RegisterExtension
    static final KafkaBroker KAFKA = new KafkaBroker();

    private static Map<String, Object> producerConfig(Object... extra) {
        Map<String, Object> config = KAFKA.broker().adminConfig();
        config.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        for (int i = 0; i < extra.length; i += 2) {
            config.put((String) extra[i], extra[i + 1]);
        }
        return config;
    }

    private static KafkaOutboxPublisher publisher(String prefix, GatedProducer.Gate gate, Object... extra) {
        return TestPublishers.transactional(producerConfig(extra), KafkaTransactions.builder(prefix).build(),
                gate == null ? KafkaProducer::new : gate.factory());
    }

    private static RelayOptions.Builder options(String relayId, int buckets) {
        return RelayOptions.builder().relayId(relayId).bucketCount(buckets).batchSize(50)
                .pollInterval(Duration.ofMillis(50)).leaseDuration(Duration.ofSeconds(2))
                .leaseRenewInterval(Duration.ofMillis(500)).errorBackoff(Duration.ofMillis(100))
                .maxErrorBackoff(Duration.ofMillis(300)).closeTimeout(Duration.ofSeconds(20));
    }

    /** Records fenced publishes and bucket gains of one relay. */
    static final class Recorder implements RelayListener {
        final List<Throwable> failures = new CopyOnWriteArrayList<>();
        final AtomicInteger gains = new AtomicInteger();
        private volatile List<Integer> owned = List.of();

        @Override
        public void onPublishFailed(int bucket, int acknowledged, Throwable error) {
            failures.add(error);
        }

        @Override
        public synchronized void onOwnedBucketsChanged(List<Integer> ownedBuckets) {
            Set<Integer> gained = new HashSet<>(ownedBuckets);
            gained.removeAll(owned);
            gains.addAndGet(gained.size());
            owned = ownedBuckets;
        }

        long fenced() {
            return failures.stream().filter(e -> e instanceof BucketFencedException).count();
        }
    }

    @Test
    void k6_k7_aPartialFailureShowsReadCommittedConsumersNothingUntilTheRefusedRowIsRepaired() {
        String topic = "tx-too-large";
        KAFKA.broker().createTopic(topic, 1);
        Clock clock = Clock.systemUTC();
        OutboxMessage row1 = OutboxMessage.create(topic, "order-1", "x".repeat(20_000), STRING, STRING, List.of(), 4,
                null, clock);
        OutboxMessage row2 = OutboxMessage.create(topic, "order-1", "row 2", STRING, STRING, List.of(), 4, null, clock);
        OutboxMessage row3 = OutboxMessage.create(topic, "order-1", "row 3", STRING, STRING, List.of(), 4, null, clock);
        KafkaRelayIntegrationTest.RepairingStore store = new KafkaRelayIntegrationTest.RepairingStore(
                InMemoryOutboxStore.builder().build(), row1.messageId(), "row 1, repaired");
        store.delegate.enqueue(row1, row2, row3);
        Recorder recorder = new Recorder();
        Map<UUID, Integer> row = Map.of(row1.messageId(), 1, row2.messageId(), 2, row3.messageId(), 3);

        try (KafkaOutboxPublisher publisher = publisher("tx-too-large", null, "max.request.size", 10_000);
             OutboxRelay relay = OutboxRelay.builder(store, publisher).options(options("too-large", 4).build())
                     .listener(recorder).build()) {
            relay.start();
            await().atMost(WAIT).until(() -> recorder.failures.size() >= 3);
            assertThat(recorder.failures).allMatch(e -> e instanceof RecordTooLargeException);
            assertThat(store.deleted).isEmpty();
            assertThat(store.pending()).isEqualTo(3);
            // Once row 1 is refused the transaction can only abort: rows 2 and 3 are refused as well,
            // where the default mode lands them (KafkaRelayIntegrationTest, seed 000).
            assertThat(TopicReader.readAll(KAFKA.broker().bootstrapServers(), topic, READ_COMMITTED))
                    .as("a read_committed consumer sees none of the rows").isEmpty();

            store.repair();
            await().atMost(WAIT).until(() -> store.pending() == 0);
        }
        List<ConsumerRecord<byte[], byte[]>> committed =
                TopicReader.readAll(KAFKA.broker().bootstrapServers(), topic, READ_COMMITTED);
        assertThat(rows(committed, row)).containsExactly(1, 2, 3);
        assertThat(new String(committed.get(0).value(), StandardCharsets.UTF_8)).isEqualTo("row 1, repaired");
    }

    /**
     * K6 aborts the transaction of a refused record; K3 and R12 still count the failure against
     * that record: the 10 records before it are committed in a transaction of their own.
     */
    @Test
    void k6_r12_aRefusedRecordInTheMiddleAbortsItsTransactionAndTheRecordsBeforeItAreCommittedWithoutIt() {
        String topic = "tx-middle";
        KAFKA.broker().createTopic(topic, 1);
        Clock clock = Clock.systemUTC();
        List<OutboxMessage> batch = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            batch.add(OutboxMessage.create(topic, "order-1", i == 10 ? "x".repeat(20_000) : "row " + i, STRING, STRING,
                    List.of(), 1, null, clock));
        }
        try (KafkaOutboxPublisher publisher = publisher("tx-middle", null, "max.request.size", 10_000)) {
            publisher.bucketsAcquired(Set.of(0));
            PublishResult refused = publisher.publish(batch).join();
            assertThat(refused.acknowledged()).as("the records before the refused one").isEqualTo(10);
            assertThat(refused.firstError()).isInstanceOf(RecordTooLargeException.class);
            PublishResult alone = publisher.publish(batch.subList(10, 20)).join();
            assertThat(alone.acknowledged()).as("the refused record at the head").isZero();
            assertThat(alone.firstError()).isInstanceOf(RecordTooLargeException.class);
            assertThat(publisher.publish(batch.subList(0, 1)).join().acknowledged()).as("bucket 0 is still held")
                    .isOne();
            publisher.bucketsReleased(Set.of(0));
            assertThat(publisher.publish(batch.subList(0, 1)).join().firstError())
                    .isInstanceOf(BucketFencedException.class).hasMessageContaining("bucket 0");
        }
        List<ConsumerRecord<byte[], byte[]>> committed =
                TopicReader.readAll(KAFKA.broker().bootstrapServers(), topic, READ_COMMITTED);
        assertThat(committed).extracting(TopicReader::messageId).as("rows 0-9 once, then row 0 again")
                .containsExactlyElementsOf(java.util.stream.Stream.concat(batch.subList(0, 10).stream(),
                        java.util.stream.Stream.of(batch.get(0))).map(OutboxMessage::messageId).toList());
    }

    /** With one attempt allowed, counting the failure against any row but the refused one would dead-letter it. */
    @Test
    void k6_r12_withTheDeadLetterPolicyARefusedRowIsDeadLetteredAndTheOthersFollowInOrder() {
        String topic = "tx-dead-letter";
        KAFKA.broker().createTopic(topic, 1);
        Clock clock = Clock.systemUTC();
        OutboxMessage row1 = OutboxMessage.create(topic, "order-1", "row 1", STRING, STRING, List.of(), 4, null, clock);
        OutboxMessage row2 = OutboxMessage.create(topic, "order-1", "x".repeat(20_000), STRING, STRING, List.of(), 4,
                null, clock);
        OutboxMessage row3 = OutboxMessage.create(topic, "order-1", "row 3", STRING, STRING, List.of(), 4, null, clock);
        InMemoryOutboxStore store = InMemoryOutboxStore.builder().build();
        store.enqueue(List.of(row1, row2, row3));
        Map<UUID, Integer> row = Map.of(row1.messageId(), 1, row2.messageId(), 2, row3.messageId(), 3);
        try (KafkaOutboxPublisher publisher = publisher("tx-dead-letter", null, "max.request.size", 10_000);
             OutboxRelay relay = OutboxRelay.builder(store, publisher).options(options("dead-letter", 4)
                     .poisonPolicy(PoisonPolicy.DEAD_LETTER).poisonMaxAttempts(1).build()).build()) {
            relay.start();
            await().atMost(WAIT).until(() -> store.pendingMetrics(Duration.ofSeconds(1)).pendingCount() == 0);
        }
        assertThat(store.deadLetters().orElseThrow().deadLetters(null, 10))
                .extracting(io.outbox.spi.DeadLetter::messageId).containsExactly(row2.messageId());
        List<Integer> committed = rows(TopicReader.readAll(KAFKA.broker().bootstrapServers(), topic, READ_COMMITTED),
                row);
        assertThat(committed).as("row 1 and row 3 once each, row 2 never").containsExactly(1, 3);
    }

    private static List<Integer> rows(List<ConsumerRecord<byte[], byte[]>> records, Map<UUID, Integer> row) {
        return records.stream().map(r -> row.get(TopicReader.messageId(r))).toList();
    }

    @Test
    void k5_k6_r1_aStalledOwnersLateSendsAreFencedAndItDeletesNothing() throws Exception {
        String topic = "tx-stalled";
        int buckets = 4;
        KAFKA.broker().createTopic(topic, buckets);
        InMemoryOutboxStore shared = InMemoryOutboxStore.builder().build();
        Enqueued enqueued = new Enqueued(topic, buckets);
        // A backlog A cannot drain between the wait below seeing 300 deleted and the gate being armed,
        // however slowly the waiting thread is scheduled.
        enqueued.write(shared, 10_000);
        StallableStore storeA = new StallableStore(shared);
        TestStore.Renewing storeB = new TestStore.Renewing(shared);
        GatedProducer.Gate gateA = new GatedProducer.Gate();
        Recorder a = new Recorder();
        Recorder b = new Recorder();
        try (KafkaOutboxPublisher publisherA = publisher("tx-stalled", gateA);
             KafkaOutboxPublisher publisherB = publisher("tx-stalled", null);
             OutboxRelay relayA = OutboxRelay.builder(storeA, publisherA).options(options("relay-a", buckets).build())
                     .listener(a).build();
             OutboxRelay relayB = OutboxRelay.builder(storeB, publisherB).options(options("relay-b", buckets).build())
                     .listener(b).build()) {
            relayA.start();
            await().atMost(WAIT).until(() -> relayA.ownedBuckets().size() == buckets && storeA.deletedIds().size() >= 300);

            // A stalls mid-transaction: two more sends go out, the next is held; its lease renewals fail.
            storeA.stalled = true;
            gateA.holdAfter(2);
            assertThat(gateA.awaitHeld(WAIT)).isTrue();
            relayB.start();
            await().atMost(WAIT).until(() -> relayB.ownedBuckets().size() == buckets && storeB.pending() == 0);
            enqueued.write(shared, 1_000);
            await().atMost(WAIT).until(() -> storeB.pending() == 0);

            // A resumes: its held sends and its commit meet a bumped epoch.
            storeA.stalled = false;
            gateA.open();
            await().atMost(WAIT).until(() -> a.fenced() >= 1);
            assertThat(a.failures).as("A's late publishes fail as fenced, nothing else")
                    .allMatch(e -> e instanceof BucketFencedException);
            Set<UUID> stalledBatch = Set.copyOf(gateA.sentOrHeldWhileArmed);
            assertThat(stalledBatch).isNotEmpty();
            await().atMost(WAIT).until(() -> relayA.ownedBuckets().size() == 2 && relayB.ownedBuckets().size() == 2);
            assertThat(storeA.deletedIds()).as("A deletes nothing of its stalled batch").doesNotContainAnyElementsOf(
                    stalledBatch);
            enqueued.write(shared, 1_000);
            await().atMost(WAIT).until(() -> storeB.pending() == 0);
        }
        List<ConsumerRecord<byte[], byte[]>> all = TopicReader.readAll(KAFKA.broker().bootstrapServers(), topic);
        List<ConsumerRecord<byte[], byte[]>> committed =
                TopicReader.readAll(KAFKA.broker().bootstrapServers(), topic, READ_COMMITTED);
        assertThat(all.size()).as("A's stalled transaction left aborted records in the log")
                .isGreaterThan(committed.size());
        enqueued.assertInOrderWithWholeBatchRepeats(committed, a.gains.get() + b.gains.get());
    }

    @Test
    void k5_k7_aNewOwnersInitTransactionsAbortsTheOpenTransactionOfARelayThatDied() throws Exception {
        String topic = "tx-killed";
        int buckets = 2;
        KAFKA.broker().createTopic(topic, buckets);
        TestStore.Renewing store = new TestStore.Renewing(InMemoryOutboxStore.builder().build());
        Enqueued enqueued = new Enqueued(topic, buckets);
        enqueued.write(store.delegate, 400);
        // The dead relay's producer of bucket 0: its transaction holds the bucket's first rows, never ends.
        Map<String, Object> dead = producerConfig(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "tx-killed-0",
                ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, 600_000);
        KafkaProducer<byte[], byte[]> crashed = new KafkaProducer<>(dead, new ByteArraySerializer(),
                new ByteArraySerializer());
        try {
            crashed.initTransactions();
            crashed.beginTransaction();
            for (OutboxMessage m : Pending.messages(store.delegate.nextBatch(0, 20))) {
                crashed.send(new ProducerRecord<>(m.topic(), null, m.key(), m.value(), List.of(
                        new org.apache.kafka.common.header.internals.RecordHeader(KafkaOutboxPublisher.DEFAULT_MESSAGE_ID_HEADER,
                                m.messageId().toString().getBytes(StandardCharsets.UTF_8)))));
            }
            crashed.flush();
            assertThat(TopicReader.readAll(KAFKA.broker().bootstrapServers(), topic, READ_COMMITTED))
                    .as("the open transaction holds read_committed consumers back").isEmpty();

            Recorder recorder = new Recorder();
            try (KafkaOutboxPublisher publisher = publisher("tx-killed", null);
                 OutboxRelay relay = OutboxRelay.builder(store, publisher).options(options("successor", buckets).build())
                         .listener(recorder).build()) {
                relay.start();
                await().atMost(WAIT).until(() -> store.pending() == 0);
            }
            // Well inside the dead transaction's 10 minute timeout: only initTransactions can have ended it.
            List<ConsumerRecord<byte[], byte[]>> committed =
                    TopicReader.readAll(KAFKA.broker().bootstrapServers(), topic, READ_COMMITTED);
            assertThat(committed).hasSize(400);
            assertThat(TopicReader.readAll(KAFKA.broker().bootstrapServers(), topic)).hasSize(420);
            enqueued.assertInOrderWithWholeBatchRepeats(committed, recorder.gains.get());
        } finally {
            crashed.close(Duration.ZERO);
        }
    }

    @Test
    void k7_s13_aPeerWithAClock15sFastTakesOnlyItsShareAndReadCommittedOrderHolds() throws Exception {
        String topic = "tx-skew";
        int buckets = 4;
        KAFKA.broker().createTopic(topic, buckets);
        SkewedClock clock = new SkewedClock();
        InMemoryOutboxStore shared = InMemoryOutboxStore.builder().clock(clock).build();
        Enqueued enqueued = new Enqueued(topic, buckets);
        TestStore.Renewing storeA = new TestStore.Renewing(shared);
        SkewedStore storeB = new SkewedStore(shared, 15_000);
        GatedProducer.Gate gateA = new GatedProducer.Gate();
        Recorder a = new Recorder();
        Recorder b = new Recorder();
        RelayOptions.Builder base = options("", buckets).leaseDuration(Duration.ofSeconds(5))
                .leaseRenewInterval(Duration.ofSeconds(1));
        try (KafkaOutboxPublisher publisherA = publisher("tx-skew", gateA);
             KafkaOutboxPublisher publisherB = publisher("tx-skew", null);
             OutboxRelay relayA = OutboxRelay.builder(storeA, publisherA).options(base.relayId("relay-a").build())
                     .clock(clock).listener(a).build();
             OutboxRelay relayB = OutboxRelay.builder(storeB, publisherB).options(base.relayId("relay-b").build())
                     .clock(clock.offsetBy(15_000)).listener(b).build()) {
            relayA.start();
            await().atMost(WAIT).until(() -> relayA.ownedBuckets().size() == buckets);
            Thread writer = new Thread(() -> {
                for (int i = 0; i < 60; i++) {
                    enqueued.write(shared, 100);
                    pause(50);
                }
            });
            writer.start();
            await().atMost(WAIT).until(() -> storeA.deletedIds().size() >= 300);
            // Hold A inside a transaction (a send passes, the next waits) so B's takeover meets it open.
            gateA.holdAfter(1);
            assertThat(gateA.awaitHeld(WAIT)).isTrue();
            relayB.start();
            // S13: B's clock says A's heartbeat and leases are 15 s old, but they keep changing, so B
            // takes no more than its fair share, and none of the buckets A is publishing (R11: A keeps
            // its busy buckets, here the ones whose sends the gate holds).
            await().during(Duration.ofSeconds(3)).atMost(WAIT)
                    .until(() -> relayB.ownedBuckets().size() <= buckets / 2 && relayA.isRunning());
            gateA.open();
            // Once A's publishes end, the rebalance gives B its share.
            await().atMost(WAIT).until(() -> relayB.ownedBuckets().size() == buckets / 2);
            writer.join(WAIT.toMillis());
            await().atMost(WAIT).until(() -> storeB.pending() == 0);
            assertThat(a.fenced()).as("nothing of A's was taken while it was live").isZero();
        }
        List<ConsumerRecord<byte[], byte[]>> committed =
                TopicReader.readAll(KAFKA.broker().bootstrapServers(), topic, READ_COMMITTED);
        enqueued.assertInOrderWithWholeBatchRepeats(committed, a.gains.get() + b.gains.get());
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** What was enqueued, per bucket in enqueue order; the checks of rule K7. */
    static final class Enqueued {
        private final String topic;
        private final int buckets;
        private final Map<UUID, int[]> position = new HashMap<>(); // id -> {bucket, index in bucket}
        private final Map<Integer, List<UUID>> byBucket = new HashMap<>();
        private int count;

        Enqueued(String topic, int buckets) {
            this.topic = topic;
            this.buckets = buckets;
        }

        synchronized void write(InMemoryOutboxStore store, int messages) {
            List<OutboxMessage> chunk = new ArrayList<>();
            for (int i = 0; i < messages; i++) {
                String key = "key-" + (count % 40);
                OutboxMessage m = OutboxMessage.create(topic, key, key + ":" + count, STRING, STRING, buckets);
                count++;
                List<UUID> ids = byBucket.computeIfAbsent(m.bucket(), k -> new ArrayList<>());
                position.put(m.messageId(), new int[] {m.bucket(), ids.size()});
                ids.add(m.messageId());
                chunk.add(m);
            }
            store.enqueue(chunk);
        }

        /**
         * K7: every message arrived; per bucket (= partition, so per key too) the first deliveries
         * are in enqueue order; a repeat restarts from an earlier position and never skips ahead,
         * and there are at most as many restarts as bucket handovers (interleaved copies would
         * restart at nearly every record).
         */
        synchronized void assertInOrderWithWholeBatchRepeats(List<ConsumerRecord<byte[], byte[]>> records,
                                                             int handovers) {
            Map<Integer, List<UUID>> firstByPartition = new HashMap<>();
            Map<Integer, Integer> last = new HashMap<>();
            Map<Integer, Integer> max = new HashMap<>();
            Set<UUID> seen = new LinkedHashSet<>();
            int restarts = 0;
            for (ConsumerRecord<byte[], byte[]> r : records) {
                UUID id = TopicReader.messageId(r);
                int[] at = position.get(id);
                assertThat(at).as("record %s was enqueued", id).isNotNull();
                assertThat(r.partition()).as("bucket = partition").isEqualTo(at[0]);
                int previous = last.getOrDefault(at[0], -1);
                int highest = max.getOrDefault(at[0], -1);
                assertThat(at[1]).as("partition %s never skips ahead of what it delivered", at[0])
                        .isLessThanOrEqualTo(highest + 1);
                if (at[1] != previous + 1) {
                    restarts++;
                }
                last.put(at[0], at[1]);
                max.put(at[0], Math.max(highest, at[1]));
                if (seen.add(id)) {
                    firstByPartition.computeIfAbsent(at[0], k -> new ArrayList<>()).add(id);
                }
            }
            assertThat(firstByPartition).as("first deliveries per bucket in enqueue order").isEqualTo(byBucket);
            assertThat(restarts).as("repeats come as whole batches, at most one per handover (%s)", handovers)
                    .isLessThanOrEqualTo(handovers);
            System.err.printf("%s: %d records, %d messages, %d restarts, %d handovers%n", topic, records.size(),
                    seen.size(), restarts, handovers);
        }
    }

    /** A relay's store whose lease calls fail while {@link #stalled}, like a relay cut off from its database. */
    static final class StallableStore extends TestStore.Renewing {
        volatile boolean stalled;

        StallableStore(InMemoryOutboxStore delegate) {
            super(delegate);
        }

        @Override
        public List<Integer> acquireBucketLeases(LeaseRequest request) {
            requireRunning();
            return super.acquireBucketLeases(request);
        }

        @Override
        public List<Integer> renewBucketLeases(LeaseRequest request) {
            requireRunning();
            return super.renewBucketLeases(request);
        }

        private void requireRunning() {
            if (stalled) {
                throw new IllegalStateException("stalled: the lease call did not reach the store");
            }
        }
    }

    /**
     * One clock for a shared store, read by relays whose clocks disagree: a relay's store calls run
     * with its offset ({@link SkewedStore}), the relay itself gets {@link #offsetBy}.
     */
    static final class SkewedClock extends Clock {
        private static final ThreadLocal<Long> OFFSET = ThreadLocal.withInitial(() -> 0L);
        private final long fixedOffset;

        SkewedClock() {
            this(-1);
        }

        private SkewedClock(long fixedOffset) {
            this.fixedOffset = fixedOffset;
        }

        Clock offsetBy(long millis) {
            return new SkewedClock(millis);
        }

        static <T> T withOffset(long millis, Supplier<T> call) {
            OFFSET.set(millis);
            try {
                return call.get();
            } finally {
                OFFSET.set(0L);
            }
        }

        @Override
        public long millis() {
            return System.currentTimeMillis() + (fixedOffset >= 0 ? fixedOffset : OFFSET.get());
        }

        @Override
        public Instant instant() {
            return Instant.ofEpochMilli(millis());
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }
    }

    /** A relay's view of the shared store with its clock running {@code offsetMillis} ahead. */
    static final class SkewedStore extends TestStore.Renewing {
        private final long offsetMillis;

        SkewedStore(InMemoryOutboxStore delegate, long offsetMillis) {
            super(delegate);
            this.offsetMillis = offsetMillis;
        }

        @Override
        public List<Integer> acquireBucketLeases(LeaseRequest request) {
            return SkewedClock.withOffset(offsetMillis, () -> super.acquireBucketLeases(request));
        }

        @Override
        public List<Integer> renewBucketLeases(LeaseRequest request) {
            return SkewedClock.withOffset(offsetMillis, () -> super.renewBucketLeases(request));
        }

        @Override
        public void releaseBucketLeases(String relayId) {
            SkewedClock.withOffset(offsetMillis, () -> {
                super.releaseBucketLeases(relayId);
                return null;
            });
        }
    }
}
