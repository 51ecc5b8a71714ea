package io.outbox.relay;

import static io.outbox.relay.TestMessages.keyFor;
import static io.outbox.relay.TestMessages.message;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.OutboxMessage;
import io.outbox.embedded.EmbeddedKafkaBroker;
import io.outbox.tck.InMemoryOutboxStore;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A topic deleted while a relay runs, on a real broker that does not create topics
 * ({@code auto.create.topics.enable=false}, so the topic stays gone): the publisher logs one ERROR
 * naming the topic and its last partition count however many batches fail, the failures are
 * retriable (R12: never counted against a message, so even {@code dead-letter} after one attempt
 * moves nothing), the messages stay pending, and once the topic is created again they are
 * delivered. With the broker's auto-creation on, the producer re-creates the topic instead; that
 * case is {@link TopicProblemsIntegrationTest}'s partition count change.
 */
class TopicVanishedIntegrationTest {

    private static final int BUCKETS = 4;
    private static final Duration WAIT = Duration.ofSeconds(60);
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
            assertThat(store.deadLetters(null, 10)).as("retriable: dead-letter after 1 attempt moves nothing")
                    .isEmpty();
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
}
