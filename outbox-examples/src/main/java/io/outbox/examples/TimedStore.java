package io.outbox.examples;

import io.outbox.OutboxMessage;
import io.outbox.spi.LeaseRelease;
import io.outbox.spi.LeaseRenewal;
import io.outbox.spi.LeaseRequest;
import io.outbox.spi.OutboxStore;
import io.outbox.spi.ReadAhead;
import io.outbox.spi.support.ReadAheads;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * A store that measures how long the relay waits for it: reading batches, deleting published
 * messages, and everything else (leases, probes). The benchmark uses it to say where a relay's
 * time goes. It passes every call through unchanged and closes its delegate.
 *
 * <p>It offers lease renewal and release (C1, C3), which the relay uses when present, so it must
 * wrap a store that has both, as every store of this project does. It reads ahead (C5) with the
 * delegate's own read ahead, or, for a delegate without one, with {@link ReadAheads#byFiltering};
 * that time counts as fetch time.
 */
final class TimedStore implements OutboxStore, LeaseRenewal, LeaseRelease, ReadAhead, AutoCloseable {

    private final OutboxStore store;
    private final AtomicLong fetchNanos = new AtomicLong();
    private final AtomicLong deleteNanos = new AtomicLong();
    private final AtomicLong otherNanos = new AtomicLong();

    /**
     * @throws IllegalArgumentException if the store cannot renew or release leases
     */
    TimedStore(OutboxStore store) {
        if (!(store instanceof LeaseRenewal) || !(store instanceof LeaseRelease)) {
            throw new IllegalArgumentException("the store " + store + " does not renew and release leases (C1, C3)");
        }
        this.store = store;
    }

    /** Time spent in {@link #nextBatch}, in nanoseconds. */
    long fetchNanos() {
        return fetchNanos.get();
    }

    /** Time spent in {@link #markPublished}, in nanoseconds. */
    long deleteNanos() {
        return deleteNanos.get();
    }

    /** Time spent in every other call, in nanoseconds. */
    long otherNanos() {
        return otherNanos.get();
    }

    private static <T> T timed(AtomicLong total, Supplier<T> call) {
        long start = System.nanoTime();
        try {
            return call.get();
        } finally {
            total.addAndGet(System.nanoTime() - start);
        }
    }

    @Override
    public List<Integer> acquireBucketLeases(LeaseRequest request) {
        return timed(otherNanos, () -> store.acquireBucketLeases(request));
    }

    @Override
    public List<Integer> bucketsWithPending(List<Integer> buckets) {
        return timed(otherNanos, () -> store.bucketsWithPending(buckets));
    }

    @Override
    public List<OutboxMessage> nextBatch(int bucket, int maxCount) {
        return timed(fetchNanos, () -> store.nextBatch(bucket, maxCount));
    }

    @Override
    public List<OutboxMessage> nextBatchExcluding(int bucket, List<OutboxMessage> inFlight, int maxCount) {
        return timed(fetchNanos, () -> store instanceof ReadAhead ahead
                ? ahead.nextBatchExcluding(bucket, inFlight, maxCount)
                : ReadAheads.byFiltering(store, bucket, inFlight, maxCount));
    }

    @Override
    public void markPublished(int bucket, List<OutboxMessage> published) {
        timed(deleteNanos, () -> {
            store.markPublished(bucket, published);
            return null;
        });
    }

    @Override
    public List<Integer> renewBucketLeases(LeaseRequest request) {
        return timed(otherNanos, () -> ((LeaseRenewal) store).renewBucketLeases(request));
    }

    @Override
    public void releaseBucketLeases(String relayId) {
        timed(otherNanos, () -> {
            ((LeaseRelease) store).releaseBucketLeases(relayId);
            return null;
        });
    }

    @Override
    public void close() {
        DemoDatabase.closeStore(store);
    }

    @Override
    public String toString() {
        return "TimedStore[" + store + "]";
    }
}
