package io.outbox.relay;

import static io.outbox.relay.TestMessages.keyFor;
import static io.outbox.relay.TestMessages.message;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.OutboxMessage;
import io.outbox.embedded.EmbeddedKafkaBroker;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.tck.InMemoryOutboxStore;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A topic deleted while a relay runs, on a real broker that does not create topics
 * ({@code auto.create.topics.enable=false}, so the topic stays gone): the publisher logs one ERROR
 * naming the topic and its last partition count however many batches fail, the failures are
 * retriable (R12: never counted against a message, so even {@code dead-letter} after one attempt
 * moves nothing), the messages stay pending, and once the topic is created again they are
 * delivered. With the broker's auto-creation on, the producer re-creates the topic instead; that
 * case is {@link TopicProblemsIntegrationTest}'s partition count change. A topic deleted and
 * re-created, with the same count or fewer partitions, in either mode, with the producer's default timeouts
 * ({@code delivery.timeout.ms} 120 s), is delivered to again within 10 s of the re-creation, nothing
 * lost, each key's first deliveries in enqueue order.
 */
class TopicVanishedIntegrationTest {

    private static final int BUCKETS = 4;
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int KEYS = 8;
    private static final Duration RESUME_BOUND = Duration.ofSeconds(10);
    private static EmbeddedKafkaBroker broker;

    @BeforeAll
    static void startBroker() {
        broker = EmbeddedKafkaBroker.builder().brokerProperty("auto.create.topics.enable", "false").start();
    }

    @AfterAll
    static void stopBroker() {
        broker.close();
    }

    private static KafkaOutboxPublisher publisher() {
        Map<String, Object> config = broker.adminConfig();
        config.put("max.block.ms", 1_000);
        config.put("request.timeout.ms", 1_500);
        config.put("delivery.timeout.ms", 4_000);
        config.put("metadata.max.age.ms", 500);
        return KafkaOutboxPublisher.builder(config).build();
    }

    private static List<OutboxMessage> onePerBucket(String topic, String value) {
        List<OutboxMessage> batch = new ArrayList<>();
        for (int bucket = 0; bucket < BUCKETS; bucket++) {
            batch.add(message(topic, keyFor(bucket, BUCKETS), value, BUCKETS, Clock.systemUTC()));
        }
        return batch;
    }

    private static long pending(InMemoryOutboxStore store) {
        return store.pendingMetrics(Duration.ofSeconds(1)).pendingCount();
    }

    private static List<String> errorLines(ByteArrayOutputStream captured, String topic) {
        return captured.toString(StandardCharsets.UTF_8).lines()
                .filter(l -> l.contains(" ERROR ") && l.contains(topic)).toList();
    }

    @Test
    void k3_aTopicDeletedWhileTheRelayRunsIsLoggedOnceAtErrorAndItsMessagesWaitUntilItIsBack() throws Exception {
        String topic = "vanishing-" + UUID.randomUUID();
        broker.createTopic(topic, BUCKETS);
        InMemoryOutboxStore store = InMemoryOutboxStore.builder().build();
        PoisonMessageIntegrationTest.Failures failures = new PoisonMessageIntegrationTest.Failures();
        RelayOptions options = RelayOptions.builder().relayId("vanished").bucketCount(BUCKETS).batchSize(100)
                .pollInterval(Duration.ofMillis(100)).errorBackoff(Duration.ofMillis(100))
                .maxErrorBackoff(Duration.ofMillis(400)).poisonPolicy(PoisonPolicy.DEAD_LETTER).poisonMaxAttempts(1)
                .closeTimeout(Duration.ofSeconds(2)).build();
        PrintStream stderr = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        Set<UUID> afterDeletion = new HashSet<>();
        int failedBatches;
        try (KafkaOutboxPublisher publisher = publisher(); Admin admin = Admin.create(broker.adminConfig());
             OutboxRelay relay = OutboxRelay.builder(store, publisher).options(options).listener(failures).build()) {
            relay.start();
            store.enqueue(onePerBucket(topic, "before"));
            await().atMost(WAIT).until(() -> pending(store) == 0);

            admin.deleteTopics(Set.of(topic)).all().get(30, TimeUnit.SECONDS);
            await().atMost(WAIT).until(() -> !admin.listTopics().names().get(10, TimeUnit.SECONDS).contains(topic));
            for (int round = 0; round < 5; round++) { // written while the topic is gone
                List<OutboxMessage> batch = onePerBucket(topic, "after-" + round);
                batch.forEach(m -> afterDeletion.add(m.messageId()));
                store.enqueue(batch);
                Thread.sleep(300);
            }
            int before = failures.publishFailures.get();
            await().atMost(WAIT).until(() -> failures.publishFailures.get() >= before + 3 * BUCKETS);
            failedBatches = failures.publishFailures.get();

            assertThat(pending(store)).as("every message written while the topic is gone stays pending")
                    .isEqualTo(afterDeletion.size());
            assertThat(store.deadLetters().orElseThrow().deadLetters(null, 10))
                    .as("retriable: dead-letter after 1 attempt moves nothing").isEmpty();
            assertThat(failures.attempts).as("no failure is counted against a message").isEmpty();
            assertThat(errorLines(captured, topic)).as("one ERROR for %d failed batches", failedBatches)
                    .hasSize(1);

            broker.createTopic(topic, BUCKETS);
            await().atMost(WAIT).until(() -> pending(store) == 0);
        } finally {
            System.setErr(stderr);
        }

        String log = captured.toString(StandardCharsets.UTF_8);
        List<String> errors = errorLines(captured, topic);
        assertThat(errors).as(log).hasSize(1);
        assertThat(errors.get(0)).contains("topic vanished", "topic='" + topic + "'", "partitions=" + BUCKETS,
                "now=none");
        assertThat(TopicReader.readAll(broker.bootstrapServers(), topic)).extracting(TopicReader::messageId)
                .as("delivered once the topic is back").containsAll(afterDeletion);
        assertThat(failures.deadLettered).isEmpty();
        System.out.printf("topic vanished: %d failed batches while it was gone, 1 ERROR, %d messages delivered "
                + "after it was created again%n", failedBatches, afterDeletion.size());
    }

    private static List<OutboxMessage> round(String topic, String value) {
        List<OutboxMessage> batch = new ArrayList<>();
        for (int k = 0; k < KEYS; k++) {
            batch.add(message(topic, "key-" + k, value, BUCKETS, Clock.systemUTC()));
        }
        return batch;
    }

    private static int enqueuedCount(List<OutboxMessage> enqueued) {
        synchronized (enqueued) {
            return enqueued.size();
        }
    }

    @Test
    void k3_aTopicDeletedAndRecreatedUnderLoadIsDeliveredToAgainWithinTenSeconds() throws Exception {
        deleteAndRecreate(true, false, BUCKETS);
    }

    @Test
    void k3_aTopicDeletedAndRecreatedWhileTheRelayIdlesIsDeliveredToAgainWithinTenSeconds() throws Exception {
        deleteAndRecreate(false, false, BUCKETS);
    }

    @Test
    void k7_inTheTransactionalModeATopicDeletedAndRecreatedUnderLoadIsDeliveredToAgainWithinTenSeconds()
            throws Exception {
        deleteAndRecreate(true, true, BUCKETS);
    }

    /**
     * Re-created with fewer partitions, records in flight to the lost ones would hold their
     * transactions until {@code delivery.timeout.ms}: the transactional publisher replaces the
     * producers with a transaction in flight, as the idempotent one replaces its producer.
     */
    @Test
    void k7_inTheTransactionalModeATopicRecreatedWithFewerPartitionsUnderLoadIsDeliveredToAgainWithinTenSeconds()
            throws Exception {
        deleteAndRecreate(true, true, BUCKETS / 2);
    }

    @Test
    void k3_aTopicRecreatedWithFewerPartitionsUnderLoadIsDeliveredToAgainWithinTenSeconds() throws Exception {
        deleteAndRecreate(true, false, BUCKETS / 2);
    }

    /**
     * With load, a writer enqueues a round every 20 ms from before the deletion (the relay has
     * published some of them) until after the re-creation (the relay has published some more), and
     * the re-creation waits until ten more rounds were written while the topic is gone; without
     * load, one round is enqueued right after the re-creation. Resuming is the last of the
     * buckets' first acknowledgements after it: every bucket delivers again.
     */
    private void deleteAndRecreate(boolean load, boolean transactions, int partitionsAfter) throws Exception {
        String topic = "recreated-" + UUID.randomUUID();
        broker.createTopic(topic, BUCKETS);
        InMemoryOutboxStore store = InMemoryOutboxStore.builder().build();
        RelayOptions options = RelayOptions.builder().relayId("recreated").bucketCount(BUCKETS).batchSize(100)
                .pollInterval(Duration.ofMillis(100)).errorBackoff(Duration.ofMillis(100))
                .maxErrorBackoff(Duration.ofMillis(500)).closeTimeout(Duration.ofSeconds(5)).build();
        Map<String, Object> config = broker.adminConfig();
        config.put("max.block.ms", 10_000); // the standalone relay's default; delivery.timeout.ms stays 120 s
        if (transactions) {
            config.put("transactions", "true");
            config.put("transactional.id.prefix", "recreated-" + UUID.randomUUID());
        }
        List<OutboxMessage> enqueued = new ArrayList<>();
        AtomicLong published = new AtomicLong();
        AtomicLong recreated = new AtomicLong(Long.MAX_VALUE);
        Map<Integer, Long> firstAckAfterRecreation = new ConcurrentHashMap<>(); // by bucket
        Set<Integer> buckets = new HashSet<>();
        round(topic, "").forEach(m -> buckets.add(m.bucket())); // each round has messages of these buckets
        RelayListener listener = new RelayListener() {
            @Override
            public void onPublished(int bucket, int count) {
                long now = System.nanoTime();
                if (now - recreated.get() > 0) {
                    firstAckAfterRecreation.putIfAbsent(bucket, now);
                }
                published.addAndGet(count);
            }
        };
        int gone;
        try (KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(config).build();
             Admin admin = Admin.create(broker.adminConfig());
             OutboxRelay relay = OutboxRelay.builder(store, publisher).options(options).listener(listener).build()) {
            relay.start();
            for (int r = 0; r < 3; r++) {
                List<OutboxMessage> batch = round(topic, "before-" + r);
                enqueued.addAll(batch);
                store.enqueue(batch);
            }
            await().atMost(Duration.ofSeconds(60)).until(() -> pending(store) == 0);

            // A writer keeps enqueuing, so batches are in flight when the topic goes and when it comes back.
            AtomicBoolean writing = new AtomicBoolean(load);
            Thread writer = new Thread(() -> {
                for (int r = 0; writing.get(); r++) {
                    List<OutboxMessage> batch = round(topic, "load-" + r);
                    synchronized (enqueued) {
                        enqueued.addAll(batch);
                    }
                    store.enqueue(batch);
                    relay.wakeUp();
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20)); // the writer's pace
                }
            });
            writer.start();
            long before = published.get();
            await().atMost(Duration.ofSeconds(60)).until(() -> !load || published.get() >= before + 4 * KEYS);
            admin.deleteTopics(Set.of(topic)).all().get(30, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(20))
                    .until(() -> !admin.listTopics().names().get(10, TimeUnit.SECONDS).contains(topic));
            int goneAt = enqueuedCount(enqueued); // from here on, every message can only reach the re-created topic
            gone = goneAt;
            // Under load, records sent to the deleted topic wait in the producer (retried until delivery.timeout.ms).
            await().atMost(Duration.ofSeconds(60)).until(() -> !load || enqueuedCount(enqueued) >= goneAt + 10 * KEYS);

            broker.createTopic(topic, partitionsAfter);
            recreated.set(System.nanoTime());
            if (!load) {
                List<OutboxMessage> batch = round(topic, "after");
                synchronized (enqueued) {
                    enqueued.addAll(batch);
                }
                store.enqueue(batch);
                relay.wakeUp();
            }
            await().atMost(Duration.ofSeconds(180)).until(() -> firstAckAfterRecreation.keySet().containsAll(buckets));
            long resumed = published.get();
            await().atMost(Duration.ofSeconds(60)).until(() -> !load || published.get() >= resumed + 4 * KEYS);
            writing.set(false);
            writer.join();
            await().atMost(Duration.ofSeconds(180)).until(() -> pending(store) == 0);
        }
        // Resuming is each bucket's first acknowledgement after the re-creation: the last of them.
        long resumeMillis = (firstAckAfterRecreation.values().stream().mapToLong(Long::longValue).max().orElseThrow()
                - recreated.get()) / 1_000_000;
        System.out.printf("load=%s transactions=%s partitions=%d->%d: delivery resumed %d ms after the topic was "
                + "re-created%n", load, transactions, BUCKETS, partitionsAfter, resumeMillis);

        List<ConsumerRecord<byte[], byte[]>> records = TopicReader.readAll(broker.bootstrapServers(), topic,
                transactions ? "read_committed" : "read_uncommitted");
        Map<String, List<UUID>> firstDeliveries = new LinkedHashMap<>();
        Set<UUID> seen = new LinkedHashSet<>();
        for (ConsumerRecord<byte[], byte[]> r : records) {
            UUID id = TopicReader.messageId(r);
            if (seen.add(id)) {
                firstDeliveries.computeIfAbsent(new String(r.key(), StandardCharsets.UTF_8), k -> new ArrayList<>())
                        .add(id);
            }
        }
        List<OutboxMessage> sinceDeletion = enqueued.subList(gone, enqueued.size());
        assertThat(seen).as("nothing written since the deletion is lost")
                .containsAll(sinceDeletion.stream().map(OutboxMessage::messageId).toList());
        Map<String, List<UUID>> expected = new LinkedHashMap<>(); // enqueue order of what reached the new topic
        for (OutboxMessage m : enqueued.stream().filter(m -> seen.contains(m.messageId())).toList()) {
            expected.computeIfAbsent(new String(m.key(), StandardCharsets.UTF_8), k -> new ArrayList<>())
                    .add(m.messageId());
        }
        assertThat(firstDeliveries).as("per key, first deliveries in enqueue order").isEqualTo(expected);
        assertThat(resumeMillis).as("delivery resumes within %s of the re-creation", RESUME_BOUND)
                .isLessThanOrEqualTo(RESUME_BOUND.toMillis());
    }

    /**
     * K3: a topic deleted and re-created with fewer partitions while the only batch waits for
     * acknowledgements of records to the lost partitions, so no batch begins that would see the new
     * count. The publisher asks the cluster while the batch waits and replaces its producers: the
     * batch fails, retriably, within seconds instead of at {@code delivery.timeout.ms} (120 s), and
     * sent again it is delivered to the new partitions.
     */
    @ParameterizedTest(name = "transactional={0}")
    @ValueSource(booleans = {false, true})
    void k3_aBatchWaitingOnPartitionsLostToARecreationFailsWithinSecondsThoughNoBatchBeginsAfterIt(
            boolean transactional) throws Exception {
        String topic = "lost-while-waiting-" + UUID.randomUUID();
        broker.createTopic(topic, BUCKETS);
        Map<String, Object> config = broker.adminConfig();
        config.put("max.block.ms", 10_000); // delivery.timeout.ms stays 120 s
        if (transactional) {
            config.put("transactions", "true");
            config.put("transactional.id.prefix", "lost-" + UUID.randomUUID());
        }
        // One bucket's messages (a bucket count of 1), one per partition of the topic as first created.
        List<OutboxMessage> opening = new ArrayList<>();
        for (int i = 0; opening.size() < BUCKETS; i++) {
            String key = "lost-" + i;
            if (Utils.toPositive(Utils.murmur2(key.getBytes(StandardCharsets.UTF_8))) % BUCKETS == opening.size()) {
                opening.add(message(topic, key, "opening", 1, Clock.systemUTC()));
            }
        }
        List<OutboxMessage> waiting = opening.subList(2, BUCKETS).stream() // partitions 2 and 3
                .map(m -> message(topic, new String(m.key(), StandardCharsets.UTF_8), "waiting", 1,
                        Clock.systemUTC())).toList();
        try (KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(config).build();
             Admin admin = Admin.create(broker.adminConfig())) {
            publisher.bucketsAcquired(Set.of(0));
            for (OutboxMessage m : opening) { // each partition opened (K8) and in the producers' metadata
                assertThat(publisher.publish(List.of(m)).get(30, TimeUnit.SECONDS).failed()).isFalse();
            }
            admin.deleteTopics(Set.of(topic)).all().get(30, TimeUnit.SECONDS);
            await().atMost(WAIT).until(() -> !admin.listTopics().names().get(10, TimeUnit.SECONDS).contains(topic));
            CompletableFuture<PublishResult> result = CompletableFuture.supplyAsync(() -> publisher.publish(waiting))
                    .thenCompose(f -> f); // the transactional mode publishes on the calling thread
            broker.createTopic(topic, BUCKETS / 2);
            long recreated = System.nanoTime();

            PublishResult failed = await().atMost(Duration.ofSeconds(10)).until(() -> result.getNow(null),
                    r -> r != null);
            System.out.printf("transactional=%s: the waiting batch failed %d ms after the re-creation: %s%n",
                    transactional, (System.nanoTime() - recreated) / 1_000_000, failed.firstError());
            assertThat(failed.acknowledged()).isZero();
            assertThat(FailureKind.classify(failed.firstError())).as("%s", failed.firstError())
                    .isEqualTo(FailureKind.RETRIABLE);

            PublishResult again = publisher.publish(waiting).get(60, TimeUnit.SECONDS);
            assertThat(again.failed()).as("%s", again.firstError()).isFalse();
            assertThat(again.acknowledged()).isEqualTo(waiting.size());
        }
        Set<UUID> delivered = new HashSet<>();
        TopicReader.readAll(broker.bootstrapServers(), topic, transactional ? "read_committed" : "read_uncommitted")
                .forEach(r -> delivered.add(TopicReader.messageId(r)));
        assertThat(delivered).as("the waiting batch, sent again, on the re-created topic")
                .containsAll(waiting.stream().map(OutboxMessage::messageId).toList());
    }
}
