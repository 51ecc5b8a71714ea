package io.outbox.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.OutboxMessage;
import io.outbox.spi.DeadLetter;
import io.outbox.spi.DeadLetterFailure;
import io.outbox.spi.DeadLetters;
import io.outbox.spi.HeadFailure;
import io.outbox.spi.support.StoredMessages;
import io.outbox.tck.InMemoryOutboxStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * Rule R12 with a store that keeps failing heads' records and dead letters (capability C4): the
 * count of a head's failures survives a relay's restart and a takeover, and a move refused
 * because another dead letter holds the message id keeps that bucket waiting without holding up
 * the others or backing off the loop.
 */
class PoisonStoreRecordsTest {

    private static final int BUCKETS = 4;
    private static final Duration WAIT = Duration.ofSeconds(30);

    /** Fails the messages it is told to with RecordTooLargeException, acknowledges the rest. */
    private static ScriptedPublisher refusing(Set<UUID> refused) {
        return new ScriptedPublisher().answer(batch -> {
            for (int i = 0; i < batch.size(); i++) {
                if (refused.contains(batch.get(i).messageId())) {
                    return PublishResult.failure(i, new RecordTooLargeException("The message is 2000000 bytes"));
                }
            }
            return PublishResult.success(batch.size());
        });
    }

    /** Records the relay's message-specific failures and store errors. */
    static final class Failures implements RelayListener {
        final Map<UUID, List<Integer>> attempts = new ConcurrentHashMap<>();
        final List<UUID> deadLettered = new CopyOnWriteArrayList<>();
        final AtomicInteger storeErrors = new AtomicInteger();
        final Map<Integer, AtomicInteger> published = new ConcurrentHashMap<>();

        @Override
        public void onMessageFailed(int bucket, UUID messageId, int attempt, Throwable error) {
            attempts.computeIfAbsent(messageId, id -> new CopyOnWriteArrayList<>()).add(attempt);
        }

        @Override
        public void onDeadLettered(int bucket, UUID messageId, DeadLetterFailure failure) {
            deadLettered.add(messageId);
        }

        @Override
        public void onStoreError(Throwable error) {
            storeErrors.incrementAndGet();
        }

        @Override
        public void onPublished(int bucket, int count) {
            published.computeIfAbsent(bucket, b -> new AtomicInteger()).addAndGet(count);
        }

        List<Integer> of(OutboxMessage m) {
            return attempts.getOrDefault(m.messageId(), List.of());
        }
    }

    private static RelayOptions options(String relayId, PoisonPolicy policy, int maxAttempts) {
        return RelayOptions.builder().relayId(relayId).bucketCount(BUCKETS).batchSize(100)
                .pollInterval(Duration.ofMillis(50)).errorBackoff(Duration.ofMillis(20))
                .maxErrorBackoff(Duration.ofMillis(50)).poisonPolicy(policy).poisonMaxAttempts(maxAttempts).build();
    }

    private static OutboxMessage message(String key, String value) {
        StringSerializer s = new StringSerializer();
        return OutboxMessage.create("orders", key, value, s, s, BUCKETS);
    }

    @Test
    void r12_theCountOfAHeadsFailuresSurvivesARestartAndIsInTheStore() {
        InMemoryOutboxStore store = InMemoryOutboxStore.builder().build();
        OutboxMessage head = message("order-1", "too large");
        OutboxMessage behind = message("order-1", "behind");
        store.enqueue(List.of(head, behind));
        Set<UUID> refused = Set.of(head.messageId());

        Failures first = new Failures();
        try (OutboxRelay relay = OutboxRelay.builder(store, refusing(refused))
                .options(options("relay-first", PoisonPolicy.BLOCK, 5)).listener(first).build()) {
            relay.start();
            await().atMost(WAIT).until(() -> first.of(head).size() >= 3);
        }
        List<HeadFailure> stored = dead(store).headFailures(List.of(head.bucket()));
        assertThat(stored).as("the store's record after the first relay stopped").hasSize(1);
        assertThat(stored.get(0).messageId()).isEqualTo(head.messageId());
        int counted = stored.get(0).failure().attempts();
        assertThat(counted).as("the stored count: every attempt the first relay reported, or one more counted "
                + "as it stopped").isBetween(first.of(head).size(), first.of(head).size() + 1);
        assertThat(stored.get(0).failure().relayId()).isEqualTo("relay-first");
        assertThat(stored.get(0).failure().causeClass()).isEqualTo(RecordTooLargeException.class.getName());
        assertThat(stored.get(0).failure().reason()).isEqualTo("The message is 2000000 bytes");
        Instant firstFailure = stored.get(0).failure().firstFailureAt();

        // A new relay (a restart, or a peer taking the bucket over) goes on counting from the record.
        Failures second = new Failures();
        try (OutboxRelay relay = OutboxRelay.builder(store, refusing(refused))
                .options(options("relay-second", PoisonPolicy.DEAD_LETTER, counted + 2)).listener(second).build()) {
            relay.start();
            await().atMost(WAIT).until(() -> second.deadLettered.contains(head.messageId())
                    && store.pendingMetrics(Duration.ofSeconds(1)).pendingCount() == 0);
        }
        assertThat(second.of(head)).as("the second relay's attempts go on from the first's")
                .containsExactly(counted + 1, counted + 2);
        DeadLetter dead = dead(store).deadLetter(head.messageId()).orElseThrow();
        assertThat(dead.failure().attempts()).isEqualTo(counted + 2);
        assertThat(dead.failure().firstFailureAt()).as("first failure kept across the restart")
                .isEqualTo(firstFailure);
        assertThat(dead(store).headFailures(List.of(head.bucket()))).as("the record ends with the move")
                .isEmpty();
    }

    @Test
    void r12_aMoveRefusedByAnotherDeadLetterWithTheSameIdKeepsOnlyThatBucketWaiting() {
        InMemoryOutboxStore store = InMemoryOutboxStore.builder().build();
        OutboxMessage earlier = message("order-2", "the first message with this id");
        store.enqueue(List.of(earlier));
        Instant now = Instant.now();
        assertThat(dead(store).moveToDeadLetters(earlier.bucket(), earlier.messageId(),
                new DeadLetterFailure("earlier", RecordTooLargeException.class.getName(), 1, now, now, "relay-old")))
                .isTrue();
        // The application enqueues another message with the same id (and another value), which fails too.
        OutboxMessage again = StoredMessages.rebuild(earlier.messageId(), earlier.bucket(), "orders", earlier.key(),
                "another value".getBytes(StandardCharsets.UTF_8), List.of(), null, now);
        OutboxMessage behind = message("order-2", "behind");
        store.enqueue(List.of(again, behind));
        OutboxMessage elsewhere = null;
        for (int i = 0; elsewhere == null || elsewhere.bucket() == again.bucket(); i++) {
            elsewhere = message("other-" + i, "other bucket");
        }
        Set<UUID> refused = Set.of(again.messageId());
        Failures failures = new Failures();
        try (OutboxRelay relay = OutboxRelay.builder(store, refusing(refused))
                .options(options("relay-conflict", PoisonPolicy.DEAD_LETTER, 2)).listener(failures).build()) {
            relay.start();
            await().atMost(WAIT).until(() -> failures.of(again).size() >= 4);
            store.enqueue(List.of(elsewhere));
            OutboxMessage other = elsewhere;
            await().atMost(WAIT).until(() -> store.nextBatch(other.bucket(), 10).isEmpty());
            assertThat(failures.storeErrors.get()).as("the refused move is not a store failure of the loop").isZero();
            assertThat(failures.deadLettered).as("nothing moved while the other dead letter holds the id").isEmpty();
            assertThat(store.nextBatch(again.bucket(), 10)).extracting(p -> p.message().messageId())
                    .as("the bucket waits behind the message").containsExactly(again.messageId(), behind.messageId());
            assertThat(dead(store).deadLetter(earlier.messageId()).orElseThrow().value())
                    .as("the earlier dead letter").isEqualTo(earlier.value());
            HeadFailure record = dead(store).headFailures(List.of(again.bucket())).get(0);
            assertThat(record.failure().reason()).as("the stored record names the conflict")
                    .contains("exists already", "different record", "last error: The message is 2000000 bytes");

            // The operator purges the earlier dead letter: the next attempt moves the message, the bucket goes on.
            assertThat(dead(store).purgeDeadLetter(earlier.messageId())).isTrue();
            await().atMost(WAIT).until(() -> store.pendingMetrics(Duration.ofSeconds(1)).pendingCount() == 0);
        }
        assertThat(failures.deadLettered).containsExactly(again.messageId());
        assertThat(dead(store).deadLetter(again.messageId()).orElseThrow().value()).isEqualTo(again.value());
    }

    private static DeadLetters dead(InMemoryOutboxStore store) {
        return store.deadLetters().orElseThrow();
    }
}
