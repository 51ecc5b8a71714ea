package io.outbox.relay;

import static io.outbox.relay.TestMessages.message;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.tck.InMemoryOutboxStore;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.junit.jupiter.api.Test;

/**
 * {@link OutboxRelay#startSettled()} (rule R13), what the Spring Boot starter's start waits for: it
 * completes after the first lease round once nothing is pending or the publisher answered a first
 * publish (an acknowledgement, or a failure the relay retries), stays pending while a publish has
 * no answer, and never completes when a refusal no retry heals stops the relay first.
 */
class StartSettledTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final int BUCKETS = 2;

    private static RelayOptions options() {
        return RelayOptions.builder().relayId("settled").bucketCount(BUCKETS).pollInterval(Duration.ofMillis(100))
                .errorBackoff(Duration.ofMillis(100)).maxErrorBackoff(Duration.ofMillis(200))
                .closeTimeout(Duration.ofSeconds(1)).build();
    }

    private static InMemoryOutboxStore storeWithOnePending() {
        InMemoryOutboxStore store = InMemoryOutboxStore.builder().build();
        store.enqueue(List.of(message("t", "k", "v", BUCKETS, Clock.systemUTC())));
        return store;
    }

    @Test
    void r13_withNothingPendingTheStartSettlesAfterTheFirstLeaseRound() {
        AtomicInteger publishes = new AtomicInteger();
        OutboxPublisher publisher = batch -> {
            publishes.incrementAndGet();
            return CompletableFuture.completedFuture(PublishResult.success(batch.size()));
        };
        try (OutboxRelay relay = new OutboxRelay(InMemoryOutboxStore.builder().build(), publisher, options())) {
            relay.start();
            await().atMost(WAIT).until(() -> relay.startSettled().isDone());
            assertThat(relay.firstLeaseRound()).isDone();
            assertThat(publishes).hasValue(0);
        }
    }

    @Test
    void r13_withAMessagePendingTheStartSettlesAtTheFirstAcknowledgementNotBefore() {
        CompletableFuture<PublishResult> answer = new CompletableFuture<>();
        OutboxPublisher publisher = batch -> answer;
        try (OutboxRelay relay = new OutboxRelay(storeWithOnePending(), publisher, options())) {
            relay.start();
            await().atMost(WAIT).until(() -> relay.firstLeaseRound().isDone());
            await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(11))
                    .until(() -> !relay.startSettled().isDone());

            answer.complete(PublishResult.success(1));
            await().atMost(WAIT).until(() -> relay.startSettled().isDone());
        }
    }

    @Test
    void r13_aFailureTheRelayRetriesSettlesTheStart() {
        OutboxPublisher publisher = batch -> CompletableFuture.completedFuture(PublishResult.failure(0,
                new org.apache.kafka.common.errors.TimeoutException("no answer")));
        try (OutboxRelay relay = new OutboxRelay(storeWithOnePending(), publisher, options())) {
            relay.start();
            await().atMost(WAIT).until(() -> relay.startSettled().isDone());
            assertThat(relay.isRunning()).isTrue();
        }
    }

    @Test
    void r13_aRefusalBeforeTheFirstAcknowledgementStopsTheRelayAndNeverSettlesTheStart() {
        OutboxPublisher publisher = batch -> CompletableFuture.completedFuture(PublishResult.failure(0,
                new TopicAuthorizationException("Not authorized to access topics: [t]")));
        try (OutboxRelay relay = new OutboxRelay(storeWithOnePending(), publisher, options())) {
            relay.start();
            await().atMost(WAIT).until(() -> relay.termination().isDone());
            assertThat(relay.termination()).isCompletedExceptionally();
            assertThat(relay.startSettled()).isNotDone();
        }
    }
}
