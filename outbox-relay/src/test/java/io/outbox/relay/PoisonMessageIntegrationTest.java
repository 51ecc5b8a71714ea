package io.outbox.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.OutboxMessage;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.spi.DeadLetter;
import io.outbox.tck.InMemoryOutboxStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Rule R12 against a real in-process broker: a message Kafka refuses for good is counted against
 * that message only, its bucket sends it alone, and the policy decides between waiting and moving
 * it to the dead letters (C4); a broker outage is never counted.
 */
class PoisonMessageIntegrationTest {

    private static final int BUCKETS = 4;
    private static final Duration WAIT = Duration.ofSeconds(120);
    /** Row 1 of seed 000's case: larger than the producer's max.request.size below. */
    private static final int LARGE = 20_000;

    @RegisterExtension
    static final KafkaBroker KAFKA = new KafkaBroker();

    /** Counts how often each message was handed to the broker. */
    static final class RecordingPublisher implements OutboxPublisher {
        final OutboxPublisher delegate;
        final Map<UUID, AtomicInteger> sends = new ConcurrentHashMap<>();

        RecordingPublisher(OutboxPublisher delegate) {
            this.delegate = delegate;
        }

        @Override
        public CompletableFuture<PublishResult> publish(List<OutboxMessage> batch) {
            batch.forEach(m -> sends.computeIfAbsent(m.messageId(), id -> new AtomicInteger()).incrementAndGet());
            return delegate.publish(batch);
        }

        int sends(OutboxMessage m) {
            AtomicInteger n = sends.get(m.messageId());
            return n == null ? 0 : n.get();
        }

        @Override
        public void close() {
            delegate.close();
        }
    }

    /** Records the relay's message-specific failures. */
    static final class Failures implements RelayListener {
        final List<Integer> attempts = new CopyOnWriteArrayList<>();
        final List<Throwable> errors = new CopyOnWriteArrayList<>();
        final List<UUID> deadLettered = new CopyOnWriteArrayList<>();
        final AtomicInteger publishFailures = new AtomicInteger();

        @Override
        public void onPublishFailed(int bucket, int acknowledged, Throwable error) {
            publishFailures.incrementAndGet();
        }

        @Override
        public void onMessageFailed(int bucket, UUID messageId, int attempt, Throwable error) {
            attempts.add(attempt);
            errors.add(error);
        }

        @Override
        public void onDeadLettered(int bucket, UUID messageId, io.outbox.spi.DeadLetterFailure failure) {
            deadLettered.add(messageId);
        }

        int maxAttempts() {
            return attempts.stream().mapToInt(Integer::intValue).max().orElse(0);
        }
    }

    private static KafkaOutboxPublisher publisher(int maxRequestSize) {
        Map<String, Object> config = new HashMap<>();
        config.put("bootstrap.servers", KAFKA.broker().bootstrapServers());
        config.put("max.request.size", maxRequestSize);
        config.put("max.block.ms", 1_000);
        config.put("request.timeout.ms", 1_500);
        config.put("delivery.timeout.ms", 4_000);
        config.put("reconnect.backoff.max.ms", 500);
        return KafkaOutboxPublisher.builder(config).build();
    }

    private static RelayOptions options(String relayId, PoisonPolicy policy, int maxAttempts) {
        return RelayOptions.builder().relayId(relayId).bucketCount(BUCKETS).batchSize(100)
                .pollInterval(Duration.ofMillis(100)).errorBackoff(Duration.ofMillis(100))
                .maxErrorBackoff(Duration.ofMillis(400)).poisonPolicy(policy).poisonMaxAttempts(maxAttempts).build();
    }

    /** Rows 1, 2, 3 of one key; row 1 is larger than the producer accepts. */
    private static List<OutboxMessage> seed000(String topic) {
        StringSerializer s = new StringSerializer();
        return List.of(OutboxMessage.create(topic, "order-7", "x".repeat(LARGE), s, s, BUCKETS),
                OutboxMessage.create(topic, "order-7", "row 2", s, s, BUCKETS),
                OutboxMessage.create(topic, "order-7", "row 3", s, s, BUCKETS));
    }

    private static List<UUID> receivedIds(String topic) {
        return TopicReader.readAll(KAFKA.broker().bootstrapServers(), topic).stream()
                .map(TopicReader::messageId).toList();
    }

    private static long pending(InMemoryOutboxStore store) {
        return store.pendingMetrics(Duration.ofSeconds(1)).pendingCount();
    }

    @Test
    void r12_blockKeepsTheRowsCountsAttemptsAndDoesNotResendTheFollowers() {
        String topic = "poison-block";
        KAFKA.broker().createTopic(topic, BUCKETS);
        InMemoryOutboxStore store = InMemoryOutboxStore.builder().build();
        List<OutboxMessage> rows = seed000(topic);
        store.enqueue(rows);
        Failures failures = new Failures();

        try (RecordingPublisher publisher = new RecordingPublisher(publisher(10_000));
             OutboxRelay relay = OutboxRelay.builder(store, publisher)
                     .options(options("poison-block", PoisonPolicy.BLOCK, 3)).listener(failures).build()) {
            relay.start();
            await().atMost(WAIT).until(() -> failures.maxAttempts() >= 6);
            assertThat(pending(store)).as("block: every row stays pending").isEqualTo(3);
            assertThat(store.deadLetters().orElseThrow().deadLetters(null, 10)).as("block moves nothing").isEmpty();
            assertThat(failures.errors).allSatisfy(e -> assertThat(e).isInstanceOf(RecordTooLargeException.class));
            assertThat(failures.attempts).as("attempts counted one by one").startsWith(1, 2, 3, 4, 5, 6);
            assertThat(publisher.sends(rows.get(0))).as("row 1 sent per attempt").isGreaterThanOrEqualTo(6);
            assertThat(publisher.sends(rows.get(1))).as("row 2: only with the first batch").isEqualTo(1);
            assertThat(publisher.sends(rows.get(2))).as("row 3: only with the first batch").isEqualTo(1);
            System.out.printf("R12 block: row 1 sent %d times, rows 2 and 3 sent %d and %d times, attempts %d%n",
                    publisher.sends(rows.get(0)), publisher.sends(rows.get(1)), publisher.sends(rows.get(2)),
                    failures.maxAttempts());
        }
    }

    @Test
    void r12_deadLetterMovesRowOneAfterThreeAttemptsDeliversTheFollowersAndReplayDeliversIt() {
        String topic = "poison-dead-letter";
        KAFKA.broker().createTopic(topic, BUCKETS);
        InMemoryOutboxStore store = InMemoryOutboxStore.builder().build();
        List<OutboxMessage> rows = seed000(topic);
        store.enqueue(rows);
        Failures failures = new Failures();

        try (RecordingPublisher publisher = new RecordingPublisher(publisher(10_000));
             OutboxRelay relay = OutboxRelay.builder(store, publisher)
                     .options(options("poison-dead-letter", PoisonPolicy.DEAD_LETTER, 3)).listener(failures)
                     .build()) {
            relay.start();
            await().atMost(WAIT).until(() -> pending(store) == 0);
            assertThat(publisher.sends(rows.get(0))).as("row 1: three attempts").isEqualTo(3);
            assertThat(publisher.sends(rows.get(1))).as("row 2: at most once more").isLessThanOrEqualTo(2);
            assertThat(publisher.sends(rows.get(2))).as("row 3: at most once more").isLessThanOrEqualTo(2);
        }
        DeadLetter dead = store.deadLetters().orElseThrow().deadLetter(rows.get(0).messageId()).orElseThrow();
        assertThat(dead.failure().attempts()).isEqualTo(3);
        assertThat(dead.failure().causeClass()).isEqualTo(RecordTooLargeException.class.getName());
        assertThat(dead.failure().reason()).isNotBlank();
        assertThat(dead.failure().relayId()).isEqualTo("poison-dead-letter");
        assertThat(dead.value()).isEqualTo(rows.get(0).value());
        assertThat(failures.deadLettered).containsExactly(rows.get(0).messageId());
        List<UUID> received = receivedIds(topic);
        assertThat(received).as("the consumer gets rows 2 and 3, not row 1")
                .contains(rows.get(1).messageId(), rows.get(2).messageId())
                .doesNotContain(rows.get(0).messageId());

        // Repair (a larger max.request.size), then replay: row 1 is delivered.
        assertThat(store.deadLetters().orElseThrow().replayDeadLetter(rows.get(0).messageId())).isTrue();
        try (KafkaOutboxPublisher repaired = publisher(1_000_000);
             OutboxRelay relay = OutboxRelay.builder(store, repaired)
                     .options(options("poison-repaired", PoisonPolicy.DEAD_LETTER, 3)).build()) {
            relay.start();
            await().atMost(WAIT).until(() -> pending(store) == 0);
        }
        assertThat(receivedIds(topic)).as("after the replay").contains(rows.get(0).messageId());
        assertThat(store.deadLetters().orElseThrow().deadLetters(null, 10)).isEmpty();
    }

    @Test
    void r12_aBrokerOutageCountsNoAttemptAgainstAnyMessage() throws Exception {
        String topic = "poison-outage";
        KAFKA.broker().createTopic(topic, BUCKETS);
        InMemoryOutboxStore store = InMemoryOutboxStore.builder().build();
        StringSerializer s = new StringSerializer();
        List<UUID> ids = new ArrayList<>();
        Failures failures = new Failures();
        long outageMillis = 30_000;

        // One counted failure would dead-letter a message: none may be counted.
        try (KafkaOutboxPublisher publisher = publisher(1_000_000);
             OutboxRelay relay = OutboxRelay.builder(store, publisher)
                     .options(options("poison-outage", PoisonPolicy.DEAD_LETTER, 1)).listener(failures).build()) {
            relay.start();
            KAFKA.broker().stop();
            List<OutboxMessage> batch = new ArrayList<>();
            for (int i = 0; i < 400; i++) {
                batch.add(OutboxMessage.create(topic, "key-" + (i % 20), "value-" + i, s, s, BUCKETS));
            }
            store.enqueue(batch);
            batch.forEach(m -> ids.add(m.messageId()));
            relay.wakeUp();
            long stoppedAt = System.nanoTime();
            Thread.sleep(outageMillis);
            int failedPublishes = failures.publishFailures.get();
            KAFKA.broker().restart();
            System.out.printf("R12 outage: broker stopped %.1f s, %d failed publishes, %d message attempts counted%n",
                    (System.nanoTime() - stoppedAt) / 1e9, failedPublishes, failures.attempts.size());
            assertThat(failedPublishes).as("the outage was seen").isPositive();
            await().atMost(WAIT).until(() -> pending(store) == 0);
        }
        assertThat(failures.attempts).as("attempts counted against messages").isEmpty();
        assertThat(store.deadLetters().orElseThrow().deadLetters(null, 10)).as("dead letters").isEmpty();
        Set<UUID> received = receivedIds(topic).stream().collect(Collectors.toSet());
        assertThat(received).containsAll(ids);
    }
}
