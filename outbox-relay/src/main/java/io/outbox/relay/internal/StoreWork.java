package io.outbox.relay.internal;

import io.outbox.OutboxMessage;
import io.outbox.relay.OutboxPublisher;
import io.outbox.relay.RelayOptions;
import io.outbox.spi.OutboxStore;
import io.outbox.spi.Pending;
import io.outbox.spi.ReadAhead;
import io.outbox.spi.support.BatchBytes;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The store threads ({@code outbox-relay-<relayId>-store-<n>}, {@link RelayOptions#storeConcurrency()}
 * of them) that run the buckets' {@link BucketTask}s, what those tasks share, and the two hand-over
 * points between them and the loop thread: {@link #submit} (loop to task) and the completion queue
 * (task to loop: {@link #complete}, {@link #poll}, {@link #take}).
 *
 * <p>Thread-safe; every field is final or written by one thread. The loop thread submits, takes
 * outcomes and sets {@link #halt}/{@link #resume}; store threads and the publisher's callback
 * thread complete tasks and count publishes in flight; the renewal thread reads that count; the
 * closing thread may {@link #abandon} the pool.
 */
final class StoreWork {

    final OutboxStore store;
    /** The store's read ahead (C5) when {@link RelayOptions#prefetch()} is on; else null. */
    final ReadAhead readAhead;
    final OutboxPublisher publisher;
    final LeaseTable leases;
    final PoisonGuard poison;
    final HeadFailures headFailures;
    final Clock clock;
    final int batchSize;
    /** {@link RelayOptions#batchMaxBytes()}: every read's byte budget (S1). */
    final long batchMaxBytes;
    final String relayId;
    private final WakeSignal wake;
    private final ThreadPoolExecutor pool;
    private final BlockingQueue<TaskOutcome> completed = new LinkedBlockingQueue<>();
    /** Publishes started and not yet answered, for the renewal thread (R5). */
    private final AtomicInteger inFlight = new AtomicInteger();
    /** Written by the loop thread only: a failure stops new work, so tasks not yet started do nothing. */
    private volatile boolean halted;

    StoreWork(OutboxStore store, ReadAhead readAhead, OutboxPublisher publisher, LeaseTable leases, PoisonGuard poison,
              HeadFailures headFailures, Clock clock, RelayOptions options, WakeSignal wake) {
        this.store = store;
        this.readAhead = readAhead;
        this.publisher = publisher;
        this.leases = leases;
        this.poison = poison;
        this.headFailures = headFailures;
        this.clock = clock;
        this.batchSize = options.batchSize();
        this.batchMaxBytes = options.batchMaxBytes();
        this.relayId = options.relayId();
        this.wake = wake;
        AtomicInteger threads = new AtomicInteger();
        this.pool = new ThreadPoolExecutor(options.storeConcurrency(), options.storeConcurrency(), 0,
                TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), body -> {
                    Thread t = new Thread(body, "outbox-relay-" + relayId + "-store-" + threads.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
    }

    /**
     * Loop thread: starts a task for the bucket.
     *
     * @param given a batch the bucket's previous task read ahead, or null
     * @return the task, for hints while it runs; null when the pool is shut down
     */
    BucketTask submit(int bucket, ReadBatch given) {
        BucketTask task = new BucketTask(this, bucket, given);
        try {
            pool.execute(task::run);
        } catch (RejectedExecutionException e) {
            return null;
        }
        return task;
    }

    /** The store threads, for a task's later parts (the delete, a read ahead started by a hint). */
    Executor executor() {
        return pool;
    }

    /** Any thread of a task: hands its outcome to the loop thread and ends an idle wait. */
    void complete(TaskOutcome outcome) {
        completed.add(outcome);
        wake.poke();
    }

    /** Loop thread: an outcome, without waiting; null when none. */
    TaskOutcome poll() {
        return completed.poll();
    }

    /** Loop thread: waits for an outcome. */
    TaskOutcome take() throws InterruptedException {
        return completed.take();
    }

    /** Loop thread: a failure stops new work until {@link #resume()}. */
    void halt() {
        halted = true;
    }

    /** Loop thread: new work may start again. */
    void resume() {
        halted = false;
    }

    /** Whether a task should start nothing: halted, abandoned or stopping. */
    boolean stopping() {
        return halted || abandoned() || wake.isStopped();
    }

    /**
     * Whether the pool was shut down: either with no task running (a graceful stop), or to abandon
     * the tasks still running, which then delete nothing more.
     */
    boolean abandoned() {
        return pool.isShutdown();
    }

    /** Loop or closing thread: shuts the pool down at once; tasks still running delete nothing more. */
    void abandon() {
        pool.shutdownNow();
    }

    /** Loop thread: shuts the pool down once no task runs. */
    void shutdown() {
        pool.shutdown();
    }

    /** A store thread, as a publish starts. */
    void publishStarted() {
        inFlight.incrementAndGet();
    }

    /** The publisher's callback thread (or a store thread), as a publish ends. */
    void publishEnded() {
        inFlight.decrementAndGet();
    }

    /** Renewal thread: whether a publish is in flight (R5). */
    boolean publishing() {
        return inFlight.get() > 0;
    }

    /**
     * Whether a batch may have left messages of its bucket behind, so the bucket is read again
     * without waiting (R4) and read ahead (C5): it holds {@code limit} messages, or the room its
     * byte budget had left is smaller than its largest message (the next message may not have
     * fit, S1; a message read alone over the budget leaves no room at all). A batch cut by bytes
     * in front of a much larger message than its own may be taken for the bucket's last; the
     * bucket then waits for a wake-up or the poll interval.
     */
    boolean full(List<Pending> batch, int limit) {
        if (batch.size() >= limit) {
            return true;
        }
        long taken = 0;
        long largest = 0;
        for (Pending p : batch) {
            long size = BatchBytes.of(p.message());
            taken = size > Long.MAX_VALUE - taken ? Long.MAX_VALUE : taken + size;
            largest = Math.max(largest, size);
        }
        return !batch.isEmpty() && batchMaxBytes - taken < largest;
    }

    /**
     * Checks a batch the store returned: at most {@link RelayOptions#batchSize()} messages, every
     * one of the bucket.
     *
     * @throws IllegalStateException naming the bad answer
     */
    void checkBatch(int bucket, List<Pending> batch) {
        if (batch.size() > batchSize) {
            throw new IllegalStateException("the store's nextBatch returned " + batch.size()
                    + " messages, more than the " + batchSize + " asked for");
        }
        for (Pending p : batch) {
            OutboxMessage m = p == null ? null : p.message();
            if (m == null || m.bucket() != bucket) {
                throw new IllegalStateException("the store's nextBatch(" + bucket + ") returned "
                        + (m == null ? "null" : "message " + m.messageId() + " of bucket " + m.bucket()));
            }
        }
    }
}
