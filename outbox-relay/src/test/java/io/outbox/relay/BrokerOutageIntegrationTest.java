package io.outbox.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.OutboxMessage;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.tck.InMemoryOutboxStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The relay keeps its promise while the broker is away: nothing lost, publishing resumes (R3, R7). */
class BrokerOutageIntegrationTest {

    private static final int BUCKETS = 4;
    private static final Duration WAIT = Duration.ofSeconds(120);
    @RegisterExtension
    static final KafkaBroker KAFKA = new KafkaBroker();

    /** Short timeouts so that an outage turns into failed publishes within seconds. */
    private static KafkaOutboxPublisher publisher() {
        return KafkaOutboxPublisher.builder(Map.of("bootstrap.servers", KAFKA.broker().bootstrapServers(),
                "max.block.ms", 1_000, "request.timeout.ms", 1_500, "delivery.timeout.ms", 4_000,
                "reconnect.backoff.max.ms", 500)).build();
    }

    private static RelayOptions options(String relayId) {
        return RelayOptions.builder().relayId(relayId).bucketCount(BUCKETS).batchSize(100)
                .pollInterval(Duration.ofMillis(100)).errorBackoff(Duration.ofMillis(200))
                .maxErrorBackoff(Duration.ofSeconds(1)).build();
    }

    private static List<UUID> enqueue(InMemoryOutboxStore store, String topic, int from, int to) {
        StringSerializer s = new StringSerializer();
        List<OutboxMessage> batch = new ArrayList<>();
        for (int i = from; i < to; i++) {
            batch.add(OutboxMessage.create(topic, "key-" + (i % 40), "value-" + i, s, s, BUCKETS));
        }
        store.enqueue(batch);
        return batch.stream().map(OutboxMessage::messageId).toList();
    }

    private static long pending(InMemoryOutboxStore store) {
        return store.pendingMetrics(Duration.ofSeconds(1)).pendingCount();
    }

    private static Set<UUID> received(String topic) {
        Set<UUID> ids = new HashSet<>();
        TopicReader.readAll(KAFKA.broker().bootstrapServers(), topic).forEach(r -> ids.add(TopicReader.messageId(r)));
        return ids;
    }

    @Test
    void r7_aBrokerThatIsDownAtStartUpIsRetriedUntilItIsBack() {
        String topic = "down-at-start";
        KAFKA.broker().createTopic(topic, BUCKETS);
        InMemoryOutboxStore store = InMemoryOutboxStore.builder().build();
        List<UUID> ids = enqueue(store, topic, 0, 200);
        AtomicInteger failures = new AtomicInteger();
        KAFKA.broker().stop();

        try (KafkaOutboxPublisher publisher = publisher();
             OutboxRelay relay = OutboxRelay.builder(store, publisher).options(options("down-at-start"))
                     .listener(failureCounter(failures)).build()) {
            relay.start();
            await().atMost(WAIT).until(() -> failures.get() >= 2);
            assertThat(relay.isRunning()).isTrue();
            assertThat(pending(store)).isEqualTo(ids.size());

            KAFKA.broker().restart();
            await().atMost(WAIT).until(() -> pending(store) == 0);
        }

        assertThat(received(topic)).containsAll(ids);
    }

    @Test
    void r3_aBrokerStoppedMidRunAndRestartedLosesNothingAndPublishingResumes() {
        String topic = "restarted";
        KAFKA.broker().createTopic(topic, BUCKETS);
        InMemoryOutboxStore store = InMemoryOutboxStore.builder().build();
        AtomicInteger failures = new AtomicInteger();
        List<UUID> ids = new ArrayList<>();

        try (KafkaOutboxPublisher publisher = publisher();
             OutboxRelay relay = OutboxRelay.builder(store, publisher).options(options("restarted"))
                     .listener(failureCounter(failures)).build()) {
            relay.start();
            ids.addAll(enqueue(store, topic, 0, 1_000));
            await().atMost(WAIT).until(() -> pending(store) == 0);

            KAFKA.broker().stop();
            ids.addAll(enqueue(store, topic, 1_000, 2_000));
            relay.wakeUp();
            await().atMost(WAIT).until(() -> failures.get() >= 1);
            ids.addAll(enqueue(store, topic, 2_000, 3_000));
            assertThat(pending(store)).isPositive();

            KAFKA.broker().restart();
            ids.addAll(enqueue(store, topic, 3_000, 4_000));
            relay.wakeUp();
            await().atMost(WAIT).until(() -> pending(store) == 0);
            assertThat(relay.isRunning()).isTrue();
        }

        assertThat(received(topic)).containsAll(ids);
    }

    private static RelayListener failureCounter(AtomicInteger failures) {
        return new RelayListener() {
            @Override
            public void onPublishFailed(int bucket, int acknowledged, Throwable error) {
                failures.incrementAndGet();
            }
        };
    }
}
