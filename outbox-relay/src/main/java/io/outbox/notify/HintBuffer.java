package io.outbox.notify;

import io.outbox.OutboxCommitNotifier;
import java.util.BitSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The commit path's side of the sender (rule N3): committing threads add bucket ids, the one
 * sender thread takes everything added since its last take. Repeats coalesce; memory is bounded
 * by the capacity (one bit per bucket): an id at or above it, and {@code -1}, turn the batch into
 * one unknown-bucket hint. Adding never blocks on the sender. Thread-safe.
 */
final class HintBuffer {

    private final int capacity;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition added = lock.newCondition();
    private final BitSet buckets = new BitSet();
    private boolean unknown;
    private boolean pending;
    private boolean closed;

    HintBuffer(int capacity) {
        this.capacity = capacity;
    }

    void add(int[] hints) {
        lock.lock();
        try {
            for (int bucket : hints) {
                if (bucket < 0 || bucket >= capacity) {
                    unknown = true;
                } else {
                    buckets.set(bucket);
                }
            }
            if (hints.length > 0 && !pending) {
                pending = true;
                added.signal();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Waits up to the timeout for hints; returns them and empties the buffer, or null. */
    int[] take(long timeout, TimeUnit unit) throws InterruptedException {
        lock.lock();
        try {
            long left = unit.toNanos(timeout);
            while (!pending && !closed && left > 0) {
                left = added.awaitNanos(left);
            }
            if (!pending) {
                return null;
            }
            int[] out = unknown ? new int[] {OutboxCommitNotifier.UNKNOWN_BUCKET} : buckets.stream().toArray();
            buckets.clear();
            unknown = false;
            pending = false;
            return out;
        } finally {
            lock.unlock();
        }
    }

    void close() {
        lock.lock();
        try {
            closed = true;
            added.signalAll();
        } finally {
            lock.unlock();
        }
    }
}
