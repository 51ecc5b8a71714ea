package io.outbox.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.OutboxMessage;
import io.outbox.OutboxPayloadTooLargeException;
import io.outbox.spi.LeaseRequest;
import io.outbox.spi.Pending;
import io.outbox.spi.support.StoredMessages;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The reference store's own API beyond the SPI the kit checks: its writer's transactions, its
 * builder, its diagnostics, and the handles of two stores kept apart (which the kit, with one
 * storage per test, cannot reach). Mutation testing runs these with the kit.
 */
class InMemoryOutboxStoreApiTest {

    private final TckClock clock = new TckClock(Instant.parse("2031-01-02T03:04:05Z"));
    private final InMemoryOutboxStore store = InMemoryOutboxStore.builder().clock(clock).build();

    private OutboxMessage message(int bucket) {
        return StoredMessages.rebuild(UUID.randomUUID(), bucket, "t", null, "v".getBytes(StandardCharsets.UTF_8),
                List.of(), null, clock.instant());
    }

    @Test
    void markPublishedRefusesTheEntryOfAnotherInMemoryStoreAndDeletesNothing() {
        InMemoryOutboxStore other = InMemoryOutboxStore.builder().clock(clock).build();
        other.enqueue(message(1));
        store.enqueue(message(1));
        List<Pending> foreign = other.nextBatch(1, 10);
        assertThatThrownBy(() -> store.markPublished(1, foreign)).isInstanceOf(IllegalArgumentException.class);
        assertThat(store.nextBatch(1, 10)).as("this store's message").hasSize(1);
        assertThat(other.nextBatch(1, 10)).as("the other store's message").hasSize(1);
    }

    @Test
    void aTransactionEndsOnceAndARolledBackOneWritesNothing() {
        InMemoryOutboxStore.Transaction committed = store.begin();
        committed.enqueue(List.of(message(0)));
        committed.commit();
        assertThatThrownBy(committed::commit).as("a second commit").isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> committed.enqueue(List.of(message(0)))).as("an enqueue after the commit")
                .isInstanceOf(IllegalStateException.class);
        committed.rollback(); // a no-op after the commit
        assertThat(store.nextBatch(0, 10)).as("the committed message stays").hasSize(1);

        InMemoryOutboxStore.Transaction rolledBack = store.begin();
        rolledBack.enqueue(List.of(message(2), message(2)));
        rolledBack.rollback();
        assertThatThrownBy(rolledBack::commit).as("a commit after the rollback").isInstanceOf(IllegalStateException.class);
        assertThat(store.nextBatch(2, 10)).as("bucket 2 after the rollback").isEmpty();
    }

    @Test
    void theBuilderValidatesThePayloadLimitAndTheStoreKeepsIt() {
        assertThatThrownBy(() -> InMemoryOutboxStore.builder().maxPayloadBytes(-1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("-1");
        InMemoryOutboxStore none = InMemoryOutboxStore.builder().maxPayloadBytes(0).clock(clock).build();
        assertThat(none.maxPayloadBytes()).isZero();
        assertThatThrownBy(() -> none.enqueue(message(0))).isInstanceOf(OutboxPayloadTooLargeException.class);
        assertThat(store.maxPayloadBytes()).isEqualTo(InMemoryOutboxStore.DEFAULT_MAX_PAYLOAD_BYTES);
    }

    @Test
    void theDiagnosticsShowThePendingBucketsAndTheLeases() {
        store.enqueue(message(3), message(5));
        store.insertRow(-2, message(0));
        assertThat(store.pendingBuckets()).containsExactly(-2, 3, 5);
        store.markPublished(3, store.nextBatch(3, 10));
        assertThat(store.pendingBuckets()).containsExactly(-2, 5);
        assertThat(store.leases()).isEmpty();
        store.markPublished(5, store.nextBatch(5, 10));
        assertThatThrownBy(() -> store.acquireBucketLeases(LeaseRequest.of("relay", 2, Duration.ofSeconds(30))))
                .as("a row below bucket 0 (S8)").hasMessageContaining("-2");
    }

    @Test
    void theLeaseTableHoldsOneRowPerBucket() {
        assertThat(store.acquireBucketLeases(LeaseRequest.of("relay", 3, Duration.ofSeconds(30))))
                .containsExactly(0, 1, 2);
        assertThat(store.leases()).containsOnlyKeys(0, 1, 2)
                .allSatisfy((bucket, lease) -> assertThat(lease.owner()).isEqualTo("relay"));
    }
}
