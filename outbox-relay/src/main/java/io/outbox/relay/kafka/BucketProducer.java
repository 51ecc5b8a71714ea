package io.outbox.relay.kafka;

import io.outbox.OutboxMessage;
import io.outbox.relay.BucketFencedException;
import io.outbox.relay.FailureKind;
import io.outbox.relay.PublishResult;
import io.outbox.relay.internal.LogText;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.TransactionAbortedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One bucket's transactional producer in the transactional mode of {@link KafkaOutboxPublisher}
 * (rules K5, K6): {@code transactional.id} {@code <prefix>-<bucket>}, created and initialized at
 * once when the relay reports the bucket acquired ({@code initTransactions()} fences every older
 * producer of the bucket and aborts its open transaction), replaced after an error that leaves it
 * in an unknown state or when a topic loses partitions ({@link #replace()}), and closed when the
 * bucket is released, or lost. Each batch is one
 * transaction: begin, send all, commit; any failed send aborts it (K6). The result still names the
 * message that failed (K3, R12): a topic or partition problem of message k is found before the
 * transaction begins, so the transaction holds the k messages before it; a send of message k
 * refused for a reason of its own (at send, or by the broker, which fails the records before it in
 * the same producer batch too) aborts the transaction, and the messages are sent again, those
 * before the first failed record in one transaction, then one per transaction until one fails.
 * Either way the result acknowledges k and fails message k. A fencing error becomes a
 * {@link BucketFencedException}.
 *
 * <p>Thread-safe: a relay store thread publishes (one batch of the bucket at a time), the relay's
 * loop thread initializes, and a release may come from the loop or the renewal thread while a
 * transaction is in flight; {@link #work} is held for an initialization or a transaction, and a
 * released producer is closed when its transaction ends.
 */
final class BucketProducer {

    private static final Logger LOG = LoggerFactory.getLogger(KafkaOutboxPublisher.class);

    private final int bucket;
    private final String transactionalId;
    private final KafkaTransactions options;
    private final Map<String, Object> config;
    private final Function<Map<String, Object>, Producer<byte[], byte[]>> factory;
    private final OutboxRecords records;
    private final TopicChecks checks;
    /** Held for the whole of an initialization or a transaction, and to close. */
    private final ReentrantLock work = new ReentrantLock();
    private volatile boolean released;
    /** Guarded by {@link #work}. */
    private Producer<byte[], byte[]> producer;
    private boolean initialized;
    private boolean fenced;
    private Throwable fencedBy;
    /** The producer of the transaction in flight, for {@link #replace()}; null between transactions. */
    private volatile Producer<byte[], byte[]> inFlight;
    /** Set by {@link #replace()}: the next transaction begins on a new producer. */
    private volatile boolean stale;

    /**
     * @param config the bucket's producer settings, its {@code transactional.id} included
     */
    BucketProducer(int bucket, KafkaTransactions options, Map<String, Object> config,
                   Function<Map<String, Object>, Producer<byte[], byte[]>> factory, OutboxRecords records,
                   TopicChecks checks) {
        this.bucket = bucket;
        this.transactionalId = options.transactionalId(bucket);
        this.options = options;
        this.config = Map.copyOf(config);
        this.factory = factory;
        this.records = records;
        this.checks = checks;
    }

    void initEagerly() {
        work.lock();
        try {
            if (!released) {
                ensureInitialized();
            }
        } catch (RuntimeException e) {
            // The bucket's first publish retries and reports it (R7: a broker that is down is not fatal).
            LOG.warn("could not initialize the transactional producer yet; its first publish retries "
                    + "transactionalId={} bucket={} error={}", transactionalId, bucket, LogText.oneLine(e.toString()));
        } finally {
            work.unlock();
            closeIfReleased();
        }
    }

    PublishResult publish(List<OutboxMessage> batch) {
        work.lock();
        try {
            if (released || fenced) {
                return PublishResult.failure(0, fencedError(fencedBy));
            }
            return transaction(batch);
        } finally {
            work.unlock();
            closeIfReleased();
        }
    }

    /**
     * Runs under {@link #work}. A topic or partition problem of message k (K3, R12) is found
     * before the transaction begins: the k messages before it are the transaction, and the
     * result acknowledges them and fails message k. A send that fails aborts the transaction
     * (K6); when the failure is message-specific ({@link FailureKind#MESSAGE}, a record too
     * large, say), the messages before the first failed record are sent again in a
     * transaction of their own and the rest one per transaction until one fails
     * ({@link #oneByOne}), so the failure is counted against the message that caused it and not
     * against the bucket's head (R12). A read_committed consumer sees the aborted copies never, the
     * committed ones once.
     */
    private PublishResult transaction(List<OutboxMessage> batch) {
        Producer<byte[], byte[]> p;
        try {
            p = ensureInitialized();
        } catch (RuntimeException e) {
            return PublishResult.failure(0, classify(e));
        }
        TopicChecks.Batch topics = checks.batch(p);
        int end = batch.size();
        RuntimeException refused = null;
        for (int i = 0; i < batch.size() && refused == null; i++) {
            refused = topics.refusal(batch.get(i));
            end = refused == null ? batch.size() : i;
        }
        if (end == 0) {
            return PublishResult.failure(0, refused); // nothing began: the producer can go on
        }
        PublishResult sent = inTransaction(p, batch.subList(0, end));
        if (sent.failed() && FailureKind.classify(sent.firstError()) == FailureKind.MESSAGE) {
            int failedAt = sent.acknowledged();
            LOG.debug("transaction aborted at message {} of {}; sending the {} before it in a transaction of "
                    + "their own, then the rest one by one until one fails transactionalId={} error={}",
                    failedAt, end, failedAt, transactionalId, LogText.oneLine(String.valueOf(sent.firstError())));
            if (failedAt > 0) {
                PublishResult before = newTransaction(batch.subList(0, failedAt));
                if (before.failed()) {
                    return PublishResult.failure(0, before.firstError());
                }
            }
            return oneByOne(batch, failedAt, end, refused);
        }
        if (sent.failed()) {
            return PublishResult.failure(0, sent.firstError());
        }
        return refused == null ? sent : PublishResult.failure(end, refused);
    }

    /**
     * Runs under {@link #work}, after a message-specific failure: sends messages
     * {@code from} to {@code end} each in a transaction of its own, and fails the first that
     * fails. A broker refusing a record (over the topic's {@code max.message.bytes}, say) fails
     * every record of its producer batch, the ones before it included, with the same error, so
     * only a record sent alone tells whose failure it is (R12: never counted against the
     * messages before it).
     */
    private PublishResult oneByOne(List<OutboxMessage> batch, int from, int end, RuntimeException refused) {
        for (int i = from; i < end; i++) {
            PublishResult one = newTransaction(batch.subList(i, i + 1));
            if (one.failed()) {
                return PublishResult.failure(i, one.firstError());
            }
        }
        return refused == null ? PublishResult.success(end) : PublishResult.failure(end, refused);
    }

    /**
     * Runs under {@link #work}: one transaction of {@code messages}, the producer created and
     * initialized if need be.
     */
    private PublishResult newTransaction(List<OutboxMessage> messages) {
        Producer<byte[], byte[]> p;
        try {
            p = ensureInitialized();
        } catch (RuntimeException e) {
            return PublishResult.failure(0, classify(e));
        }
        return inTransaction(p, messages);
    }

    /**
     * Runs under {@link #work}: one transaction of {@code messages}. Committed: success. A
     * record the producer refused as it was sent (its {@code send} failed at once: too large,
     * say), after the abort: the failure at that record's index, for {@link #transaction}
     * alone to read (nothing of it is acknowledged). Any other failure: at index 0, since the
     * abort fails the records before the failed one with the same error.
     */
    private PublishResult inTransaction(Producer<byte[], byte[]> p, List<OutboxMessage> messages) {
        boolean open = false;
        inFlight = p;
        try {
            p.beginTransaction();
            open = true;
            BatchOutcome outcome = new BatchOutcome(messages.size());
            int refusedAt = -1;
            for (int i = 0; i < messages.size() && refusedAt < 0; i++) {
                int index = i;
                try {
                    if (failedAtOnce(p.send(records.record(messages.get(i)),
                            (meta, error) -> outcome.complete(index, error)))) {
                        refusedAt = i;
                    }
                } catch (RuntimeException e) {
                    outcome.complete(index, e);
                    refusedAt = i;
                }
            }
            if (refusedAt >= 0) {
                // The transaction can only abort now: the records after the refused one are not sent.
                for (int i = refusedAt + 1; i < messages.size(); i++) {
                    outcome.complete(i, new TransactionAbortedException(
                            "not sent: record " + refusedAt + " of the transaction was refused"));
                }
            }
            checks.recheckWhilePending(outcome.future(), messages); // K3: a partition lost while it waits
            PublishResult sent = outcome.future().get();
            if (sent.failed()) {
                Throwable first = sent.firstError();
                if (isFencing(first)) {
                    open = false;
                    return PublishResult.failure(0, fenced(first));
                }
                if (stale) {
                    // replace() closed the producer under the transaction: nothing can abort on it; the new
                    // producer's initTransactions() aborts it (K5, K6).
                    open = false;
                    discard();
                    return PublishResult.failure(0, first);
                }
                p.abortTransaction(); // K6: nothing of the batch becomes visible to read_committed consumers
                open = false;
                if (refusedAt > 0 && FailureKind.classify(first) == FailureKind.MESSAGE) {
                    // The records before the refused one fail with its error once the transaction aborts.
                    Throwable own = outcome.error(refusedAt);
                    return PublishResult.failure(refusedAt, own == null ? first : own);
                }
                return PublishResult.failure(0, first);
            }
            p.commitTransaction();
            open = false;
            return PublishResult.success(messages.size());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            discard();
            return PublishResult.failure(0, e);
        } catch (ExecutionException | RuntimeException e) {
            Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            if (open && !isFencing(cause)) {
                abortQuietly(p);
            }
            return PublishResult.failure(0, classify(cause));
        } finally {
            inFlight = null;
        }
    }

    /**
     * A topic lost partitions (deleted and re-created with fewer): records in flight to the lost
     * ones would hold this bucket's transaction until {@code delivery.timeout.ms} (120 s by
     * default), and the producer's metadata may still place keys on them. Closes the producer of a
     * transaction in flight at once, which fails that transaction (the relay retries the bucket
     * from its first unacknowledged message, R3), and has the next transaction begin on a new
     * producer, whose {@code initTransactions()} aborts whatever the old one left open (K5). Any
     * thread; does not wait for the transaction.
     */
    void replace() {
        stale = true;
        closeNow(inFlight);
    }

    /** Whether a send's future failed before {@code send} returned: the producer refused the record itself. */
    private static boolean failedAtOnce(Future<?> sent) {
        if (sent == null || !sent.isDone()) {
            return false;
        }
        try {
            sent.get();
            return false;
        } catch (ExecutionException e) {
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (RuntimeException e) {
            return true;
        }
    }

    /** Maps an error to what the relay should do with it, dropping the producer unless it can go on. */
    private Throwable classify(Throwable e) {
        if (isFencing(e)) {
            return fenced(e);
        }
        // A producer in an unknown state is replaced at the next publish; initTransactions
        // completes or aborts whatever it left open.
        discard();
        return e;
    }

    private BucketFencedException fenced(Throwable cause) {
        fenced = true;
        fencedBy = cause;
        discard();
        return fencedError(cause);
    }

    private BucketFencedException fencedError(Throwable cause) {
        return new BucketFencedException(bucket, "the producer of bucket " + bucket + " (transactional.id="
                + transactionalId + ") was " + (cause == null ? "released: the relay gave the bucket up"
                : "fenced: another relay initialized the bucket's transactional id, so this relay's lease is "
                + "lost"), cause);
    }

    /** Runs under {@link #work}: the producer, created and initialized if need be. */
    private Producer<byte[], byte[]> ensureInitialized() {
        if (stale) {
            stale = false;
            discard();
        }
        if (producer == null) {
            producer = factory.apply(config);
            initialized = false;
        }
        if (!initialized) {
            long start = System.nanoTime();
            try {
                producer.initTransactions(); // K5: fences older producers, aborts their open transaction
            } catch (RuntimeException e) {
                discard();
                throw e;
            }
            initialized = true;
            LOG.debug("transactional producer initialized transactionalId={} bucket={} took.ms={}", transactionalId,
                    bucket, (System.nanoTime() - start) / 1_000_000);
        }
        return producer;
    }

    private void abortQuietly(Producer<byte[], byte[]> p) {
        try {
            p.abortTransaction();
        } catch (RuntimeException e) {
            LOG.debug("abort failed transactionalId={} error={}", transactionalId, LogText.oneLine(e.toString()));
            if (isFencing(e)) {
                fenced(e);
            } else {
                discard();
            }
        }
    }

    /** Runs under {@link #work}: closes the producer without waiting; nothing of it is needed any more. */
    private void discard() {
        Producer<byte[], byte[]> p = producer;
        producer = null;
        initialized = false;
        closeNow(p);
    }

    /** Closes a producer without waiting: what it has in flight fails at once. Any thread; null does nothing. */
    private void closeNow(Producer<byte[], byte[]> p) {
        if (p != null) {
            try {
                p.close(Duration.ZERO);
            } catch (RuntimeException e) {
                LOG.debug("closing a producer failed transactionalId={} error={}", transactionalId,
                        LogText.oneLine(e.toString()));
            }
        }
    }

    void release() {
        released = true;
        closeIfReleased();
    }

    /** Closes once released, unless a transaction holds the producer; its end closes it then. */
    private void closeIfReleased() {
        if (released && work.tryLock()) {
            try {
                discard();
            } finally {
                work.unlock();
            }
        }
    }

    void close(Duration timeout) {
        released = true;
        work.lock();
        try {
            Producer<byte[], byte[]> p = producer;
            producer = null;
            if (p != null) {
                p.close(timeout);
            }
        } finally {
            work.unlock();
        }
    }

    /** Whether the error, or one of its causes, says a newer producer of the id exists (K6). */
    private static boolean isFencing(Throwable e) {
        return causedBy(e, ProducerFencedException.class, InvalidProducerEpochException.class,
                BucketFencedException.class);
    }

    /** Whether the error or one of its causes is of one of these classes. */
    private static boolean causedBy(Throwable e, Class<?>... kinds) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            for (Class<?> kind : kinds) {
                if (kind.isInstance(t)) {
                    return true;
                }
            }
        }
        return false;
    }
}
