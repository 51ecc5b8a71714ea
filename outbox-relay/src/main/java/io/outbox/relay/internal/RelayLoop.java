package io.outbox.relay.internal;

import io.outbox.relay.BucketFencedException;
import io.outbox.relay.ErrorTable;
import io.outbox.relay.FailureKind;
import io.outbox.relay.PublishResult;
import io.outbox.relay.RelayListener;
import io.outbox.relay.RelayOptions;
import io.outbox.spi.LeaseRelease;
import io.outbox.spi.LeaseRequest;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.OutboxStore;
import java.time.Clock;
import java.time.Duration;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;

/**
 * The relay's loop, run by the thread {@code outbox-relay-<relayId>}: it decides and keeps all
 * bookkeeping (leases, ready buckets, retries, batches read ahead, listener calls). Each pass
 * acquires when due, finds the owned buckets with pending messages, and submits a
 * {@link BucketTask} for each due bucket that has none running; a bucket may start its next batch
 * as soon as its last one ended, whatever the other buckets are doing (R4). It applies each task's
 * {@link TaskOutcome} as it arrives, and waits for a wake-up (R8), a task's end, or the next
 * acquisition, discovery or retry.
 *
 * <p>Every field is read and written by the loop thread only. It meets the other threads at these
 * points: {@link StoreWork} (submitting tasks and taking their outcomes from its queue), a running
 * task's {@link BucketTask#hinted()}, the {@link WakeSignal}, the synchronized {@link LeaseTable},
 * {@link PoisonGuard} and {@link OwnedBuckets}, and {@link LeaseKeeper}, whose lock it shares with
 * the renewal thread.
 *
 * <p>Rebalancing never waits for a publish (rule R11): each renew interval the loop re-acquires at
 * once, telling the store which held buckets are busy ({@link LeaseRequest#busyBuckets()}). The
 * store keeps those even above the fair share, so a bucket is never given away while its publish
 * is in flight; buckets that are not busy move as the plan says and the free ones start their
 * next batch at once. When a busy bucket kept at an acquisition that may have left this relay
 * above its share ends its task, the relay acquires again (no sooner than a poll interval after
 * the last acquisition), which releases it if the plan gives it up.
 *
 * <p>A batch read ahead (C5) is kept only when the publish before it was acknowledged whole; the
 * bucket's next task then publishes it without reading, provided the leases had no break since
 * the earlier task checked its lease ({@link LeaseTable#breaks()}, R1) and the head has no counted
 * failure (R12). Any failure, lost lease, fence or stop discards it.
 *
 * <p>Bucket sets (owned, ready, busy) are {@link BitSet}s: a pass's set work is linear in the
 * bucket count (65,536 at most), never quadratic; lists exist only at the SPI and listener edges.
 */
final class RelayLoop {

    private static final Logger LOG = RelayLog.LOG;

    /** A bucket's publish failures in a row and when it may be retried (R3). */
    private record Retry(int failures, long retryAtNanos) {
    }

    private final OutboxStore store;
    /** The store's lease release (C3); null when it has none. */
    private final LeaseRelease release;
    private final StoreWork work;
    private final LeaseKeeper keeper;
    private final LeaseTable leases;
    private final OwnedBuckets owned;
    private final PoisonGuard poison;
    private final WakeSignal wake;
    private final Termination termination;
    private final RelayListener listener;
    private final RelayOptions options;
    private final String relayId;
    private final Clock clock;
    private final Backoff backoff;
    private final long pollNanos;
    private final long publishNeedsMillis;
    /** Whether the store renews leases (C1); without it a publish over its budget is fatal (R5). */
    private final boolean renews;

    private final BitSet ready = new BitSet();
    /** R8: buckets hinted while their task ran; their task's end must not clear the hint. */
    private final BitSet hintedWhileBusy = new BitSet();
    private final Map<Integer, Retry> retries = new HashMap<>();
    /** Batches read ahead of a whole acknowledged publish, by bucket, for the bucket's next task. */
    private final Map<Integer, ReadBatch> readAheads = new HashMap<>();
    /** Buckets with a task submitted whose outcome is not applied yet. */
    private final BitSet busy = new BitSet();
    /** The task of each busy bucket, for hints. */
    private final Map<Integer, BucketTask> running = new HashMap<>();
    /**
     * Busy buckets the last acquisition kept that the plan may give up once they are idle (R11):
     * the end of one's task makes the next acquisition due.
     */
    private final BitSet keptWhileBusy = new BitSet();
    private boolean discoverNow = true;
    private long nextDiscoveryNanos;
    private int storeFailures;
    /** The pass's first failure and the R13 refusals. */
    private final LoopFailures triage;
    /** When the running pass began ({@link System#nanoTime()}); 0 once its end was reported. */
    private long passStartNanos;
    /** Whether the relay is told to drain (H3); any thread writes, the loop thread reads. */
    private volatile boolean draining;
    /** Whether the loop has given up its leases for the current drain; loop thread only. */
    private boolean drained;
    /** Passes so far, for benchmarks; written by the loop thread only. */
    private volatile long cycles;

    RelayLoop(OutboxStore store, StoreWork work, LeaseKeeper keeper, OwnedBuckets owned, WakeSignal wake,
              Termination termination, RelayListener listener, RelayOptions options, Clock clock,
              long publishNeedsMillis, Refusals refusals) {
        this.store = store;
        this.release = store.leaseRelease().orElse(null);
        this.work = work;
        this.keeper = keeper;
        this.leases = work.leases;
        this.owned = owned;
        this.poison = work.poison;
        this.wake = wake;
        this.termination = termination;
        this.listener = listener;
        this.options = options;
        this.relayId = options.relayId();
        this.clock = clock;
        this.backoff = new Backoff(options.errorBackoff().toMillis(), options.maxErrorBackoff().toMillis());
        this.pollNanos = options.pollInterval().toNanos();
        this.publishNeedsMillis = publishNeedsMillis;
        this.renews = keeper.renews();
        this.triage = new LoopFailures(relayId, refusals);
    }

    /**
     * Starts or ends a drain (H3); any thread. The loop then wakes up and acts at its next pass.
     *
     * @param on true to drain, false to resume
     */
    void drain(boolean on) {
        draining = on;
        wake.wakeUp();
    }

    /** Whether a drain was asked for and not ended; any thread. */
    boolean draining() {
        return draining;
    }

    /** Passes so far; any thread. */
    long cycles() {
        return cycles;
    }

    /** The loop thread's body: passes until the stop, then the stop itself (R9). */
    void run() {
        LOG.info("relay started relayId={} bucketCount={} batchSize={} batchMaxBytes={} storeConcurrency={} "
                + "leaseRenewal={} leaseRelease={} prefetch={}", relayId, options.bucketCount(), options.batchSize(),
                options.batchMaxBytes(), options.storeConcurrency(), renews, release != null, work.readAhead != null);
        Throwable fatal = null;
        listener.onStarted(options);
        try {
            while (!wake.isStopped()) {
                try {
                    cycles++;
                    passStartNanos = System.nanoTime();
                    cycle();
                    passEnded();
                    if (!triage.noted()) {
                        storeFailures = 0;
                    }
                } catch (RuntimeException e) {
                    fail(e);
                }
                if (triage.noted()) {
                    // A failure stops new work; the started tasks still delete their acknowledged prefixes.
                    awaitTasks();
                    storeError(fatalOrTake());
                }
            }
            awaitTasks(); // R9: a graceful stop lets the started tasks finish
            if (triage.noted()) {
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

    /** Notes a failure and stops new work; a misconfiguration or an Error wins over an earlier failure. */
    private void fail(Throwable e) {
        work.halt();
        triage.note(e);
    }

    /** Takes the noted failure and lets work start again; throws it when it is fatal (R6). */
    private RuntimeException fatalOrTake() {
        try {
            return triage.take();
        } finally {
            work.resume();
        }
    }

    private void cycle() throws InterruptedException {
        RuntimeException fromRenewal = keeper.renewalFatal();
        if (fromRenewal != null) {
            throw fromRenewal;
        }
        WakeSignal.Hints hints = wake.take();
        applyCompleted();
        if (triage.noted()) {
            return;
        }
        if (draining) {
            drainPass();
            return;
        }
        drained = false;
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
            passEnded();
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
                BucketTask task = running.get(bucket);
                if (task != null) {
                    task.hinted(); // R8 with the pipelined drain: the task may read the commit ahead
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
     * H3: starts no task and takes no lease; once the started tasks ended, forgets the leases and
     * gives them back (C3; without it they expire after the lease duration), so peers take the
     * buckets at their next lease round. A failed release is a store error and is retried.
     */
    private void drainPass() throws InterruptedException {
        ready.clear();
        readAheads.clear();
        if (!busy.isEmpty() || drained) {
            wake.awaitWakeUp(pollNanos);
            return;
        }
        leases.clear();
        owned.announce(new BitSet());
        retries.clear();
        if (release != null) {
            release.releaseBucketLeases(relayId);
        }
        drained = true;
        LOG.info("drained: no lease held or taken until resumed relayId={} leasesReleased={}", relayId,
                release != null);
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
        passEnded();
        if (wait > 0) {
            wake.awaitWakeUp(wait);
        }
    }

    private void acquire() {
        LeaseKeeper.Acquisition acquisition = keeper.acquire(busy);
        BitSet granted = acquisition.owned();
        triage.storeSucceeded(granted.isEmpty());
        noteKeptWhileBusy(acquisition.held(), acquisition.busyHeld(), granted);
        if (owned.announce(granted)) {
            discoverNow = true;
        }
        listener.onLeaseRound(BucketSets.toList(granted));
        retries.keySet().removeIf(bucket -> !granted.get(bucket));
        readAheads.keySet().removeIf(bucket -> !granted.get(bucket));
        poison.retain(granted);
    }

    /**
     * R11: remembers the busy buckets this acquisition kept when it may have kept them above the
     * share: it gave up a held bucket (the plan is shrinking this relay), or every owned bucket was
     * busy (they may all be above the share). Logs a busy bucket the store did not keep: its
     * publish goes on, but nothing of it is deleted (R9).
     */
    private void noteKeptWhileBusy(BitSet held, BitSet busyHeld, BitSet granted) {
        BitSet given = (BitSet) held.clone();
        given.andNot(granted);
        BitSet busyKept = (BitSet) busyHeld.clone();
        busyKept.and(granted);
        BitSet idleOwned = (BitSet) granted.clone();
        idleOwned.andNot(busyKept);
        keptWhileBusy.clear();
        if (!busyKept.isEmpty() && (!given.isEmpty() || idleOwned.isEmpty())) {
            keptWhileBusy.or(busyKept);
        }
        BitSet busyLost = (BitSet) busyHeld.clone();
        busyLost.andNot(granted);
        if (!busyLost.isEmpty()) {
            LOG.warn("leases of buckets with a publish in flight were not kept; their batches are left to the next "
                    + "owner relayId={} buckets={}", relayId, BucketSets.describe(busyLost));
        }
    }

    private void discover(BitSet publishable) {
        BitSet pending = BucketSets.fromStore(store.bucketsWithPending(BucketSets.toList(publishable)),
                options.bucketCount(), "bucketsWithPending");
        pending.and(publishable);
        listener.onPoll(!pending.isEmpty());
        triage.discovered(!pending.isEmpty());
        ready.or(pending);
        discoverNow = false;
        nextDiscoveryNanos = System.nanoTime() + pollNanos;
    }

    /** Starts a task for the bucket (R4: one batch per bucket at a time); false if the pool is shut down. */
    private boolean submit(int bucket) {
        BucketTask task = work.submit(bucket, readAheads.remove(bucket));
        if (task == null) {
            return false;
        }
        busy.set(bucket);
        running.put(bucket, task);
        return true;
    }

    /** Applies the outcomes of the tasks that are done, without waiting. */
    private void applyCompleted() {
        for (TaskOutcome outcome = work.poll(); outcome != null; outcome = work.poll()) {
            apply(outcome);
        }
    }

    /** Reports the running pass's duration once, before any wait (O3). */
    private void passEnded() {
        if (passStartNanos != 0) {
            listener.onCycle(Duration.ofNanos(System.nanoTime() - passStartNanos));
            passStartNanos = 0;
        }
    }

    /** Waits until every submitted task is done, applying their outcomes. */
    private void awaitTasks() throws InterruptedException {
        applyCompleted();
        while (!busy.isEmpty()) {
            apply(work.take());
        }
    }

    private void apply(TaskOutcome outcome) {
        int bucket = outcome.bucket();
        busy.clear(bucket);
        running.remove(bucket);
        if (keptWhileBusy.get(bucket)) {
            // R11: the plan may give this bucket up now that its task ended; ask soon, not a renew interval later.
            keptWhileBusy.clear(bucket);
            leases.acquireSoon(pollNanos / 1_000_000);
        }
        try {
            switch (outcome.kind()) {
                case SKIPPED, ABANDONED -> { }
                case EMPTY -> ready.clear(bucket);
                case NO_LEASE -> {
                    // R1, R5: reacquire before publishing this bucket again.
                    LOG.debug("not publishing bucket without enough lease relayId={} bucket={} leaseLeft.ms={}",
                            relayId, bucket, leases.remainingMillis(clock.millis()));
                    ready.clear(bucket);
                    leases.forceAcquire();
                }
                case LEASE_LOST -> {
                    if (fencedOff(outcome)) {
                        return;
                    }
                    // R9: the lease ended during the publish; a new owner republishes, nothing is deleted here.
                    LOG.warn("lease lost while publishing; leaving the batch to the next owner relayId={} bucket={} "
                            + "count={} acknowledged={}", relayId, bucket, outcome.batchSize(),
                            outcome.result().acknowledged());
                    ready.clear(bucket);
                    retries.remove(bucket);
                    poison.forget(bucket);
                }
                case PUBLISHED -> {
                    if (!fencedOff(outcome)) {
                        published(outcome);
                    }
                }
                case FAILED -> fail(outcome.error());
            }
            if (hintedWhileBusy.get(bucket)) {
                // R8: a commit hinted while this batch was read or published may be behind it. With a
                // batch read ahead, the hint may be behind that one too: it holds for the next task.
                if (!readAheads.containsKey(bucket)) {
                    hintedWhileBusy.clear(bucket);
                }
                if (outcome.kind() == TaskOutcome.Kind.EMPTY || outcome.kind() == TaskOutcome.Kind.PUBLISHED) {
                    ready.set(bucket);
                }
            }
        } catch (RuntimeException e) {
            fail(e);
        }
    }

    private void published(TaskOutcome outcome) {
        int bucket = outcome.bucket();
        PublishResult result = outcome.result();
        int acknowledged = result.acknowledged();
        listener.onPublishCompleted(bucket, outcome.batchSize(), Duration.ofMillis(outcome.publishMillis()));
        if (acknowledged > 0) {
            triage.brokerSucceeded();
            listener.onPublished(bucket, acknowledged);
            listener.onTimesInOutbox(bucket, outcome.timesInOutbox());
        }
        if (result.failed()) {
            publishFailed(outcome);
        } else {
            retries.remove(bucket);
            LOG.debug("published relayId={} bucket={} count={}", relayId, bucket, acknowledged);
            if (outcome.ahead() != null) {
                readAheads.put(bucket, outcome.ahead());
            } else if (!outcome.full()) {
                ready.clear(bucket);
            }
        }
        if (!renews) {
            LoopFailures.checkPublishBudget(outcome, options.maxPublishDuration());
        }
    }

    /**
     * R3, R12: a message moved to the dead letters lets its bucket go on at once; any other failure
     * backs the bucket off, with full jitter, and retries it from the first unacknowledged message.
     */
    private void publishFailed(TaskOutcome outcome) {
        int bucket = outcome.bucket();
        PublishResult result = outcome.result();
        Throwable first = result.firstError();
        if (LoopFailures.errorIn(first) != null) { // an Error in the publisher is fatal, never a message's failure
            if (first instanceof Error error) {
                throw error;
            }
            throw first instanceof RuntimeException runtime ? runtime : new IllegalStateException(first);
        }
        int acknowledged = result.acknowledged();
        HeadFailures.Handled handled = outcome.failure();
        PoisonGuard.Verdict verdict = handled == null ? null : handled.verdict();
        if (handled != null && handled.deadLettered()) {
            // R12, dead-letter policy: the bucket goes on with the messages behind it at once.
            retries.remove(bucket);
            LOG.warn("moved a message to the dead letters after {} message-specific failures; its bucket goes on "
                    + "relayId={} bucket={} messageId={} cause={} error={}", verdict.attempts(), relayId, bucket,
                    verdict.messageId(), verdict.failure().causeClass(), verdict.failure().reason());
            listener.onPublishFailed(bucket, acknowledged, result.firstError());
            listener.onMessageFailed(bucket, verdict.messageId(), verdict.attempts(), result.firstError());
            listener.onDeadLettered(bucket, verdict.messageId(), verdict.failure());
            return;
        }
        ErrorTable.Row refusal;
        try {
            refusal = triage.kafkaRefusal(result.firstError());
        } catch (OutboxMisconfigurationException refusedAtStart) {
            listener.onPublishFailed(bucket, acknowledged, result.firstError());
            throw refusedAtStart;
        }
        int failures = retries.containsKey(bucket) ? retries.get(bucket).failures() + 1 : 1;
        long delay = backoff.jitteredDelayMillis(failures);
        retries.put(bucket, new Retry(failures, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(delay)));
        triage.logPublishFailure(outcome, refusal, failures, delay, poison.policy());
        listener.onPublishFailed(bucket, acknowledged, result.firstError());
        if (verdict != null && verdict.kind() == FailureKind.MESSAGE) {
            listener.onMessageFailed(bucket, verdict.messageId(), verdict.attempts(), result.firstError());
        }
        if (result.firstError() instanceof OutboxMisconfigurationException fatal) {
            throw fatal; // R6: from the publisher too
        }
    }

    /**
     * K6: the broker fenced the bucket's producer, so another relay holds it now. Nothing was
     * deleted; the bucket is dropped at once, without a backoff, until the store grants it again.
     */
    private boolean fencedOff(TaskOutcome outcome) {
        if (outcome.result() == null || !(outcome.result().firstError() instanceof BucketFencedException fenced)) {
            return false;
        }
        int bucket = outcome.bucket();
        LOG.warn("bucket fenced by a newer owner; dropping it, nothing deleted relayId={} bucket={} count={} error={}",
                relayId, bucket, outcome.batchSize(), LogText.oneLine(fenced.getMessage()));
        listener.onPublishFailed(bucket, 0, fenced);
        ready.clear(bucket);
        readAheads.remove(bucket);
        retries.remove(bucket);
        poison.forget(bucket);
        leases.drop(bucket);
        owned.announce(leases.lastReported());
        return true;
    }

    /** R3: log, drop lease state, back off (wake-ups do not shorten it), retry. No task is running. */
    private void storeError(RuntimeException e) throws InterruptedException {
        ErrorTable.Row refusal = triage.storeRefusal(e);
        storeFailures++;
        long delay = backoff.jitteredDelayMillis(storeFailures);
        triage.logStoreError(e, refusal, storeFailures, delay);
        listener.onStoreError(e);
        leases.clear();
        ready.clear();
        readAheads.clear();
        discoverNow = true;
        owned.announce(new BitSet());
        wake.awaitStop(TimeUnit.MILLISECONDS.toNanos(delay));
    }

    /**
     * The stop (R9): with no task running, shuts the store threads down and gives the leases back
     * (C3) so peers take over at once; with tasks still running (a fatal error, an interrupt),
     * abandons them and leaves the leases to expire. Then reports the stop.
     */
    private void finish(Throwable fatal) {
        wake.stop();
        int pending = busy.cardinality();
        if (pending > 0) {
            work.abandon();
            LOG.warn("stopping with publishes in flight; leases left to expire relayId={} inFlight={}", relayId,
                    pending);
        } else {
            work.shutdown();
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
        owned.announce(new BitSet());
        triage.logStop(fatal, options);
        termination.report(fatal);
    }
}
