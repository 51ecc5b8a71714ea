package io.outbox.demo;

import io.outbox.spi.DeadLetters;
import io.outbox.spi.LeaseRelease;
import io.outbox.spi.LeaseRenewal;
import io.outbox.spi.LeaseRequest;
import io.outbox.spi.LeaseView;
import io.outbox.spi.OutboxStore;
import io.outbox.spi.Pending;
import io.outbox.spi.PendingMetrics;
import io.outbox.spi.ReadAhead;
import io.outbox.spi.support.ReadAheads;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * A store that measures how long the relay waits for it: reading batches, deleting published
 * messages, and everything else (leases, probes). The benchmark uses it to say where a relay's
 * time goes. It passes every call through unchanged and closes its delegate.
 *
 * <p>It forwards the delegate's capabilities through its accessors. Lease renewal and release
 * (C1, C3), which the relay uses when present, are timed as other calls, so it must wrap a store
 * that has both, as every store of this project does. It reads ahead (C5) with the delegate's own
 * read ahead, or, for a delegate without one, with {@link ReadAheads#byFiltering}; that time
 * counts as fetch time. Pending metrics (C2) and dead letters (C4), off the publishing path, are
 * the delegate's, untimed.
 */
final class TimedStore implements OutboxStore, AutoCloseable {

    private final OutboxStore store;
    private final AtomicLong fetchNanos = new AtomicLong();
    private final AtomicLong deleteNanos = new AtomicLong();
    private final AtomicLong otherNanos = new AtomicLong();

    /**
     * @throws IllegalArgumentException if the store cannot renew or release leases
     */
    TimedStore(OutboxStore store) {
        if (store.leaseRenewal().isEmpty() || store.leaseRelease().isEmpty()) {
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
    public List<Pending> nextBatch(int bucket, int maxCount, long maxBytes) {
        return timed(fetchNanos, () -> store.nextBatch(bucket, maxCount, maxBytes));
    }

    @Override
    public void markPublished(int bucket, List<Pending> published) {
        timed(deleteNanos, () -> {
            store.markPublished(bucket, published);
            return null;
        });
    }

    @Override
    public Optional<LeaseRenewal> leaseRenewal() {
        return store.leaseRenewal().map(renewal -> request -> timed(otherNanos,
                () -> renewal.renewBucketLeases(request)));
    }

    @Override
    public Optional<LeaseRelease> leaseRelease() {
        return store.leaseRelease().map(release -> relayId -> timed(otherNanos, () -> {
            release.releaseBucketLeases(relayId);
            return null;
        }));
    }

    @Override
    public Optional<ReadAhead> readAhead() {
        Optional<ReadAhead> own = store.readAhead();
        return Optional.of((bucket, inFlight, maxCount, maxBytes) -> timed(fetchNanos, () -> own.isPresent()
                ? own.get().nextBatchExcluding(bucket, inFlight, maxCount, maxBytes)
                : ReadAheads.byFiltering(store, bucket, inFlight, maxCount, maxBytes)));
    }

    @Override
    public Optional<PendingMetrics> pendingMetrics() {
        return store.pendingMetrics();
    }

    @Override
    public Optional<DeadLetters> deadLetters() {
        return store.deadLetters();
    }

    @Override
    public Optional<LeaseView> leaseView() {
        return store.leaseView();
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
