package io.outbox.spring;

import io.outbox.relay.RelayListener;
import io.outbox.relay.internal.Redactor;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Remembers what the health indicator and the {@code outbox} endpoint report about the relay:
 * the buckets it owns, and the buckets whose last publish failed (stalled: messages stay and are
 * retried after a backoff, rule R3) with their failures in a row and the last error. A bucket is
 * no longer stalled after a successful publish or when the relay gives it up. Thread-safe.
 */
public final class OutboxRelayMonitor implements RelayListener {

    /**
     * A bucket whose publishes failed since its last success.
     *
     * @param failures the failed publishes in a row, {@code >= 1}
     * @param lastError the last error's class and message, credentials of URLs and of
     *     {@code password=}-like assignments hidden
     */
    public record Stall(int failures, String lastError) {
    }

    private final AtomicReference<List<Integer>> owned = new AtomicReference<>(List.of());
    private final Map<Integer, Stall> stalled = new ConcurrentHashMap<>();
    private volatile Throwable fatalError;

    /** A monitor that has seen nothing yet. */
    public OutboxRelayMonitor() {
    }

    @Override
    public void onOwnedBucketsChanged(List<Integer> ownedBuckets) {
        owned.set(List.copyOf(ownedBuckets));
        stalled.keySet().retainAll(ownedBuckets);
    }

    @Override
    public void onPublished(int bucket, int count) {
        stalled.remove(bucket);
    }

    @Override
    public void onPublishFailed(int bucket, int acknowledged, Throwable error) {
        stalled.merge(bucket, new Stall(1, Redactor.patternsOnly().redact(error.toString())),
                (old, now) -> new Stall(acknowledged > 0 ? 1 : old.failures() + 1, now.lastError()));
    }

    @Override
    public void onTerminated(Throwable fatalError) {
        this.fatalError = fatalError;
        owned.set(List.of());
        stalled.clear();
    }

    /**
     * The buckets the relay holds leases for, as last reported.
     *
     * @return ascending, immutable; empty before the first acquisition and after the stop
     */
    public List<Integer> ownedBuckets() {
        return owned.get();
    }

    /**
     * The stalled buckets.
     *
     * @return bucket to stall, ascending by bucket; a copy
     */
    public Map<Integer, Stall> stalledBuckets() {
        return new TreeMap<>(stalled);
    }

    /**
     * The error the relay stopped on (rule R6).
     *
     * @return the fatal error, or null if none
     */
    public Throwable fatalError() {
        return fatalError;
    }
}
