package io.outbox.connect;

import io.outbox.OutboxMessage;
import io.outbox.relay.BucketFencedException;
import io.outbox.relay.OutboxPublisher;
import io.outbox.relay.PublishResult;
import io.outbox.relay.kafka.OutboxRecords;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.TransactionContext;

/**
 * The relay's publisher inside a source task: {@link #publish} turns a bucket's batch into source
 * records that {@link #poll} hands to Connect, and the batch's future completes from what Connect
 * reports ({@link #recordReported}, {@link #committed}); the relay then deletes exactly the
 * acknowledged prefix (rules X2, X3, R2).
 *
 * <p>What Connect's callbacks guarantee, from {@code WorkerSourceTask} and
 * {@code ExactlyOnceWorkerSourceTask}:
 * <ul>
 *   <li>Without exactly-once support, {@code commitRecord(record, metadata)} runs on the
 *       producer's thread once the broker acknowledged the record (metadata not null), or with
 *       null metadata at once for a record a transformation dropped, or for a failed send under
 *       {@code errors.tolerance=all}. {@code commit()} only follows offset flushes and says
 *       nothing about records in flight.</li>
 *   <li>With exactly-once support, {@code commitRecord} runs on the task's thread only after the
 *       transaction was committed, for every record of it, dropped ones with null metadata, then
 *       {@code commit()} once. But after a transaction the task asked to abort, Connect commits
 *       the offsets in a transaction of their own and then calls {@code commitRecord} with
 *       non-null metadata for the aborted records the broker had acknowledged: those records
 *       were never committed, and are not taken as written here. A transaction with nothing but
 *       dropped records is not committed, so their {@code commitRecord} calls wait for a later
 *       transaction; {@code commit()} still runs, and settles them.</li>
 * </ul>
 * With connector-defined transactions ({@code transaction.boundary=connector}, a non-null
 * {@link TransactionContext}) each bucket batch is one transaction: {@link #poll} hands one
 * batch, and at the next call, after Connect dispatched it, asks for its commit, or for its abort
 * when the relay lost the bucket's lease meanwhile ({@link #bucketsReleased}), then returns no
 * records so that Connect acts on it before anything else is sent. Without a transaction context,
 * every waiting batch goes out in one {@link #poll}.
 *
 * <p>Thread-safe: {@link #publish} runs on the relay's store threads, {@link #bucketsReleased} on
 * its loop or renewal thread, {@link #poll} and {@link #committed} on the task's thread and
 * {@link #recordReported} on the producer's or the task's thread; one lock guards the state and
 * futures complete outside it.
 */
final class ConnectPublisher implements OutboxPublisher {

    /** Source partition key: the bucket (rule X2). */
    static final String BUCKET = "bucket";
    /** Source offset key: the message id, informative only (the store is the source of truth). */
    static final String MESSAGE_ID = "message.id";

    private final OutboxRecords records;
    private final TransactionContext transactions;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition ready = lock.newCondition();
    /** Batches waiting for poll. Guarded by lock. */
    private final ArrayDeque<Batch> waiting = new ArrayDeque<>();
    /** Batches handed to Connect and not yet settled. Guarded by lock. */
    private final Map<Batch, Boolean> handed = new IdentityHashMap<>();
    /** With connector-defined transactions: the batch handed over whose commit is not yet asked for. */
    private Batch open;
    private boolean stopped;

    ConnectPublisher(OutboxRecords records, TransactionContext transactions) {
        this.records = records;
        this.transactions = transactions;
    }

    /** A record of one message of a batch; Connect hands this instance back to commitRecord. */
    static final class OutboxSourceRecord extends SourceRecord {

        private final Batch batch;
        private final int index;

        OutboxSourceRecord(Batch batch, int index, ProducerRecord<byte[], byte[]> record, OutboxMessage message) {
            super(Map.of(BUCKET, message.bucket()), Map.of(MESSAGE_ID, message.messageId().toString()),
                    record.topic(), record.partition(), Schema.OPTIONAL_BYTES_SCHEMA, record.key(),
                    Schema.OPTIONAL_BYTES_SCHEMA, record.value(), null, headers(record));
            this.batch = batch;
            this.index = index;
        }

        private static ConnectHeaders headers(ProducerRecord<byte[], byte[]> record) {
            ConnectHeaders headers = new ConnectHeaders();
            for (Header h : record.headers()) {
                headers.add(h.key(), new SchemaAndValue(Schema.OPTIONAL_BYTES_SCHEMA, h.value()));
            }
            return headers;
        }
    }

    /** One bucket's batch as handed to Connect. The arrays are guarded by the publisher's lock. */
    static final class Batch {

        final int bucket;
        final List<OutboxMessage> messages;
        final List<SourceRecord> records;
        final CompletableFuture<PublishResult> result = new CompletableFuture<>();
        final boolean[] reported;
        final boolean[] written;
        int reportedCount;
        boolean lost;
        boolean aborted;
        boolean commitRequested;
        boolean settled;

        Batch(List<OutboxMessage> messages, OutboxRecords records) {
            this.bucket = messages.get(0).bucket();
            this.messages = messages;
            List<SourceRecord> list = new ArrayList<>(messages.size());
            for (int i = 0; i < messages.size(); i++) {
                list.add(new OutboxSourceRecord(this, i, records.record(messages.get(i)), messages.get(i)));
            }
            this.records = List.copyOf(list);
            this.reported = new boolean[messages.size()];
            this.written = new boolean[messages.size()];
        }

        /**
         * The outcome: the leading records Connect reported written; the first other one is
         * either not written (null metadata) or, with {@code cause}, not reported at all.
         */
        PublishResult outcome(Throwable cause) {
            int acknowledged = 0;
            while (acknowledged < written.length && reported[acknowledged] && written[acknowledged]) {
                acknowledged++;
            }
            if (acknowledged == written.length) {
                return PublishResult.success(acknowledged);
            }
            Throwable error = reported[acknowledged]
                    ? new RecordNotWrittenException(messages.get(acknowledged).messageId(), bucket) : cause;
            return PublishResult.failure(acknowledged, error);
        }
    }

    /**
     * Queues a batch for {@link #poll}.
     *
     * @param batch the messages of one bucket, oldest first; not empty
     * @return completes once Connect reported every record, or when the batch is given up
     */
    @Override
    public CompletableFuture<PublishResult> publish(List<OutboxMessage> batch) {
        Batch b = new Batch(List.copyOf(batch), records);
        lock.lock();
        try {
            if (stopped) {
                b.settled = true;
                return CompletableFuture.completedFuture(PublishResult.failure(0, stopping()));
            }
            waiting.add(b);
            ready.signalAll();
        } finally {
            lock.unlock();
        }
        return b.result;
    }

    /**
     * The next records for Connect, waiting up to {@code wait} for a batch. With connector-defined
     * transactions, a call after a batch was handed over returns null and asks for that batch's
     * commit (or abort, see the class comment).
     *
     * @param wait the longest wait; not null
     * @return records, or null when there are none yet
     * @throws InterruptedException if the task's thread is interrupted
     */
    List<SourceRecord> poll(Duration wait) throws InterruptedException {
        List<Settled> done = new ArrayList<>();
        lock.lock();
        try {
            if (open != null) {
                decide(open, done);
                open = null;
                return null;
            }
            long nanos = wait.toNanos();
            while (waiting.isEmpty() && !stopped && nanos > 0) {
                nanos = ready.awaitNanos(nanos);
            }
            if (waiting.isEmpty() || stopped) {
                return null;
            }
            if (transactions != null) {
                open = waiting.poll();
                handed.put(open, Boolean.TRUE);
                return open.records;
            }
            List<SourceRecord> out = new ArrayList<>();
            for (Batch b = waiting.poll(); b != null; b = waiting.poll()) {
                handed.put(b, Boolean.TRUE);
                out.addAll(b.records);
            }
            return out;
        } finally {
            lock.unlock();
            done.forEach(Settled::complete);
        }
    }

    /** Asks Connect to commit the open batch's transaction, or to abort it if its bucket was lost. */
    private void decide(Batch batch, List<Settled> done) {
        if (batch.lost) {
            transactions.abortTransaction();
            batch.aborted = true;
            settle(batch, PublishResult.failure(0, lost(batch.bucket)), done);
        } else {
            transactions.commitTransaction();
            batch.commitRequested = true;
        }
    }

    /**
     * What Connect reported for a record ({@code SourceTask.commitRecord}).
     *
     * @param record the record as {@link #poll} returned it; others are ignored
     * @param metadata where Kafka wrote it, or null when it was not written
     */
    void recordReported(SourceRecord record, RecordMetadata metadata) {
        if (!(record instanceof OutboxSourceRecord r)) {
            return;
        }
        Batch b = r.batch;
        List<Settled> done = new ArrayList<>(1);
        lock.lock();
        try {
            if (b.settled || b.reported[r.index]) {
                return; // an aborted transaction's record, or one reported twice: never taken as written
            }
            b.reported[r.index] = true;
            b.written[r.index] = metadata != null;
            b.reportedCount++;
            if (b.reportedCount == b.reported.length) {
                settle(b, b.outcome(null), done);
            }
        } finally {
            lock.unlock();
        }
        done.forEach(Settled::complete);
    }

    /**
     * Connect committed ({@code SourceTask.commit()}). With connector-defined transactions, a
     * batch whose commit was asked for is settled now: any record still unreported was dropped.
     */
    void committed() {
        List<Settled> done = new ArrayList<>();
        lock.lock();
        try {
            for (Batch b : List.copyOf(handed.keySet())) {
                if (b.commitRequested) {
                    for (int i = 0; i < b.reported.length; i++) {
                        b.reported[i] = true; // unreported after the commit: a dropped record (written stays false)
                    }
                    settle(b, b.outcome(null), done);
                }
            }
        } finally {
            lock.unlock();
        }
        done.forEach(Settled::complete);
    }

    /**
     * Batches of these buckets that Connect has not sent yet are given up; one sent in a
     * transaction not yet committed is aborted at the next {@link #poll}.
     *
     * @param buckets the buckets the relay no longer holds
     */
    @Override
    public void bucketsReleased(Set<Integer> buckets) {
        List<Settled> done = new ArrayList<>();
        lock.lock();
        try {
            for (Iterator<Batch> it = waiting.iterator(); it.hasNext(); ) {
                Batch b = it.next();
                if (buckets.contains(b.bucket)) {
                    it.remove();
                    settle(b, PublishResult.failure(0, lost(b.bucket)), done);
                }
            }
            if (open != null && buckets.contains(open.bucket)) {
                open.lost = true;
            }
        } finally {
            lock.unlock();
        }
        done.forEach(Settled::complete);
    }

    /**
     * Stops: every batch not settled completes with the prefix Connect reported written so far, so
     * the relay deletes nothing else; later publishes fail at once.
     */
    void stop() {
        List<Settled> done = new ArrayList<>();
        lock.lock();
        try {
            stopped = true;
            for (Batch b : waiting) {
                settle(b, PublishResult.failure(0, stopping()), done);
            }
            waiting.clear();
            for (Batch b : List.copyOf(handed.keySet())) {
                settle(b, b.aborted ? PublishResult.failure(0, stopping()) : b.outcome(stopping()), done);
            }
            open = null;
            ready.signalAll();
        } finally {
            lock.unlock();
        }
        done.forEach(Settled::complete);
    }

    /** Marks a batch settled under the lock; its future completes after the lock is released. */
    private void settle(Batch b, PublishResult result, List<Settled> done) {
        if (b.settled) {
            return;
        }
        b.settled = true;
        handed.remove(b);
        done.add(new Settled(b, result));
    }

    /**
     * Whether a batch waits or is in Connect's hands, for tests.
     *
     * @return the number of batches not settled
     */
    int unsettled() {
        lock.lock();
        try {
            return waiting.size() + handed.size();
        } finally {
            lock.unlock();
        }
    }

    private record Settled(Batch batch, PublishResult result) {
        void complete() {
            batch.result.complete(result);
        }
    }

    private static BucketFencedException lost(int bucket) {
        return new BucketFencedException(bucket, "the task lost the lease of bucket " + bucket
                + " before Connect committed its batch; the batch is given up and left to the bucket's next owner", null);
    }

    private static IllegalStateException stopping() {
        return new IllegalStateException("the source task is stopping");
    }
}
