package io.outbox.relay.internal;

import java.util.BitSet;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Wake-ups of the loop thread (rule R8) and its stop signal. Hints coalesce and stay
 * pending until the thread takes them, so a wake-up that races with the start of an idle wait is
 * never lost. Memory is bounded by the bucket count. Thread-safe (one lock): any thread wakes
 * (committing threads, transports' threads) or stops it, store threads poke it as a task ends, and
 * only the loop thread takes hints and waits.
 */
final class WakeSignal {

    /** What the wake-ups since the last {@link #take()} asked for. */
    record Hints(boolean discover, List<Integer> buckets) {
    }

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final BitSet hinted = new BitSet();
    private boolean discover;
    private boolean woken;
    private boolean stopped;

    /** Wakes the thread and asks it to look for pending messages in every owned bucket. */
    void wakeUp() {
        lock.lock();
        try {
            discover = true;
            woken = true;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Wakes the thread and asks it to fetch these buckets if it owns them. */
    void wakeUp(int[] buckets) {
        lock.lock();
        try {
            for (int bucket : buckets) {
                hinted.set(bucket);
            }
            woken = true;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Ends an idle wait without asking for anything: a bucket's store work finished. */
    void poke() {
        lock.lock();
        try {
            woken = true;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Ends every wait for good. */
    void stop() {
        lock.lock();
        try {
            stopped = true;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    boolean isStopped() {
        lock.lock();
        try {
            return stopped;
        } finally {
            lock.unlock();
        }
    }

    /** Waits until a wake-up, the stop, or the time is up; returns at once if a wake-up is pending. */
    void awaitWakeUp(long nanos) throws InterruptedException {
        await(nanos, true);
    }

    /** Waits until the stop or the time is up; wake-ups do not end it (an error backoff). */
    void awaitStop(long nanos) throws InterruptedException {
        await(nanos, false);
    }

    private void await(long nanos, boolean wakeUpEnds) throws InterruptedException {
        lock.lock();
        try {
            long left = nanos;
            while (!stopped && !(wakeUpEnds && woken) && left > 0) {
                left = changed.awaitNanos(left);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Takes and clears the pending hints. */
    Hints take() {
        lock.lock();
        try {
            Hints hints = new Hints(discover, hinted.stream().boxed().toList());
            hinted.clear();
            discover = false;
            woken = false;
            return hints;
        } finally {
            lock.unlock();
        }
    }
}
