package io.outbox.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import io.outbox.OutboxMessage;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/** The store contract's shapes: entries with a handle (S2), capabilities by accessor (C1-C6). */
class PendingTest {

    private static final StringSerializer STRING = new StringSerializer();

    @Test
    void s2_anEntryHoldsTheMessageAndTheStoresHandleNeitherNull() {
        OutboxMessage m = OutboxMessage.create("t", "k", "v", STRING, STRING, 4);
        Pending p = new Pending(m, 17L);
        assertThat(p.message()).isSameAs(m);
        assertThat(p.handle()).isEqualTo(17L);
        assertThat(p).isEqualTo(new Pending(m, 17L)).isNotEqualTo(new Pending(m, 18L));
        assertThat(p.toString()).contains(m.messageId().toString()).doesNotContain("v,");
        assertThatNullPointerException().isThrownBy(() -> new Pending(null, 1L)).withMessageContaining("message");
        assertThatNullPointerException().isThrownBy(() -> new Pending(m, null)).withMessageContaining("handle");
        OutboxMessage second = OutboxMessage.create("t", "k2", "v", STRING, STRING, 4);
        assertThat(Pending.messages(List.of(p, new Pending(second, 18L)))).containsExactly(m, second);
    }

    @Test
    void c1ToC6_everyCapabilityIsEmptyUnlessTheStoreReturnsIt() {
        OutboxStore store = new TestStoreProvider().create(Map.of());
        assertThat(store.leaseRenewal()).isEmpty();
        assertThat(store.pendingMetrics()).isEmpty();
        assertThat(store.leaseRelease()).isEmpty();
        assertThat(store.deadLetters()).isEmpty();
        assertThat(store.readAhead()).isEmpty();
        assertThat(store.leaseView()).isEmpty();
    }

    @Test
    void c1ToC6_aStoreThatIsItsOwnCapabilityOffersItselfThroughItsSelfInterface() {
        SelfStore store = new SelfStore();
        assertThat(store.leaseRenewal()).containsSame(store);
        assertThat(store.pendingMetrics()).containsSame(store);
        assertThat(store.leaseRelease()).containsSame(store);
        assertThat(store.deadLetters()).containsSame(store);
        assertThat(store.readAhead()).containsSame(store);
        assertThat(store.leaseView()).containsSame(store);
    }

    @Test
    void c6_aLeaseTableHoldsEveryBucketInOrderAndFillsTheMissingOnesFree() {
        LeaseTable table = LeaseTable.of(42L, Map.of("relay-b", 7L, "relay-a", 9L),
                List.of(new io.outbox.spi.support.BucketLease(2, "relay-a", 100L),
                        new io.outbox.spi.support.BucketLease(0, "relay-b", 90L),
                        new io.outbox.spi.support.BucketLease(5, "relay-b", 80L)), 3);
        assertThat(table.readAtMillis()).isEqualTo(42L);
        assertThat(table.heartbeats().keySet()).containsExactly("relay-a", "relay-b");
        assertThat(table.leases()).containsExactly(new io.outbox.spi.support.BucketLease(0, "relay-b", 90L),
                io.outbox.spi.support.BucketLease.free(1), new io.outbox.spi.support.BucketLease(2, "relay-a", 100L));
        org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
                .isThrownBy(() -> LeaseTable.of(0L, Map.of(), List.of(), 0)).withMessageContaining("bucketCount")
                .withMessageContaining("0");
        org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
                .isThrownBy(() -> new LeaseTable(0L, Map.of(), List.of(io.outbox.spi.support.BucketLease.free(1))))
                .withMessageContaining("bucket 0 at index 0");
    }

    /** A store implementing every capability itself; only its accessors are called here. */
    private static final class SelfStore implements LeaseRenewal.Self, PendingMetrics.Self, LeaseRelease.Self,
            DeadLetters.Self, ReadAhead.Self, LeaseView.Self {

        @Override
        public List<Integer> acquireBucketLeases(LeaseRequest request) {
            throw new UnsupportedOperationException();
        }

        @Override
        public List<Integer> bucketsWithPending(List<Integer> buckets) {
            throw new UnsupportedOperationException();
        }

        @Override
        public List<Pending> nextBatch(int bucket, int maxCount, long maxBytes) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void markPublished(int bucket, List<Pending> published) {
            throw new UnsupportedOperationException();
        }

        @Override
        public List<Integer> renewBucketLeases(LeaseRequest request) {
            throw new UnsupportedOperationException();
        }

        @Override
        public PendingSnapshot pendingMetrics(Duration timeout) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void releaseBucketLeases(String relayId) {
            throw new UnsupportedOperationException();
        }

        @Override
        public LeaseTable leaseTable(int bucketCount) {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean moveToDeadLetters(int bucket, UUID messageId, DeadLetterFailure failure) {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean recordHeadFailure(int bucket, UUID messageId, DeadLetterFailure failure) {
            throw new UnsupportedOperationException();
        }

        @Override
        public List<HeadFailure> headFailures(List<Integer> buckets) {
            throw new UnsupportedOperationException();
        }

        @Override
        public List<DeadLetter> deadLetters(UUID after, int limit) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Optional<DeadLetter> deadLetter(UUID messageId) {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean replayDeadLetter(UUID messageId) {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean purgeDeadLetter(UUID messageId) {
            throw new UnsupportedOperationException();
        }

        @Override
        public List<Pending> nextBatchExcluding(int bucket, List<Pending> inFlight, int maxCount, long maxBytes) {
            throw new UnsupportedOperationException();
        }
    }
}
