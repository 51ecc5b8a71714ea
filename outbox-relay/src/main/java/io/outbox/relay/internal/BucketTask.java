package io.outbox.relay.internal;

import io.outbox.relay.BucketFencedException;
import io.outbox.relay.PublishResult;
import io.outbox.spi.CorruptMessageException;
import io.outbox.spi.Pending;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;

/**
 * One bucket's read, publish and delete; a bucket has at most one task at a time, so its batches
 * stay in order (R2, R4). The task owns its state from the read to the delete and hands the loop
 * thread one immutable {@link TaskOutcome} at its end ({@link StoreWork#complete}).
 *
 * <p>Threads, in order: a store thread reads the batch, rechecks the lease (R1) and starts the
 * publish; the publisher's callback thread takes its answer; a store thread rechecks the lease
 * (R9) and deletes the acknowledged prefix (R2), then counts a failed message (R12,
 * {@link HeadFailures}). Each stage gets what it needs as arguments from the stage before, through
 * the executor or the publisher's future, which order the stages; the task's fields are all final.
 *
 * <p>The pipelined drain ({@link io.outbox.relay.RelayOptions#prefetch()}, capability C5): a task
 * whose batch came back full (by count or by bytes, {@link StoreWork#full}), or whose bucket is
 * hinted while it runs (a commit the task's read may have missed, R8), reads the bucket's next
 * batch, leaving out the batch in flight, while that
 * batch is published or deleted, and ends once both are done. The loop thread passes a hint in
 * through {@link #hinted()}, the one call it makes on a running task; a hint after the publish and
 * delete ended starts nothing. A failed or odd read ahead is only discarded: the bucket then reads
 * from its head, where a lasting error shows (R3).
 */
final class BucketTask {

    private static final Logger LOG = RelayLog.LOG;

    /**
     * The batch this task publishes, fixed once read.
     *
     * @param messages the messages, oldest first
     * @param limit the batch size asked of the store
     * @param breaks {@link LeaseTable#breaks()} before this task's first lease check
     * @param corrupt a row after the messages that the store could not decode (R12); null when none
     * @param full whether the batch may have left messages behind ({@link StoreWork#full})
     */
    private record Batch(List<Pending> messages, int limit, long breaks, CorruptMessageException corrupt,
                         boolean full) {
    }

    /** A publisher's normalized answer and how long it took. */
    private record Answer(PublishResult result, long publishMillis) {
    }

    private final StoreWork work;
    private final int bucket;
    /** A batch the bucket's previous task read ahead, to publish without reading; or null. */
    private final ReadBatch given;
    /**
     * Completed by the loop thread when the bucket is hinted while the task runs (R8); cancelled by
     * the task once its publish and delete ended, so a later hint starts no read ahead.
     */
    private final CompletableFuture<Void> hint = new CompletableFuture<>();

    BucketTask(StoreWork work, int bucket, ReadBatch given) {
        this.work = work;
        this.bucket = bucket;
        this.given = given;
    }

    /**
     * Loop thread: the bucket was hinted while this task runs (R8). Once the publish has started, a
     * read ahead (C5) starts on a store thread, so the bucket's next task publishes the hinted
     * commit as soon as this one ends; before that, the task reads ahead itself.
     */
    void hinted() {
        hint.complete(null);
    }

    /** A store thread: the task's first stage. Ends with one outcome, now or when the publish ends. */
    void run() {
        TaskOutcome early;
        try {
            early = readAndPublish();
        } catch (RuntimeException | Error e) {
            early = TaskOutcome.failed(bucket, e);
        }
        if (early != null) {
            work.complete(early);
        }
    }

    /** Reads the bucket's batch and starts its publish; the outcome when the task ends here, else null. */
    private TaskOutcome readAndPublish() {
        if (work.stopping()) {
            return TaskOutcome.of(bucket, TaskOutcome.Kind.SKIPPED);
        }
        long breaks = work.leases.breaks(); // before the check: a break after it changes the count
        if (!work.leases.canStartPublish(bucket, work.clock.millis())) {
            return TaskOutcome.of(bucket, TaskOutcome.Kind.NO_LEASE);
        }
        int limit = work.poison.batchLimit(bucket, work.batchSize);
        List<Pending> messages;
        CorruptMessageException corrupt = null;
        try {
            if (given != null && given.breaks() == breaks && limit == work.batchSize) {
                messages = given.batch(); // read ahead under a lease held without a break since (R1)
            } else {
                messages = work.store.nextBatch(bucket, limit, work.batchMaxBytes);
            }
        } catch (CorruptMessageException e) {
            if (e.bucket() != bucket) {
                throw e;
            }
            // R12: a data error of one row stays in its bucket; the rows ahead of it still go out.
            corrupt = e;
            messages = e.messagesBefore();
        }
        if (messages == null) {
            throw new IllegalStateException("the store's nextBatch returned null");
        }
        Batch batch = new Batch(messages, limit, breaks, corrupt, work.full(messages, limit));
        if (messages.isEmpty()) {
            return corrupt == null ? TaskOutcome.of(bucket, TaskOutcome.Kind.EMPTY)
                    : deleteAcknowledged(batch, new Answer(PublishResult.failure(0, corrupt), 0)); // counts the row
        }
        work.checkBatch(bucket, messages);
        if (!work.leases.canStartPublish(bucket, work.clock.millis())) { // R1: right before the publish
            return TaskOutcome.of(bucket, TaskOutcome.Kind.NO_LEASE);
        }
        publish(batch);
        return null;
    }

    /**
     * Starts the publish; its answer goes to a store thread for the delete. With the pipelined
     * drain, reads ahead at once when the batch is full or the bucket was hinted already, else
     * when a hint comes while the publish and delete run. The task ends when both are done.
     */
    private void publish(Batch batch) {
        boolean mayReadAhead = work.readAhead != null && batch.corrupt() == null && batch.limit() == work.batchSize;
        boolean aheadNow = mayReadAhead && (batch.full() || hint.isDone());
        long startedAt = work.clock.millis();
        CompletableFuture<TaskOutcome> deleted = send(batch.messages())
                .handle((result, error) -> answer(batch, result, error, startedAt)) // the publisher's thread
                .thenApplyAsync(answer -> deleteAcknowledged(batch, answer), work.executor())
                .exceptionally(this::abandonedOrFailed);
        CompletableFuture<ReadBatch> ahead;
        if (!mayReadAhead) {
            ahead = CompletableFuture.completedFuture(null);
        } else if (aheadNow) {
            ahead = CompletableFuture.completedFuture(readAhead(batch));
        } else {
            ahead = hint.thenApplyAsync(hinted -> readAhead(batch), work.executor()).exceptionally(e -> null);
        }
        deleted.whenComplete((outcome, error) -> hint.cancel(false)); // a later hint starts nothing
        deleted.thenCombine(ahead, TaskOutcome::withAhead).thenAccept(work::complete);
    }

    /** Calls the publisher; a throw or a null future is a failed publish. Counts it in flight (R5). */
    private CompletableFuture<PublishResult> send(List<Pending> messages) {
        work.publishStarted();
        try {
            CompletableFuture<PublishResult> future = work.publisher.publish(Pending.messages(messages));
            return future != null ? future
                    : CompletableFuture.failedFuture(new IllegalStateException("the publisher returned null"));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        } catch (Error e) {
            work.publishEnded();
            throw e;
        }
    }

    /** The publisher's callback thread (any thread): the answer, normalized, and its duration. */
    private Answer answer(Batch batch, PublishResult result, Throwable error, long startedAt) {
        work.publishEnded();
        PublishResult normalized = normalize(result, error, batch.messages().size());
        if (batch.corrupt() != null && !normalized.failed()) {
            normalized = PublishResult.failure(batch.messages().size(), batch.corrupt());
        }
        return new Answer(normalized, work.clock.millis() - startedAt);
    }

    /** A store thread: deletes the acknowledged prefix (R2), only while the lease is held (R9). */
    private TaskOutcome deleteAcknowledged(Batch batch, Answer answer) {
        try {
            if (work.abandoned()) {
                return TaskOutcome.of(bucket, TaskOutcome.Kind.ABANDONED);
            }
            PublishResult result = answer.result();
            int size = batch.messages().size();
            if (!work.leases.isHeld(bucket, work.clock.millis())) {
                return new TaskOutcome(bucket, TaskOutcome.Kind.LEASE_LOST, size, batch.limit(), batch.full(),
                        result, answer.publishMillis(), null, null, null, List.of());
            }
            int acknowledged = result.acknowledged();
            List<Duration> timesInOutbox = List.of();
            if (acknowledged > 0) {
                work.store.markPublished(bucket, batch.messages().subList(0, acknowledged));
                work.poison.acknowledged(bucket);
                timesInOutbox = timesInOutbox(batch.messages().subList(0, acknowledged));
            }
            HeadFailures.Handled failure = null;
            if (result.failed() && !(result.firstError() instanceof BucketFencedException)
                    && LoopFailures.errorIn(result.firstError()) == null) {
                // A fenced publish (K6) is a lost lease, not a message's failure; an Error stops the relay.
                failure = work.headFailures.handle(bucket, batch.messages(), result, batch.corrupt());
            }
            return new TaskOutcome(bucket, TaskOutcome.Kind.PUBLISHED, size, batch.limit(), batch.full(),
                    result, answer.publishMillis(), failure, null, null, timesInOutbox);
        } catch (RuntimeException | Error e) {
            return TaskOutcome.failed(bucket, e);
        }
    }

    /** O3: from each message's createdAt to its delete; zero when the writer's clock was ahead. */
    private List<Duration> timesInOutbox(List<Pending> deleted) {
        long now = work.clock.millis();
        List<Duration> times = new ArrayList<>(deleted.size());
        for (Pending p : deleted) {
            times.add(Duration.ofMillis(Math.max(0, now - p.message().createdAt().toEpochMilli())));
        }
        return List.copyOf(times);
    }

    /** The delete could not be handed to a store thread: the pool was shut down to abandon the task. */
    private TaskOutcome abandonedOrFailed(Throwable error) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        return cause instanceof RejectedExecutionException ? TaskOutcome.of(bucket, TaskOutcome.Kind.ABANDONED)
                : TaskOutcome.failed(bucket, cause);
    }

    /**
     * A store thread: reads the bucket's next batch while this one is published (C5). A failed or
     * odd read is only discarded: the bucket then reads from its head, where a lasting error shows (R3).
     *
     * @return the batch, or null when none was read
     */
    private ReadBatch readAhead(Batch batch) {
        try {
            if (work.stopping()) {
                return null;
            }
            List<Pending> next = work.readAhead.nextBatchExcluding(bucket, batch.messages(), work.batchSize,
                    work.batchMaxBytes);
            if (next == null) {
                throw new IllegalStateException("the store's nextBatchExcluding returned null");
            }
            work.checkBatch(bucket, next);
            return next.isEmpty() ? null : new ReadBatch(next, batch.breaks());
        } catch (RuntimeException | Error e) {
            LOG.debug("reading ahead failed; the bucket reads from its head next relayId={} bucket={} error={}",
                    work.relayId, bucket, LogText.oneLine(e.toString()));
            return null;
        }
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
}
