package io.outbox.relay;

import io.outbox.OutboxMessage;
import io.outbox.spi.CorruptMessageException;
import io.outbox.spi.DeadLetterConflictException;
import io.outbox.spi.DeadLetterFailure;
import io.outbox.spi.DeadLetters;
import io.outbox.spi.HeadFailure;
import io.outbox.spi.LeaseRelease;
import io.outbox.spi.LeaseRenewal;
import io.outbox.spi.LeaseRequest;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.OutboxStore;
import io.outbox.spi.ReadAhead;
import java.time.Clock;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The relay's publishing loop and lease renewal; {@link OutboxRelay} owns the threads that run
 * them. Fields marked "publishing thread" are touched by {@link #run()} only.
 *
 * <p>The publishing thread decides and keeps all bookkeeping (leases, ready buckets, retries,
 * listener calls). Each due bucket's store work runs as a {@link Task} on a pool of
 * {@link RelayOptions#storeConcurrency()} threads: read a batch, recheck the lease (R1), start the
 * publish; once the publisher answers, recheck the lease again (R9) and delete the acknowledged
 * prefix (R2). The task hands its outcome back through a queue and the publishing thread applies
 * it. A bucket has at most one task at a time, so its batches stay in order; a bucket may start
 * its next batch as soon as its last one is done, whatever the other buckets are doing.
 *
 * <p>The pipelined drain ({@link RelayOptions#prefetch()}, with a store that has capability C5
 * {@link ReadAhead}): a task whose batch came back full, or whose bucket is hinted while it runs
 * (a commit the task's read may have missed, R8), reads the bucket's next batch, leaving out the
 * batch in flight, while that batch is being published or deleted, and ends once both the publish
 * (with its delete) and that read are done. The publishing thread keeps the batch read ahead only when
 * the publish was acknowledged whole; the bucket's next task then publishes it without reading,
 * provided the leases had no break since the earlier task checked its lease ({@link
 * LeaseTable#breaks()}, R1) and the head has no counted failure (R12). Any failure, lost lease,
 * fence or stop discards it, and the bucket reads from its head again. Nothing is deleted before
 * its acknowledgement, and a bucket still has one batch in flight at a time (R2).
 *
 * <p>Rebalancing never waits for a publish (rule R11): each renew interval the publishing thread
 * re-acquires at once, telling the store which held buckets are busy ({@link
 * LeaseRequest#busyBuckets()}). The store keeps those even above the fair share, so a bucket is
 * never given away while its publish is in flight; buckets that are not busy move as the plan says
 * and the free ones start their next batch at once. When a busy bucket kept at an acquisition that
 * may have left this relay above its share ends its task, the relay acquires again (no sooner
 * than a poll interval after the last acquisition), which releases it if the plan gives it up.
 *
 * <p>Bucket sets (owned, ready, busy) are {@link BitSet}s: a cycle's set work is linear in the
 * bucket count (65,536 at most), never quadratic; lists exist only at the SPI and listener edges.
 */
final class RelayEngine {

    private static final Logger LOG = LoggerFactory.getLogger(OutboxRelay.class);

    /**
     * A bucket's next batch, read during the publish of the batch before it; {@code breaks} is
     * {@link LeaseTable#breaks()} as read before the lease check that preceded the read.
     */
    private record ReadBatch(List<OutboxMessage> batch, long breaks) {
    }

    /** A bucket's publish failures in a row and when it may be retried (R3). */
    private record Retry(int failures, long retryAtNanos) {
    }

    /** How a bucket's task ended. */
    private enum Outcome {
        /** Not run: the relay was stopping, or an earlier failure stopped new work. */
        SKIPPED,
        /** The bucket held no pending message. */
        EMPTY,
        /** The lease was too short to start a publish (R1, R5); nothing was published. */
        NO_LEASE,
        /** The lease ended during the publish (R9); nothing was deleted. */
        LEASE_LOST,
        /** The publisher answered; the acknowledged prefix was deleted. */
        PUBLISHED,
        /** A store call or a check of its answer failed. */
        FAILED,
        /** The relay gave up on the task after its close timeout; nothing was deleted. */
        ABANDONED
    }

    /**
     * One bucket's read, publish and delete. Written by the pool's threads (and the publisher's
     * callback), read by the publishing thread once it took the task from {@link #completed},
     * which orders the writes before the reads.
     */
    private static final class Task {
        final int bucket;
        Outcome outcome;
        List<OutboxMessage> batch;
        long startedAt;
        long completedAt;
        PublishResult result;
        Throwable error;
        /** A row after the batch that the store could not decode (R12); null when none. */
        CorruptMessageException corrupt;
        /** The classified failure of the publish, when it failed. */
        PoisonGuard.Verdict verdict;
        /** Whether the failed message was moved to the dead letters (C4). */
        boolean deadLettered;
        /** Why the policy's move was refused (another dead letter holds the id); null when it was not. */
        DeadLetterConflictException conflict;
        /** The batch size asked of the store: one while the head has counted failures (R12). */
        int limit;
        /** A batch read ahead by the bucket's previous task, to publish without reading; or null. */
        ReadBatch given;
        /** {@link LeaseTable#breaks()} before this task's first lease check. */
        long breaks;
        /** The bucket's next batch, read while this task's batch was published; null when none. */
        List<OutboxMessage> ahead;
        /** Parts still running (the publish with its delete, the read ahead); the last one reports. */
        final AtomicInteger parts = new AtomicInteger(1);
        /** Set by the publishing thread: the bucket was hinted while this task ran (R8). */
        volatile boolean hinted;
        /** Set once {@link #batch} is final and its publish starts. */
        volatile boolean publishing;
        /** Whether a read ahead was started for this task (at most one). */
        final java.util.concurrent.atomic.AtomicBoolean aheadClaimed = new java.util.concurrent.atomic.AtomicBoolean();

        Task(int bucket) {
            this.bucket = bucket;
        }
    }

    private final OutboxStore store;
    private final LeaseRenewal renewal;
    private final LeaseRelease release;
    private final DeadLetters deadLetters;
    /** The store's read ahead (C5) when {@link RelayOptions#prefetch()} is on; else null. */
    private final ReadAhead readAhead;
    private final PoisonGuard poison;
    private final OutboxPublisher publisher;
    private final RelayOptions options;
    private final String relayId;
    private final Clock clock;
    private final RelayListener listener;
    private final Backoff backoff;
    private final long renewMillis;
    private final long pollNanos;
    private final long publishNeedsMillis;
    private final LeaseTable leases;
    private final WakeSignal wake = new WakeSignal();
    /** Runs the buckets' tasks: {@link RelayOptions#storeConcurrency()} daemon threads. */
    private final ThreadPoolExecutor storeWork;
    /** Tasks done, for the publishing thread. */
    private final BlockingQueue<Task> completed = new LinkedBlockingQueue<>();
    /** Held around every acquire and renew call: the store never sees them overlap. */
    private final ReentrantLock leaseCalls = new ReentrantLock();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicReference<RuntimeException> renewalFatal = new AtomicReference<>();
    private final CompletableFuture<Void> termination = new CompletableFuture<>();
    private final AtomicBoolean terminating = new AtomicBoolean();
    /** Set when a failure stops new work: tasks not yet started do nothing. */
    private volatile boolean halted;
    /** Set when the relay stops without waiting for its tasks: they delete nothing more. */
    private volatile boolean abandoned;
    private volatile long renewRetryAt = Long.MIN_VALUE;
    /** Passes of the publishing loop so far, for benchmarks; written by the publishing thread only. */
    private volatile long cycles;
    private BitSet announcedOwned = new BitSet();

    // publishing thread
    private final BitSet ready = new BitSet();
    /** R8: buckets hinted while their task ran; their task's end must not clear the hint. */
    private final BitSet hintedWhileBusy = new BitSet();
    private final Map<Integer, Retry> retries = new HashMap<>();
    /** Batches read ahead of a whole acknowledged publish, by bucket, for the bucket's next task. */
    private final Map<Integer, ReadBatch> readAheads = new HashMap<>();
    /** Buckets with a task submitted whose outcome is not applied yet. */
    private final BitSet busy = new BitSet();
    /** The task of each busy bucket; publishing thread only. */
    private final Map<Integer, Task> running = new HashMap<>();
    /**
     * Busy buckets the last acquisition kept that the plan may give up once they are idle (R11):
     * the end of one's task makes the next acquisition due.
     */
    private final BitSet keptWhileBusy = new BitSet();
    private boolean discoverNow = true;
    private long nextDiscoveryNanos;
    private int storeFailures;
    /** The first failure since the last backoff; a misconfiguration or an Error wins over others. */
    private Throwable failure;

    RelayEngine(OutboxStore store, OutboxPublisher publisher, RelayOptions options, Clock clock,
                RelayListener listener) {
        this.store = store;
        this.renewal = store instanceof LeaseRenewal r ? r : null;
        this.release = store instanceof LeaseRelease r ? r : null;
        this.deadLetters = store instanceof DeadLetters d ? d : null;
        this.readAhead = options.prefetch() && store instanceof ReadAhead r ? r : null;
        if (options.poisonPolicy() == PoisonPolicy.DEAD_LETTER && deadLetters == null) {
            throw new OutboxMisconfigurationException("relay option " + RelayOptions.POISON_POLICY_CONFIG
                    + "=dead-letter needs a store with dead letters, but " + store.getClass().getName()
                    + " does not implement DeadLetters (capability C4); use " + RelayOptions.POISON_POLICY_CONFIG
                    + "=block or a store that has them");
        }
        this.poison = new PoisonGuard(options.poisonPolicy(), options.poisonMaxAttempts(), options.relayId(), clock);
        this.publisher = publisher;
        this.options = options;
        this.relayId = options.relayId();
        this.clock = clock;
        this.listener = listener;
        this.backoff = new Backoff(options.errorBackoff().toMillis(), options.maxErrorBackoff().toMillis());
        this.renewMillis = options.leaseRenewInterval().toMillis();
        this.pollNanos = options.pollInterval().toNanos();
        // R5: with renewal a publish needs one renew interval of lease left; without, its whole budget too.
        this.publishNeedsMillis = renewMillis + (renewal == null ? options.maxPublishDuration().toMillis() : 0);
        this.leases = new LeaseTable(options.leaseDuration().toMillis(), renewMillis, publishNeedsMillis);
        AtomicInteger threads = new AtomicInteger();
        this.storeWork = new ThreadPoolExecutor(options.storeConcurrency(), options.storeConcurrency(), 0,
                TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), body -> {
                    Thread t = new Thread(body, "outbox-relay-" + relayId + "-store-" + threads.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
    }

    /** How many passes the publishing loop has made; for benchmarks. */
    long cycles() {
        return cycles;
    }

    boolean hasRenewal() {
        return renewal != null;
    }

    CompletableFuture<Void> termination() {
        return termination;
    }

    List<Integer> ownedBuckets() {
        return BucketSets.toList(leases.usable(clock.millis()));
    }

    PoisonGuard poison() {
        return poison;
    }

    void wakeUp() {
        wake.wakeUp();
    }

    void wakeUp(int[] buckets) {
        wake.wakeUp(buckets);
    }

    /** Ends waits; the loop starts no new task, lets the started ones finish, then stops. */
    void stop() {
        wake.stop();
    }

    /**
     * Completes the termination of a relay that never ran, or whose thread did not stop in time;
     * tasks still running then delete nothing more.
     */
    void terminated() {
        abandon();
        terminate(null);
    }

    private void abandon() {
        abandoned = true;
        storeWork.shutdownNow();
    }

    /** Reports the stop once: the listener first, so it has run when {@link #termination()} completes. */
    private void terminate(Throwable fatal) {
        if (!terminating.compareAndSet(false, true)) {
            return;
        }
        listener.onTerminated(fatal);
        if (fatal == null) {
            termination.complete(null);
        } else {
            termination.completeExceptionally(fatal);
        }
    }

    /** The publishing thread's body. */
    void run() {
        LOG.info("relay started relayId={} bucketCount={} batchSize={} storeConcurrency={} leaseRenewal={} "
                + "leaseRelease={} prefetch={}", relayId, options.bucketCount(), options.batchSize(),
                options.storeConcurrency(), renewal != null, release != null, readAhead != null);
        Throwable fatal = null;
        try {
            while (!wake.isStopped()) {
                try {
                    cycles++;
                    cycle();
                    if (failure == null) {
                        storeFailures = 0;
                    }
                } catch (RuntimeException e) {
                    fail(e);
                }
                if (failure != null) {
                    // A failure stops new work; the started tasks still delete their acknowledged prefixes.
                    awaitTasks();
                    storeError(fatalOrTake());
                }
            }
            awaitTasks(); // R9: a graceful stop lets the started tasks finish
            if (failure != null) {
                RuntimeException last = fatalOrTake();
                LOG.warn("store call failed while stopping relayId={} error={}", relayId,
                        LogText.oneLine(last.toString()));
            }
        } catch (InterruptedException e) {
            LOG.debug("relay thread interrupted relayId={}", relayId);
        } catch (RuntimeException | Error e) {
            fatal = e;
        } finally {
            finish(fatal);
        }
    }

    /** Notes a failure; a misconfiguration or an Error wins over an earlier failure of another kind. */
    private void fail(Throwable e) {
        halted = true;
        if (failure == null || rank(e) > rank(failure)) {
            failure = e;
        }
    }

    private static int rank(Throwable e) {
        return e instanceof Error ? 2 : e instanceof OutboxMisconfigurationException ? 1 : 0;
    }

    /** Takes the noted failure; throws it when it is fatal (R6), else returns it for a backoff. */
    private RuntimeException fatalOrTake() {
        Throwable taken = failure;
        failure = null;
        halted = false;
        if (taken instanceof Error error) {
            throw error;
        }
        if (taken instanceof OutboxMisconfigurationException fatal) {
            throw fatal;
        }
        return (RuntimeException) taken;
    }

    private void cycle() throws InterruptedException {
        RuntimeException fromRenewal = renewalFatal.getAndSet(null);
        if (fromRenewal != null) {
            throw fromRenewal;
        }
        WakeSignal.Hints hints = wake.take();
        applyCompleted();
        if (failure != null) {
            return;
        }
        boolean acquired = false;
        if (leases.acquireDue(clock.millis())) {
            // R11: no waiting for the tasks; the store keeps the busy buckets.
            acquire();
            acquired = true;
        }
        BitSet publishable = leases.publishable(clock.millis());
        if (publishable.isEmpty()) {
            if (acquired && !leases.isEmpty()) {
                LOG.warn("lease too short to publish right after acquiring it relayId={} leaseLeft.ms={} "
                        + "needs.ms={}; raise lease.duration.ms or speed up the store", relayId,
                        leases.remainingMillis(clock.millis()), publishNeedsMillis);
            }
            ready.clear();
            readAheads.clear();
            wake.awaitWakeUp(TimeUnit.MILLISECONDS.toNanos(leases.millisUntilAcquire(clock.millis())));
            return;
        }
        long now = System.nanoTime();
        if (discoverNow || hints.discover() || now - nextDiscoveryNanos >= 0) {
            discover(publishable);
        }
        for (int bucket : hints.buckets()) {
            if (publishable.get(bucket)) {
                ready.set(bucket);
                if (busy.get(bucket) || readAheads.containsKey(bucket)) {
                    hintedWhileBusy.set(bucket); // the batch read (or read ahead) may be behind the commit
                }
                Task runningTask = running.get(bucket);
                if (runningTask != null) {
                    hintedDuringTask(runningTask);
                }
            }
        }
        ready.and(publishable);
        if (!readAheads.isEmpty()) {
            readAheads.keySet().removeIf(bucket -> !ready.get(bucket));
        }
        boolean started = false;
        for (int bucket = ready.nextSetBit(0); bucket >= 0; bucket = ready.nextSetBit(bucket + 1)) {
            Retry retry = retries.get(bucket);
            if (!busy.get(bucket) && (retry == null || now - retry.retryAtNanos() >= 0)) {
                if (wake.isStopped() || !submit(bucket)) {
                    break;
                }
                started = true;
            }
        }
        if (!started) {
            idle();
        }
    }

    /**
     * Waits for a wake-up, a task's end, or until the next discovery, acquisition or bucket retry
     * is due (R8).
     */
    private void idle() throws InterruptedException {
        long now = System.nanoTime();
        long wait = Math.min(TimeUnit.MILLISECONDS.toNanos(leases.millisUntilAcquire(clock.millis())),
                nextDiscoveryNanos - now);
        for (Map.Entry<Integer, Retry> entry : retries.entrySet()) {
            int bucket = entry.getKey();
            Retry retry = entry.getValue();
            if (ready.get(bucket) && !busy.get(bucket)) {
                wait = Math.min(wait, retry.retryAtNanos() - now);
            }
        }
        if (wait > 0) {
            wake.awaitWakeUp(wait);
        }
    }

    private void acquire() {
        BitSet owned;
        BitSet held;
        BitSet busyHeld;
        leaseCalls.lock();
        try {
            held = leases.lastReported();
            busyHeld = (BitSet) held.clone();
            busyHeld.and(busy);
            long startedAt = clock.millis(); // R1: the lease's age counts from before the call
            owned = checkBuckets(store.acquireBucketLeases(new LeaseRequest(relayId, options.bucketCount(),
                    options.leaseDuration(), BucketSets.toList(held), BucketSets.toList(busyHeld))),
                    "acquireBucketLeases");
            leases.acquired(owned, startedAt);
        } finally {
            leaseCalls.unlock();
        }
        noteKeptWhileBusy(held, busyHeld, owned);
        if (announce(owned)) {
            discoverNow = true;
        }
        retries.keySet().removeIf(bucket -> !owned.get(bucket));
        readAheads.keySet().removeIf(bucket -> !owned.get(bucket));
        poison.retain(owned);
    }

    /**
     * R11: remembers the busy buckets this acquisition kept when it may have kept them above the
     * share: it gave up a held bucket (the plan is shrinking this relay), or every owned bucket was
     * busy (they may all be above the share). Logs a busy bucket the store did not keep: its
     * publish goes on, but nothing of it is deleted (R9).
     */
    private void noteKeptWhileBusy(BitSet held, BitSet busyHeld, BitSet owned) {
        BitSet given = (BitSet) held.clone();
        given.andNot(owned);
        BitSet busyKept = (BitSet) busyHeld.clone();
        busyKept.and(owned);
        BitSet idleOwned = (BitSet) owned.clone();
        idleOwned.andNot(busyKept);
        keptWhileBusy.clear();
        if (!busyKept.isEmpty() && (!given.isEmpty() || idleOwned.isEmpty())) {
            keptWhileBusy.or(busyKept);
        }
        BitSet busyLost = (BitSet) busyHeld.clone();
        busyLost.andNot(owned);
        if (!busyLost.isEmpty()) {
            LOG.warn("leases of buckets with a publish in flight were not kept; their batches are left to the next "
                    + "owner relayId={} buckets={}", relayId, BucketSets.describe(busyLost));
        }
    }

    private void discover(BitSet owned) {
        BitSet pending = checkBuckets(store.bucketsWithPending(BucketSets.toList(owned)), "bucketsWithPending");
        pending.and(owned);
        ready.or(pending);
        discoverNow = false;
        nextDiscoveryNanos = System.nanoTime() + pollNanos;
    }

    // ---- the buckets' tasks: these methods run on the pool's threads ----

    /** Starts a task for the bucket (R4: one batch per bucket at a time); false if the pool is shut down. */
    private boolean submit(int bucket) {
        Task task = new Task(bucket);
        task.given = readAheads.remove(bucket);
        try {
            storeWork.execute(() -> fetchAndPublish(task));
        } catch (RejectedExecutionException e) {
            return false;
        }
        busy.set(bucket);
        running.put(bucket, task);
        return true;
    }

    /** Reads the bucket's batch and starts its publish, rechecking the lease after the read (R1). */
    private void fetchAndPublish(Task task) {
        try {
            int bucket = task.bucket;
            if (halted || abandoned || wake.isStopped()) {
                done(task, Outcome.SKIPPED);
                return;
            }
            task.breaks = leases.breaks(); // before the check: a break after it changes the count
            if (!leases.canStartPublish(bucket, clock.millis())) {
                done(task, Outcome.NO_LEASE);
                return;
            }
            List<OutboxMessage> batch;
            try {
                task.limit = poison.batchLimit(bucket, options.batchSize());
                ReadBatch given = task.given;
                task.given = null;
                if (given != null && given.breaks() == task.breaks && task.limit == options.batchSize()) {
                    // Read ahead under a lease held without a break since (R1): no read needed.
                    batch = given.batch();
                } else {
                    batch = store.nextBatch(bucket, task.limit);
                }
            } catch (CorruptMessageException e) {
                if (e.bucket() != bucket) {
                    throw e;
                }
                // R12: a data error of one row stays in its bucket; the rows ahead of it still go out.
                task.corrupt = e;
                batch = e.messagesBefore();
            }
            if (batch == null) {
                throw new IllegalStateException("the store's nextBatch returned null");
            }
            if (batch.isEmpty()) {
                if (task.corrupt != null) {
                    task.batch = List.of();
                    task.result = PublishResult.failure(0, task.corrupt);
                    deleteAcknowledged(task);
                    return;
                }
                done(task, Outcome.EMPTY);
                return;
            }
            checkBatch(bucket, batch);
            if (!leases.canStartPublish(bucket, clock.millis())) { // R1: right before the publish
                done(task, Outcome.NO_LEASE);
                return;
            }
            task.batch = batch;
            task.publishing = true; // after the batch: a hint from now on may start the read ahead itself
            boolean ahead = mayReadAhead(task) && (batch.size() == task.limit || task.hinted)
                    && task.aheadClaimed.compareAndSet(false, true);
            if (ahead) {
                task.parts.incrementAndGet(); // before the publish, whose end may report at once
            }
            startPublish(task);
            if (ahead) {
                readAhead(task);
            }
        } catch (RuntimeException | Error e) {
            task.error = e;
            done(task, Outcome.FAILED);
        }
    }

    /** Whether the task's batch may have a read ahead (C5): prefetch on, no corrupt row, no counted failure. */
    private boolean mayReadAhead(Task task) {
        return readAhead != null && task.corrupt == null && task.limit == options.batchSize();
    }

    /**
     * R8 with the pipelined drain: a commit hinted while the bucket's task runs is read ahead at
     * once (leaving out the task's batch), so the bucket's next task publishes it as soon as this
     * one ends, without a read of its own. Runs on the publishing thread; the task's thread
     * starts the read itself when the hint came before its publish began.
     */
    private void hintedDuringTask(Task task) {
        if (readAhead == null) {
            return;
        }
        task.hinted = true;
        if (task.publishing && mayReadAhead(task) && task.aheadClaimed.compareAndSet(false, true)
                && task.parts.getAndUpdate(p -> p > 0 ? p + 1 : p) > 0) {
            try {
                storeWork.execute(() -> readAhead(task));
            } catch (RejectedExecutionException e) {
                partDone(task);
            }
        }
    }

    /**
     * Reads the bucket's next batch while the task's batch is published. A failed or odd read is
     * only discarded: the bucket then reads from its head, where a lasting error shows (R3).
     */
    private void readAhead(Task task) {
        try {
            if (!halted && !abandoned && !wake.isStopped()) {
                List<OutboxMessage> next = readAhead.nextBatchExcluding(task.bucket, task.batch, options.batchSize());
                if (next == null) {
                    throw new IllegalStateException("the store's nextBatchExcluding returned null");
                }
                checkBatch(task.bucket, next);
                task.ahead = next;
            }
        } catch (RuntimeException | Error e) {
            LOG.debug("reading ahead failed; the bucket reads from its head next relayId={} bucket={} error={}",
                    relayId, task.bucket, LogText.oneLine(e.toString()));
            task.ahead = null;
        } finally {
            partDone(task);
        }
    }

    private void startPublish(Task task) {
        List<OutboxMessage> batch = task.batch;
        task.startedAt = clock.millis();
        inFlight.incrementAndGet();
        CompletableFuture<PublishResult> future;
        try {
            future = publisher.publish(batch);
            if (future == null) {
                future = CompletableFuture.failedFuture(new IllegalStateException("the publisher returned null"));
            }
        } catch (RuntimeException e) {
            future = CompletableFuture.failedFuture(e);
        }
        future.whenComplete((result, error) -> {
            task.result = normalize(result, error, batch.size());
            if (task.corrupt != null && !task.result.failed()) {
                task.result = PublishResult.failure(batch.size(), task.corrupt);
            }
            task.completedAt = clock.millis();
            inFlight.decrementAndGet();
            // The callback may run on the publisher's I/O thread: the delete runs on the pool.
            try {
                storeWork.execute(() -> deleteAcknowledged(task));
            } catch (RejectedExecutionException e) {
                done(task, Outcome.ABANDONED);
            }
        });
    }

    /** Deletes the acknowledged prefix (R2), only while the lease is held (R9). */
    private void deleteAcknowledged(Task task) {
        try {
            if (abandoned) {
                done(task, Outcome.ABANDONED);
                return;
            }
            if (!leases.isHeld(task.bucket, clock.millis())) {
                done(task, Outcome.LEASE_LOST);
                return;
            }
            int acknowledged = task.result.acknowledged();
            if (acknowledged > 0) {
                store.markPublished(task.bucket, task.batch.subList(0, acknowledged));
                poison.acknowledged(task.bucket);
            }
            if (task.result.failed() && !(task.result.firstError() instanceof BucketFencedException)) {
                classifyFailure(task); // a fenced publish (K6) is a lost lease, not a message's failure
            }
            done(task, Outcome.PUBLISHED);
        } catch (RuntimeException | Error e) {
            task.error = e;
            done(task, Outcome.FAILED);
        }
    }

    /**
     * R12: counts a message-specific failure and, when the policy gives up, moves the message (C4).
     * With C4 the count goes on from the bucket's stored record after a takeover or a restart, and
     * each counted failure is stored, so a peer, the next owner and {@code outbox-relay pending}
     * see it. A move refused because a dead letter with another record holds the message id
     * ({@link DeadLetterConflictException}) keeps the bucket waiting behind the message, as under
     * {@code block}; other buckets are not held up.
     */
    private void classifyFailure(Task task) {
        int acknowledged = task.result.acknowledged();
        UUID failed = acknowledged < task.batch.size() ? task.batch.get(acknowledged).messageId()
                : task.corrupt.messageId();
        Throwable error = task.result.firstError();
        if (deadLetters != null && FailureKind.classify(error) == FailureKind.MESSAGE
                && !poison.counting(task.bucket, failed)) {
            resumeCount(task.bucket, failed);
        }
        task.verdict = poison.failed(task.bucket, failed, error);
        if (task.verdict.kind() != FailureKind.MESSAGE || deadLetters == null
                || !leases.isHeld(task.bucket, clock.millis())) {
            return;
        }
        DeadLetterFailure record = task.verdict.failure();
        if (task.verdict.giveUp()) {
            try {
                task.deadLettered = deadLetters.moveToDeadLetters(task.bucket, failed, record);
                poison.forget(task.bucket);
                return;
            } catch (DeadLetterConflictException e) {
                task.conflict = e; // nothing changed: the message stays pending and its bucket waits
                record = new DeadLetterFailure(LogText.oneLine(e.getMessage()) + "; last error: " + record.reason(),
                        record.causeClass(), record.attempts(), record.firstFailureAt(), record.lastFailureAt(),
                        record.relayId());
            }
        }
        try {
            deadLetters.recordHeadFailure(task.bucket, failed, record);
        } catch (RuntimeException e) {
            // The count goes on in memory; only a takeover before the next stored record loses it.
            LOG.warn("could not store the failures of a bucket's head relayId={} bucket={} messageId={} error={}",
                    relayId, task.bucket, failed, LogText.oneLine(e.toString()));
        }
    }

    /** Reads the bucket's stored record of its failing head (C4) and goes on from it. */
    private void resumeCount(int bucket, UUID failed) {
        try {
            for (HeadFailure stored : deadLetters.headFailures(List.of(bucket))) {
                if (stored.bucket() == bucket && stored.messageId().equals(failed)) {
                    poison.resume(bucket, failed, stored.failure());
                    LOG.info("going on with the stored failures of a bucket's head relayId={} bucket={} messageId={} "
                            + "attempts={} countedBy={}", relayId, bucket, failed, stored.failure().attempts(),
                            stored.failure().relayId());
                }
            }
        } catch (RuntimeException e) {
            LOG.warn("could not read the stored failures of a bucket's head; counting from here relayId={} bucket={} "
                    + "messageId={} error={}", relayId, bucket, failed, LogText.oneLine(e.toString()));
        }
    }

    private void done(Task task, Outcome outcome) {
        task.outcome = outcome;
        partDone(task);
    }

    /** Hands the task to the publishing thread once its last part ended. */
    private void partDone(Task task) {
        if (task.parts.decrementAndGet() == 0) {
            completed.add(task);
            wake.poke();
        }
    }

    // ---- back on the publishing thread ----

    /** Applies the outcomes of the tasks that are done, without waiting. */
    private void applyCompleted() {
        for (Task task = completed.poll(); task != null; task = completed.poll()) {
            apply(task);
        }
    }

    /** Waits until every submitted task is done, applying their outcomes. */
    private void awaitTasks() throws InterruptedException {
        applyCompleted();
        while (!busy.isEmpty()) {
            apply(completed.take());
        }
    }

    private void apply(Task task) {
        busy.clear(task.bucket);
        running.remove(task.bucket);
        if (keptWhileBusy.get(task.bucket)) {
            // R11: the plan may give this bucket up now that its task ended; ask soon, not a renew interval later.
            keptWhileBusy.clear(task.bucket);
            leases.acquireSoon(pollNanos / 1_000_000);
        }
        try {
            switch (task.outcome) {
                case SKIPPED, ABANDONED -> { }
                case EMPTY -> ready.clear(task.bucket);
                case NO_LEASE -> {
                    // R1, R5: reacquire before publishing this bucket again.
                    LOG.debug("not publishing bucket without enough lease relayId={} bucket={} leaseLeft.ms={}",
                            relayId, task.bucket, leases.remainingMillis(clock.millis()));
                    ready.clear(task.bucket);
                    leases.forceAcquire();
                }
                case LEASE_LOST -> {
                    if (fencedOff(task)) {
                        return;
                    }
                    // R9: the lease ended during the publish; a new owner republishes, nothing is deleted here.
                    LOG.warn("lease lost while publishing; leaving the batch to the next owner relayId={} bucket={} "
                            + "count={} acknowledged={}", relayId, task.bucket, task.batch.size(),
                            task.result.acknowledged());
                    ready.clear(task.bucket);
                    retries.remove(task.bucket);
                    poison.forget(task.bucket);
                }
                case PUBLISHED -> {
                    if (!fencedOff(task)) {
                        published(task);
                    }
                }
                case FAILED -> fail(task.error);
            }
            if (hintedWhileBusy.get(task.bucket)) {
                // R8: a commit hinted while this batch was read or published may be behind it. With a
                // batch read ahead, the hint may be behind that one too: it holds for the next task.
                if (!readAheads.containsKey(task.bucket)) {
                    hintedWhileBusy.clear(task.bucket);
                }
                if (task.outcome == Outcome.EMPTY || task.outcome == Outcome.PUBLISHED) {
                    ready.set(task.bucket);
                }
            }
        } catch (RuntimeException e) {
            fail(e);
        }
    }

    private void published(Task task) {
        int bucket = task.bucket;
        PublishResult result = task.result;
        int acknowledged = result.acknowledged();
        if (acknowledged > 0) {
            listener.onPublished(bucket, acknowledged);
        }
        if (result.failed()) {
            PoisonGuard.Verdict verdict = task.verdict;
            if (task.deadLettered) {
                // R12, dead-letter policy: the bucket goes on with the messages behind it at once.
                retries.remove(bucket);
                LOG.warn("moved a message to the dead letters after {} message-specific failures; its bucket goes on "
                        + "relayId={} bucket={} messageId={} cause={} error={}", verdict.attempts(), relayId, bucket,
                        verdict.messageId(), verdict.failure().causeClass(), verdict.failure().reason());
                listener.onPublishFailed(bucket, acknowledged, result.firstError());
                listener.onMessageFailed(bucket, verdict.messageId(), verdict.attempts(), result.firstError());
                listener.onDeadLettered(bucket, verdict.messageId(), verdict.failure());
                checkPublishBudget(task);
                return;
            }
            int failures = retries.containsKey(bucket) ? retries.get(bucket).failures() + 1 : 1;
            long delay = backoff.jitteredDelayMillis(failures);
            retries.put(bucket, new Retry(failures, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(delay)));
            String error = LogText.oneLine(String.valueOf(result.firstError()));
            if (task.conflict != null) {
                LOG.warn("cannot move a message to the dead letters: another dead letter holds its id; its bucket "
                        + "waits behind it relayId={} bucket={} messageId={} attempts={} backoff.ms={} error={} "
                        + "conflict={}", relayId, bucket, verdict.messageId(), verdict.attempts(), delay, error,
                        LogText.oneLine(task.conflict.getMessage()));
            } else if (verdict != null && verdict.kind() == FailureKind.MESSAGE) {
                if (verdict.warn()) {
                    LOG.warn("message failed for a reason of its own; its bucket waits behind it (poison.policy={}) "
                            + "relayId={} bucket={} messageId={} attempts={} backoff.ms={} error={}",
                            poison.policy().configName(), relayId, bucket, verdict.messageId(), verdict.attempts(),
                            delay, error);
                }
            } else {
                LOG.warn("publish failed; retrying from the first unacknowledged message relayId={} bucket={} "
                        + "count={} acknowledged={} messageId={} failures={} backoff.ms={} error={}", relayId, bucket,
                        task.batch.size(), acknowledged, verdict == null ? null : verdict.messageId(), failures,
                        delay, error);
            }
            listener.onPublishFailed(bucket, acknowledged, result.firstError());
            if (verdict != null && verdict.kind() == FailureKind.MESSAGE) {
                listener.onMessageFailed(bucket, verdict.messageId(), verdict.attempts(), result.firstError());
            }
            if (result.firstError() instanceof OutboxMisconfigurationException fatal) {
                throw fatal; // R6: from the publisher too
            }
        } else {
            retries.remove(bucket);
            LOG.debug("published relayId={} bucket={} count={}", relayId, bucket, acknowledged);
            if (task.ahead != null && !task.ahead.isEmpty()) {
                readAheads.put(bucket, new ReadBatch(task.ahead, task.breaks));
            } else if (task.batch.size() < task.limit) {
                ready.clear(bucket);
            }
        }
        checkPublishBudget(task);
    }

    private static PublishResult normalize(PublishResult result, Throwable error, int size) {
        if (error != null) {
            return PublishResult.failure(0, error instanceof CompletionException && error.getCause() != null
                    ? error.getCause() : error);
        }
        if (result == null) {
            return PublishResult.failure(0, new IllegalStateException("the publisher completed without a result"));
        }
        if (result.acknowledged() > size) {
            return PublishResult.failure(0, new IllegalStateException("the publisher acknowledged "
                    + result.acknowledged() + " of " + size + " messages"));
        }
        if (!result.failed() && result.acknowledged() < size) {
            return PublishResult.failure(result.acknowledged(), new IllegalStateException("the publisher acknowledged "
                    + result.acknowledged() + " of " + size + " messages without an error"));
        }
        return result;
    }

    /** R5 without renewal: a publish over its budget may have outlived its lease; that is a misconfiguration. */
    private void checkPublishBudget(Task publish) {
        if (renewal != null) {
            return;
        }
        long took = publish.completedAt - publish.startedAt;
        long budget = options.maxPublishDuration().toMillis();
        if (took > budget) {
            throw new OutboxMisconfigurationException("publishing " + publish.batch.size() + " messages of bucket "
                    + publish.bucket + " took " + took + " ms, more than " + RelayOptions.MAX_PUBLISH_DURATION_MS_CONFIG
                    + " (" + budget + "); the store cannot renew leases, so the lease may have ended during the "
                    + "publish. Raise " + RelayOptions.MAX_PUBLISH_DURATION_MS_CONFIG + " and "
                    + RelayOptions.LEASE_DURATION_MS_CONFIG + ", or bound the publisher more tightly (Kafka: "
                    + "max.block.ms + delivery.timeout.ms)");
        }
    }

    /** R3: log, drop lease state, back off (wake-ups do not shorten it), retry. No task is running. */
    private void storeError(RuntimeException e) throws InterruptedException {
        storeFailures++;
        long delay = backoff.jitteredDelayMillis(storeFailures);
        if (storeFailures == 1) {
            LOG.warn("store call failed; dropping leases and retrying relayId={} failures={} backoff.ms={}", relayId,
                    storeFailures, delay, e);
        } else {
            LOG.warn("store call failed; dropping leases and retrying relayId={} failures={} backoff.ms={} error={}",
                    relayId, storeFailures, delay, LogText.oneLine(e.toString()));
        }
        listener.onStoreError(e);
        leases.clear();
        ready.clear();
        readAheads.clear();
        discoverNow = true;
        announce(new BitSet());
        wake.awaitStop(TimeUnit.MILLISECONDS.toNanos(delay));
    }

    /** R5: runs on the renewal thread; renews while a publish is in flight. */
    void renewIfDue() {
        try {
            long now = clock.millis();
            if (inFlight.get() == 0 || now < renewRetryAt || !leases.renewalDue(now)) {
                return;
            }
            BitSet lost;
            leaseCalls.lock();
            try {
                LeaseTable.Snapshot held = leases.snapshot(clock.millis());
                if (held.buckets().isEmpty()) {
                    return;
                }
                long startedAt = clock.millis();
                List<Integer> stillHeld = renewal.renewBucketLeases(new LeaseRequest(relayId, options.bucketCount(),
                        options.leaseDuration(), BucketSets.toList(held.buckets())));
                lost = leases.renewed(held, stillHeld == null ? new BitSet()
                        : checkBuckets(stillHeld, "renewBucketLeases"), startedAt);
            } finally {
                leaseCalls.unlock();
            }
            if (lost.isEmpty()) {
                LOG.debug("renewed leases during a publish relayId={}", relayId);
            } else {
                LOG.warn("leases lost during a publish; those buckets get no further publish relayId={} buckets={}",
                        relayId, BucketSets.describe(lost));
                announce(leases.lastReported());
            }
        } catch (OutboxMisconfigurationException e) {
            renewalFatal.compareAndSet(null, e);
        } catch (RuntimeException e) {
            renewRetryAt = clock.millis() + options.errorBackoff().toMillis();
            LOG.warn("lease renewal failed; leases age out unless a later renewal succeeds relayId={} error={}",
                    relayId, LogText.oneLine(e.toString()));
        }
    }

    private void finish(Throwable fatal) {
        wake.stop();
        int pending = busy.cardinality();
        if (pending > 0) {
            abandon();
            LOG.warn("stopping with publishes in flight; leases left to expire relayId={} inFlight={}", relayId,
                    pending);
        } else {
            storeWork.shutdown();
            if (release != null) {
                try {
                    release.releaseBucketLeases(relayId);
                    LOG.info("released bucket leases relayId={}", relayId);
                } catch (RuntimeException e) {
                    LOG.warn("could not release bucket leases; they expire instead relayId={} error={}", relayId,
                            LogText.oneLine(e.toString()));
                }
            }
        }
        leases.clear();
        announce(new BitSet());
        if (fatal == null) {
            LOG.info("relay stopped relayId={}", relayId);
        } else if (fatal instanceof OutboxMisconfigurationException) {
            // R6: the message says what to fix; a stack trace would only bury it.
            LOG.error("relay stopped on a misconfiguration relayId={} error={}", relayId,
                    LogText.oneLine(fatal.getMessage()));
        } else {
            LOG.error("relay stopped on a fatal error relayId={} error={}", relayId, fatal.toString(), fatal);
        }
        terminate(fatal);
    }

    /** Logs and reports a change of owned buckets; returns whether any bucket was gained. */
    private synchronized boolean announce(BitSet owned) {
        if (owned.equals(announcedOwned)) {
            return false;
        }
        BitSet gained = (BitSet) owned.clone();
        gained.andNot(announcedOwned);
        BitSet lost = (BitSet) announcedOwned.clone();
        lost.andNot(owned);
        announcedOwned = (BitSet) owned.clone();
        LOG.info("owned buckets changed relayId={} count={} buckets={} gained={} lost={}", relayId,
                owned.cardinality(), BucketSets.describe(owned), BucketSets.describe(gained),
                BucketSets.describe(lost));
        tellPublisher(lost, gained);
        listener.onOwnedBucketsChanged(BucketSets.toList(owned));
        return !gained.isEmpty();
    }

    /** K5: the publisher follows the leases (per-bucket producers in the transactional mode). */
    private void tellPublisher(BitSet lost, BitSet gained) {
        try {
            if (!lost.isEmpty()) {
                publisher.bucketsReleased(Set.copyOf(BucketSets.toList(lost)));
            }
            if (!gained.isEmpty()) {
                publisher.bucketsAcquired(Set.copyOf(BucketSets.toList(gained)));
            }
        } catch (RuntimeException e) {
            LOG.warn("the publisher failed to follow a change of owned buckets relayId={} error={}", relayId,
                    LogText.oneLine(e.toString()));
        }
    }

    /**
     * K6: the broker fenced the bucket's producer, so another relay holds it now. Nothing was
     * deleted; the bucket is dropped at once, without a backoff, until the store grants it again.
     */
    private boolean fencedOff(Task task) {
        if (task.result == null || !(task.result.firstError() instanceof BucketFencedException fenced)) {
            return false;
        }
        int bucket = task.bucket;
        LOG.warn("bucket fenced by a newer owner; dropping it, nothing deleted relayId={} bucket={} count={} error={}",
                relayId, bucket, task.batch.size(), LogText.oneLine(fenced.getMessage()));
        listener.onPublishFailed(bucket, 0, fenced);
        ready.clear(bucket);
        readAheads.remove(bucket);
        retries.remove(bucket);
        poison.forget(bucket);
        leases.drop(bucket);
        announce(leases.lastReported());
        return true;
    }

    private BitSet checkBuckets(List<Integer> buckets, String call) {
        return BucketSets.fromStore(buckets, options.bucketCount(), call);
    }

    private void checkBatch(int bucket, List<OutboxMessage> batch) {
        if (batch.size() > options.batchSize()) {
            throw new IllegalStateException("the store's nextBatch returned " + batch.size()
                    + " messages, more than the " + options.batchSize() + " asked for");
        }
        for (OutboxMessage m : batch) {
            if (m == null || m.bucket() != bucket) {
                throw new IllegalStateException("the store's nextBatch(" + bucket + ") returned "
                        + (m == null ? "null" : "message " + m.messageId() + " of bucket " + m.bucket()));
            }
        }
    }
}
