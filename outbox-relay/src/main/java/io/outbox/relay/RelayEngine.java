package io.outbox.relay;

import io.outbox.spi.LeaseRelease;
import io.outbox.spi.LeaseRenewal;
import io.outbox.spi.LeaseRequest;
import io.outbox.spi.OutboxMessage;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.OutboxStore;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
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
 */
final class RelayEngine {

    private static final Logger LOG = LoggerFactory.getLogger(OutboxRelay.class);

    /** A bucket's publish failures in a row and when it may be retried (R3). */
    private record Retry(int failures, long retryAtNanos) {
    }

    /** One batch being published. */
    private static final class InFlight {
        final int bucket;
        final List<OutboxMessage> batch;
        final long startedAt;
        CompletableFuture<Void> done;
        volatile PublishResult result;
        volatile long completedAt;

        InFlight(int bucket, List<OutboxMessage> batch, long startedAt) {
            this.bucket = bucket;
            this.batch = batch;
            this.startedAt = startedAt;
        }
    }

    private final OutboxStore store;
    private final LeaseRenewal renewal;
    private final LeaseRelease release;
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
    /** Held around every acquire and renew call: the store never sees them overlap. */
    private final ReentrantLock leaseCalls = new ReentrantLock();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicReference<RuntimeException> renewalFatal = new AtomicReference<>();
    private final CompletableFuture<Void> termination = new CompletableFuture<>();
    private final AtomicBoolean terminating = new AtomicBoolean();
    private volatile long renewRetryAt = Long.MIN_VALUE;
    private List<Integer> announcedOwned = List.of();

    // publishing thread
    private final TreeSet<Integer> ready = new TreeSet<>();
    private final Map<Integer, Retry> retries = new HashMap<>();
    private boolean discoverNow = true;
    private long nextDiscoveryNanos;
    private int storeFailures;

    RelayEngine(OutboxStore store, OutboxPublisher publisher, RelayOptions options, Clock clock,
                RelayListener listener) {
        this.store = store;
        this.renewal = store instanceof LeaseRenewal r ? r : null;
        this.release = store instanceof LeaseRelease r ? r : null;
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
    }

    boolean hasRenewal() {
        return renewal != null;
    }

    CompletableFuture<Void> termination() {
        return termination;
    }

    List<Integer> ownedBuckets() {
        return leases.usable(clock.millis());
    }

    void wakeUp() {
        wake.wakeUp();
    }

    void wakeUp(int[] buckets) {
        wake.wakeUp(buckets);
    }

    /** Ends waits; the loop stops before its next store call or publish. */
    void stop() {
        wake.stop();
    }

    /** Completes the termination of a relay that never ran, or whose thread did not stop in time. */
    void terminated() {
        terminate(null);
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
        LOG.info("relay started relayId={} bucketCount={} batchSize={} leaseRenewal={} leaseRelease={}", relayId,
                options.bucketCount(), options.batchSize(), renewal != null, release != null);
        Throwable fatal = null;
        try {
            while (!wake.isStopped()) {
                try {
                    cycle();
                    storeFailures = 0;
                } catch (OutboxMisconfigurationException e) {
                    throw e;
                } catch (RuntimeException e) {
                    storeError(e);
                }
            }
        } catch (InterruptedException e) {
            LOG.debug("relay thread interrupted relayId={}", relayId);
        } catch (RuntimeException | Error e) {
            fatal = e;
        } finally {
            finish(fatal);
        }
    }

    private void cycle() throws InterruptedException {
        RuntimeException fromRenewal = renewalFatal.getAndSet(null);
        if (fromRenewal != null) {
            throw fromRenewal;
        }
        boolean acquired = false;
        if (leases.acquireDue(clock.millis())) {
            acquire();
            acquired = true;
        }
        List<Integer> publishable = leases.publishable(clock.millis());
        WakeSignal.Hints hints = wake.take();
        if (publishable.isEmpty()) {
            if (acquired && !leases.lastReported().isEmpty()) {
                LOG.warn("lease too short to publish right after acquiring it relayId={} leaseLeft.ms={} "
                        + "needs.ms={}; raise lease.duration.ms or speed up the store", relayId,
                        leases.remainingMillis(clock.millis()), publishNeedsMillis);
            }
            ready.clear();
            wake.awaitWakeUp(TimeUnit.MILLISECONDS.toNanos(leases.millisUntilAcquire(clock.millis())));
            return;
        }
        long now = System.nanoTime();
        if (discoverNow || hints.discover() || now - nextDiscoveryNanos >= 0) {
            discover(publishable);
        }
        for (int bucket : hints.buckets()) {
            if (publishable.contains(bucket)) {
                ready.add(bucket);
            }
        }
        ready.retainAll(publishable);
        List<Integer> due = new ArrayList<>();
        for (int bucket : ready) {
            Retry retry = retries.get(bucket);
            if (retry == null || now - retry.retryAtNanos() >= 0) {
                due.add(bucket);
            }
        }
        if (due.isEmpty()) {
            idle();
        } else {
            sweep(due);
        }
    }

    /** Waits for a wake-up until the next discovery, acquisition or bucket retry is due (R8). */
    private void idle() throws InterruptedException {
        long now = System.nanoTime();
        long wait = Math.min(TimeUnit.MILLISECONDS.toNanos(leases.millisUntilAcquire(clock.millis())),
                nextDiscoveryNanos - now);
        for (int bucket : ready) {
            Retry retry = retries.get(bucket);
            if (retry != null) {
                wait = Math.min(wait, retry.retryAtNanos() - now);
            }
        }
        if (wait > 0) {
            wake.awaitWakeUp(wait);
        }
    }

    private void acquire() {
        List<Integer> owned;
        leaseCalls.lock();
        try {
            long startedAt = clock.millis(); // R1: the lease's age counts from before the call
            owned = checkBuckets(store.acquireBucketLeases(new LeaseRequest(relayId, options.bucketCount(),
                    options.leaseDuration(), leases.lastReported())), "acquireBucketLeases");
            leases.acquired(owned, startedAt);
        } finally {
            leaseCalls.unlock();
        }
        if (announce(owned)) {
            discoverNow = true;
        }
        retries.keySet().retainAll(owned);
    }

    private void discover(List<Integer> owned) {
        for (int bucket : checkBuckets(store.bucketsWithPending(owned), "bucketsWithPending")) {
            if (owned.contains(bucket)) {
                ready.add(bucket);
            }
        }
        discoverNow = false;
        nextDiscoveryNanos = System.nanoTime() + pollNanos;
    }

    /**
     * One batch per ready bucket, published concurrently (R4), then the acknowledged prefixes
     * deleted (R2). A store error stops new publishes but the started ones are still awaited and
     * their prefixes deleted before it propagates.
     */
    private void sweep(List<Integer> buckets) throws InterruptedException {
        List<InFlight> started = new ArrayList<>();
        RuntimeException failure = null;
        for (int bucket : buckets) {
            if (wake.isStopped()) {
                break;
            }
            try {
                InFlight publish = fetchAndPublish(bucket);
                if (publish != null) {
                    started.add(publish);
                }
            } catch (RuntimeException e) {
                failure = e;
                break;
            }
        }
        for (InFlight publish : started) {
            try {
                publish.done.get();
            } catch (ExecutionException e) {
                throw new IllegalStateException("unreachable: the completion handler does not throw", e);
            }
        }
        for (InFlight publish : started) {
            try {
                complete(publish);
            } catch (RuntimeException e) {
                if (failure == null || (e instanceof OutboxMisconfigurationException
                        && !(failure instanceof OutboxMisconfigurationException))) {
                    failure = e;
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    private InFlight fetchAndPublish(int bucket) {
        if (!mayPublish(bucket)) {
            return null;
        }
        List<OutboxMessage> batch = store.nextBatch(bucket, options.batchSize());
        if (batch.isEmpty()) {
            ready.remove(bucket);
            return null;
        }
        checkBatch(bucket, batch);
        if (!mayPublish(bucket)) { // R1: recheck after the fetch, right before the publish
            return null;
        }
        return startPublish(bucket, batch);
    }

    /** R1, R5: publish only a held bucket whose lease has enough time left; else reacquire first. */
    private boolean mayPublish(int bucket) {
        if (leases.canStartPublish(bucket, clock.millis())) {
            return true;
        }
        LOG.debug("not publishing bucket without enough lease relayId={} bucket={} leaseLeft.ms={}", relayId, bucket,
                leases.remainingMillis(clock.millis()));
        ready.remove(bucket);
        leases.forceAcquire();
        return false;
    }

    private InFlight startPublish(int bucket, List<OutboxMessage> batch) {
        InFlight publish = new InFlight(bucket, batch, clock.millis());
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
        publish.done = future.handle((result, error) -> {
            publish.result = normalize(result, error, batch.size());
            publish.completedAt = clock.millis();
            inFlight.decrementAndGet();
            return null;
        });
        return publish;
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

    private void complete(InFlight publish) {
        int bucket = publish.bucket;
        PublishResult result = publish.result;
        int acknowledged = result.acknowledged();
        if (!leases.isHeld(bucket, clock.millis())) {
            // R9: the lease ended during the publish; a new owner republishes, nothing is deleted here.
            LOG.warn("lease lost while publishing; leaving the batch to the next owner relayId={} bucket={} count={} "
                    + "acknowledged={}", relayId, bucket, publish.batch.size(), acknowledged);
            ready.remove(bucket);
            retries.remove(bucket);
            return;
        }
        if (acknowledged > 0) {
            store.markPublished(bucket, publish.batch.subList(0, acknowledged));
            listener.onPublished(bucket, acknowledged);
        }
        if (result.failed()) {
            int failures = retries.containsKey(bucket) ? retries.get(bucket).failures() + 1 : 1;
            long delay = backoff.delayMillis(failures);
            retries.put(bucket, new Retry(failures, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(delay)));
            LOG.warn("publish failed; retrying from the first unacknowledged message relayId={} bucket={} count={} "
                    + "acknowledged={} messageId={} failures={} backoff.ms={} error={}", relayId, bucket,
                    publish.batch.size(), acknowledged, publish.batch.get(acknowledged).messageId(), failures, delay,
                    String.valueOf(result.firstError()));
            listener.onPublishFailed(bucket, acknowledged, result.firstError());
            if (result.firstError() instanceof OutboxMisconfigurationException fatal) {
                throw fatal; // R6: from the publisher too
            }
        } else {
            retries.remove(bucket);
            LOG.debug("published relayId={} bucket={} count={}", relayId, bucket, acknowledged);
            if (publish.batch.size() < options.batchSize()) {
                ready.remove(bucket);
            }
        }
        checkPublishBudget(publish);
    }

    /** R5 without renewal: a publish over its budget may have outlived its lease; that is a misconfiguration. */
    private void checkPublishBudget(InFlight publish) {
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

    /** R3: log, drop lease state, back off (wake-ups do not shorten it), retry. */
    private void storeError(RuntimeException e) throws InterruptedException {
        storeFailures++;
        long delay = backoff.delayMillis(storeFailures);
        if (storeFailures == 1) {
            LOG.warn("store call failed; dropping leases and retrying relayId={} failures={} backoff.ms={}", relayId,
                    storeFailures, delay, e);
        } else {
            LOG.warn("store call failed; dropping leases and retrying relayId={} failures={} backoff.ms={} error={}",
                    relayId, storeFailures, delay, e.toString());
        }
        listener.onStoreError(e);
        leases.clear();
        ready.clear();
        discoverNow = true;
        announce(List.of());
        wake.awaitStop(TimeUnit.MILLISECONDS.toNanos(delay));
    }

    /** R5: runs on the renewal thread; renews while a publish is in flight. */
    void renewIfDue() {
        try {
            long now = clock.millis();
            if (inFlight.get() == 0 || now < renewRetryAt || !leases.renewalDue(now)) {
                return;
            }
            Set<Integer> lost;
            leaseCalls.lock();
            try {
                LeaseTable.Snapshot held = leases.snapshot(clock.millis());
                if (held.buckets().isEmpty()) {
                    return;
                }
                long startedAt = clock.millis();
                List<Integer> stillHeld = renewal.renewBucketLeases(new LeaseRequest(relayId, options.bucketCount(),
                        options.leaseDuration(), held.buckets()));
                lost = leases.renewed(held, stillHeld == null ? List.of() : stillHeld, startedAt);
            } finally {
                leaseCalls.unlock();
            }
            if (lost.isEmpty()) {
                LOG.debug("renewed leases during a publish relayId={}", relayId);
            } else {
                LOG.warn("leases lost during a publish; those buckets get no further publish relayId={} buckets={}",
                        relayId, lost);
                announce(leases.lastReported());
            }
        } catch (OutboxMisconfigurationException e) {
            renewalFatal.compareAndSet(null, e);
        } catch (RuntimeException e) {
            renewRetryAt = clock.millis() + options.errorBackoff().toMillis();
            LOG.warn("lease renewal failed; leases age out unless a later renewal succeeds relayId={} error={}",
                    relayId, e.toString());
        }
    }

    private void finish(Throwable fatal) {
        wake.stop();
        int pending = inFlight.get();
        if (pending > 0) {
            LOG.warn("stopping with publishes in flight; leases left to expire relayId={} inFlight={}", relayId,
                    pending);
        } else if (release != null) {
            try {
                release.releaseBucketLeases(relayId);
                LOG.info("released bucket leases relayId={}", relayId);
            } catch (RuntimeException e) {
                LOG.warn("could not release bucket leases; they expire instead relayId={} error={}", relayId,
                        e.toString());
            }
        }
        leases.clear();
        announce(List.of());
        if (fatal == null) {
            LOG.info("relay stopped relayId={}", relayId);
        } else {
            LOG.error("relay stopped on a fatal error relayId={} error={}", relayId, fatal.toString(), fatal);
        }
        terminate(fatal);
    }

    /** Logs and reports a change of owned buckets; returns whether any bucket was gained. */
    private synchronized boolean announce(List<Integer> owned) {
        if (owned.equals(announcedOwned)) {
            return false;
        }
        TreeSet<Integer> gained = new TreeSet<>(owned);
        gained.removeAll(announcedOwned);
        TreeSet<Integer> lost = new TreeSet<>(announcedOwned);
        lost.removeAll(owned);
        announcedOwned = owned;
        LOG.info("owned buckets changed relayId={} buckets={} gained={} lost={}", relayId, owned, gained, lost);
        listener.onOwnedBucketsChanged(owned);
        return !gained.isEmpty();
    }

    private List<Integer> checkBuckets(List<Integer> buckets, String call) {
        if (buckets == null) {
            throw new IllegalStateException("the store's " + call + " returned null");
        }
        TreeSet<Integer> sorted = new TreeSet<>();
        for (Integer bucket : buckets) {
            if (bucket == null || bucket < 0 || bucket >= options.bucketCount()) {
                throw new IllegalStateException("the store's " + call + " returned bucket " + bucket + ", outside [0, "
                        + options.bucketCount() + ")");
            }
            sorted.add(bucket);
        }
        return List.copyOf(sorted);
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
