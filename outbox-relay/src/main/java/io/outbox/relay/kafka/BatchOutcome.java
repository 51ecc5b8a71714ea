package io.outbox.relay.kafka;

import io.outbox.relay.PublishResult;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Collects the per-record outcomes of one batch and completes a future with the acknowledged
 * prefix and the first error once every record has an outcome (rule K3). Thread-safe: the
 * publishing store thread records refusals, the producer's I/O thread records acknowledgements and
 * failures, and the future completes on whichever thread records the last outcome; each record's
 * first outcome wins.
 */
final class BatchOutcome {

    private static final Object ACKNOWLEDGED = new Object();

    private final AtomicReferenceArray<Object> outcomes;
    private final AtomicInteger pending;
    private final CompletableFuture<PublishResult> future = new CompletableFuture<>();

    BatchOutcome(int size) {
        this.outcomes = new AtomicReferenceArray<>(size);
        this.pending = new AtomicInteger(size);
        if (size == 0) {
            future.complete(PublishResult.success(0));
        }
    }

    /** Records the outcome of record {@code index}: acknowledged when {@code error} is null. */
    void complete(int index, Throwable error) {
        if (outcomes.compareAndSet(index, null, error == null ? ACKNOWLEDGED : error)
                && pending.decrementAndGet() == 0) {
            future.complete(result());
        }
    }

    /** The error recorded for record {@code index}; null when it was acknowledged or has no outcome yet. */
    Throwable error(int index) {
        return outcomes.get(index) instanceof Throwable t ? t : null;
    }

    CompletableFuture<PublishResult> future() {
        return future;
    }

    private PublishResult result() {
        for (int i = 0; i < outcomes.length(); i++) {
            Object outcome = outcomes.get(i);
            if (outcome != ACKNOWLEDGED) {
                return PublishResult.failure(i, (Throwable) outcome);
            }
        }
        return PublishResult.success(outcomes.length());
    }
}
