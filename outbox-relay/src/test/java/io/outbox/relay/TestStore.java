package io.outbox.relay;

import io.outbox.spi.LeaseRelease;
import io.outbox.spi.LeaseRenewal;
import io.outbox.spi.LeaseRequest;
import io.outbox.spi.OutboxStore;
import io.outbox.spi.Pending;
import io.outbox.tck.InMemoryOutboxStore;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

/**
 * A store for relay tests: the in-memory reference store behind hooks that count calls, inject
 * failures, rewrite answers and run code (such as moving a test clock) after a call. This class
 * has no optional capability, like a store without lease renewal; {@link Renewing} adds C1 and C3.
 */
class TestStore implements OutboxStore {

    final InMemoryOutboxStore delegate;
    final AtomicInteger acquireCalls = new AtomicInteger();
    final AtomicInteger pendingCalls = new AtomicInteger();
    final AtomicInteger nextBatchCalls = new AtomicInteger();
    final AtomicInteger renewCalls = new AtomicInteger();
    /** The message ids of every markPublished call, in call order. */
    final List<List<UUID>> deleted = new CopyOnWriteArrayList<>();
    /** The byte budget of every nextBatch call, in call order. */
    final List<Long> budgets = new CopyOnWriteArrayList<>();
    /** How many of the next nextBatch calls throw. */
    final AtomicInteger failNextBatches = new AtomicInteger();
    /** The last acquisition's request. */
    volatile LeaseRequest lastAcquire;
    volatile Runnable afterAcquire = () -> { };
    volatile Runnable afterNextBatch = () -> { };
    volatile UnaryOperator<List<Integer>> acquireAnswer = UnaryOperator.identity();
    volatile UnaryOperator<List<Integer>> renewAnswer = UnaryOperator.identity();

    TestStore(InMemoryOutboxStore delegate) {
        this.delegate = delegate;
    }

    long pending() {
        return delegate.pendingMetrics(java.time.Duration.ofSeconds(1)).pendingCount();
    }

    List<UUID> deletedIds() {
        return deleted.stream().flatMap(List::stream).toList();
    }

    @Override
    public List<Integer> acquireBucketLeases(LeaseRequest request) {
        acquireCalls.incrementAndGet();
        lastAcquire = request;
        List<Integer> owned = delegate.acquireBucketLeases(request);
        afterAcquire.run();
        return acquireAnswer.apply(owned);
    }

    @Override
    public List<Integer> bucketsWithPending(List<Integer> buckets) {
        pendingCalls.incrementAndGet();
        return delegate.bucketsWithPending(buckets);
    }

    @Override
    public List<Pending> nextBatch(int bucket, int maxCount, long maxBytes) {
        nextBatchCalls.incrementAndGet();
        budgets.add(maxBytes);
        if (failNextBatches.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            throw new IllegalStateException("injected store failure");
        }
        List<Pending> batch = delegate.nextBatch(bucket, maxCount, maxBytes);
        afterNextBatch.run();
        return batch;
    }

    @Override
    public void markPublished(int bucket, List<Pending> published) {
        deleted.add(published.stream().map(p -> p.message().messageId()).toList());
        delegate.markPublished(bucket, published);
    }

    /** The same store with lease renewal (C1) and lease release (C3). */
    static class Renewing extends TestStore implements LeaseRenewal.Self, LeaseRelease.Self {

        Renewing(InMemoryOutboxStore delegate) {
            super(delegate);
        }

        @Override
        public List<Integer> renewBucketLeases(LeaseRequest request) {
            renewCalls.incrementAndGet();
            return renewAnswer.apply(delegate.renewBucketLeases(request));
        }

        @Override
        public void releaseBucketLeases(String relayId) {
            delegate.releaseBucketLeases(relayId);
        }
    }
}
