package io.outbox.relay;

import static io.outbox.relay.TestMessages.message;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.OutboxMessage;
import io.outbox.embedded.EmbeddedKafkaBroker;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.tck.InMemoryOutboxStore;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * With the broker's auto-creation on (Kafka's default), a topic of 4 partitions deleted under load
 * comes back at once with {@code num.partitions} (1), created by the producer's own metadata
 * requests. Records in flight to partitions 1-3 would wait in the producer until
 * {@code delivery.timeout.ms} (120 s by default; about 115 s measured before); the publisher
 * replaces its producer when a topic loses partitions, so every message is delivered within
 * seconds of the re-creation, nothing lost.
 */
class TopicAutoRecreatedIntegrationTest {

    private static final int BUCKETS = 4;
    private static final int KEYS = 8;
    private static final Duration BOUND = Duration.ofSeconds(10);
    private static EmbeddedKafkaBroker broker;

    @BeforeAll
    static void startBroker() {
        broker = EmbeddedKafkaBroker.builder().brokerProperty("auto.create.topics.enable", "true")
                .brokerProperty("num.partitions", "1").start();
    }

    @AfterAll
    static void stopBroker() {
        broker.close();
    }

    private static long pending(InMemoryOutboxStore store) {
        return store.pendingMetrics(Duration.ofSeconds(1)).pendingCount();
    }

    @Test
    void k3_aTopicAutoRecreatedWithFewerPartitionsUnderLoadIsDrainedWithinTenSeconds() throws Exception {
        String topic = "auto-recreated-" + UUID.randomUUID();
        broker.createTopic(topic, BUCKETS);
        InMemoryOutboxStore store = InMemoryOutboxStore.builder().build();
        RelayOptions options = RelayOptions.builder().relayId("auto-recreated").bucketCount(BUCKETS).batchSize(100)
                .pollInterval(Duration.ofMillis(100)).errorBackoff(Duration.ofMillis(100))
                .maxErrorBackoff(Duration.ofMillis(500)).closeTimeout(Duration.ofSeconds(5)).build();
        Map<String, Object> config = broker.adminConfig();
        config.put("max.block.ms", 10_000); // the standalone relay's default; delivery.timeout.ms stays 120 s
        List<UUID> enqueued = new ArrayList<>();
        long drainedMillis;
        int gone;
        try (KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(config).build();
             Admin admin = Admin.create(broker.adminConfig());
             OutboxRelay relay = new OutboxRelay(store, publisher, options)) {
            relay.start();
            AtomicBoolean writing = new AtomicBoolean(true);
            Thread writer = new Thread(() -> {
                for (int r = 0; writing.get(); r++) {
                    List<OutboxMessage> batch = new ArrayList<>();
                    for (int k = 0; k < KEYS; k++) {
                        batch.add(message(topic, "key-" + k, "load-" + r, BUCKETS, Clock.systemUTC()));
                    }
                    synchronized (enqueued) {
                        batch.forEach(m -> enqueued.add(m.messageId()));
                    }
                    store.enqueue(batch);
                    relay.wakeUp();
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20)); // the writer's pace
                }
            });
            writer.start();
            await().atMost(Duration.ofSeconds(60)).until(() -> TopicReader.readAll(broker.bootstrapServers(), topic)
                    .size() >= 4 * KEYS);
            admin.deleteTopics(Set.of(topic)).all().get(30, TimeUnit.SECONDS);
            synchronized (enqueued) {
                gone = enqueued.size();
            }
            await().atMost(Duration.ofSeconds(60)).until(() -> admin.listTopics().names().get(10, TimeUnit.SECONDS)
                    .contains(topic) && admin.describeTopics(Set.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS)
                    .get(topic).partitions().size() == 1);
            long recreated = System.nanoTime();
            writing.set(false);
            writer.join();
            await().atMost(Duration.ofSeconds(180)).until(() -> pending(store) == 0);
            drainedMillis = (System.nanoTime() - recreated) / 1_000_000;
        }
        System.out.printf("auto-created again with 1 partition: every message delivered %d ms after%n", drainedMillis);
        Set<UUID> delivered = new HashSet<>();
        TopicReader.readAll(broker.bootstrapServers(), topic).forEach(r -> delivered.add(TopicReader.messageId(r)));
        assertThat(delivered).as("nothing written after the deletion is lost").containsAll(enqueued.subList(gone,
                enqueued.size()));
        assertThat(drainedMillis).as("drained within %s of the re-creation", BOUND).isLessThanOrEqualTo(BOUND.toMillis());
    }
}
