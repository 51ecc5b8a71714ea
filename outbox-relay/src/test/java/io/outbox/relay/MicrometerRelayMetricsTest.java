package io.outbox.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.outbox.tck.InMemoryOutboxStore;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class MicrometerRelayMetricsTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final MutableClock clock = new MutableClock();
    private final InMemoryOutboxStore store = InMemoryOutboxStore.builder().clock(clock).build();

    @Test
    void countsPublishedMessagesFailuresOwnedBucketsAndTheBacklog() {
        store.enqueue(TestMessages.messages("orders", "k", 5, 4, clock));
        ScriptedPublisher publisher = new ScriptedPublisher();
        boolean[] failOnce = {true};
        publisher.answer(batch -> {
            if (failOnce[0]) {
                failOnce[0] = false;
                return PublishResult.failure(2, new RuntimeException("refused"));
            }
            return PublishResult.success(batch.size());
        });
        RelayOptions options = RelayOptions.builder().relayId("metrics").bucketCount(4)
                .pollInterval(Duration.ofMillis(50)).errorBackoff(Duration.ofMillis(10)).build();

        try (MicrometerRelayMetrics metrics = new MicrometerRelayMetrics(registry, List.of(Tag.of("outbox", "orders")),
                store, Duration.ofMillis(50));
             OutboxRelay relay = OutboxRelay.builder(store, publisher).options(options).clock(clock).listener(metrics)
                     .build()) {
            relay.start();

            await().atMost(Duration.ofSeconds(30)).until(() -> registry.get("outbox.relay.published")
                    .tag("outbox", "orders").counter().count() == 5);
            assertThat(registry.get("outbox.relay.publish.failures").tag("type", "retriable").counter().count())
                    .isEqualTo(1);
            assertThat(registry.get("outbox.relay.owned.buckets").gauge().value()).isEqualTo(4);
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> registry.get("outbox.relay.pending.messages").gauge().value() == 0);
            assertThat(registry.get("outbox.relay.pending.oldest.age").gauge().value()).isZero();
        }
        assertThat(registry.getMeters()).as("close removes the meters").isEmpty();
    }

    /**
     * R12 metrics: message-specific failures by cause class, stalled buckets and the failing head's
     * attempts while it blocks, then the dead-lettered count once the policy gives up on it.
     */
    @Test
    void r12_countsMessageFailuresByCauseStalledBucketsHeadAttemptsAndDeadLetters() {
        List<io.outbox.OutboxMessage> rows = TestMessages.messages("orders", "k", 3, 4, clock);
        store.enqueue(rows);
        java.util.UUID poison = rows.get(0).messageId();
        ScriptedPublisher publisher = new ScriptedPublisher();
        publisher.answer(batch -> batch.get(0).messageId().equals(poison)
                ? PublishResult.failure(0, new org.apache.kafka.common.errors.RecordTooLargeException("too large"))
                : PublishResult.success(batch.size()));
        RelayOptions options = RelayOptions.builder().relayId("metrics-poison").bucketCount(4)
                .pollInterval(Duration.ofMillis(50)).errorBackoff(Duration.ofMillis(10))
                .maxErrorBackoff(Duration.ofMillis(20)).poisonPolicy(PoisonPolicy.DEAD_LETTER).poisonMaxAttempts(40)
                .build();

        try (MicrometerRelayMetrics metrics = new MicrometerRelayMetrics(registry, List.of(Tag.of("outbox", "orders")));
             OutboxRelay relay = OutboxRelay.builder(store, publisher).options(options).clock(clock).listener(metrics)
                     .build()) {
            relay.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> registry.get("outbox.relay.failing.head.attempts")
                    .gauge().value() >= 3);
            assertThat(registry.get("outbox.relay.stalled.buckets").gauge().value()).isEqualTo(1);
            assertThat(registry.get("outbox.relay.message.failures")
                    .tag("cause", "org.apache.kafka.common.errors.RecordTooLargeException").counter().count())
                    .isGreaterThanOrEqualTo(3);
            assertThat(registry.get("outbox.relay.dead.lettered").counter().count()).isZero();
            await().atMost(Duration.ofSeconds(30)).until(() -> registry.get("outbox.relay.dead.lettered")
                    .counter().count() == 1);
            assertThat(registry.get("outbox.relay.stalled.buckets").gauge().value()).isZero();
            assertThat(registry.get("outbox.relay.failing.head.attempts").gauge().value()).isZero();
            await().atMost(Duration.ofSeconds(30)).until(() -> registry.get("outbox.relay.published")
                    .counter().count() == 2);
            assertThat(store.deadLetters().orElseThrow().deadLetter(poison)).isPresent();
        }
    }
}
