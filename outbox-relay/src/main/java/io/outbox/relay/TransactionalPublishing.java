package io.outbox.relay;

import io.outbox.OutboxMessage;
import io.outbox.spi.OutboxMisconfigurationException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The transactional mode of {@link KafkaOutboxPublisher} (rules K5-K7): one producer per owned
 * bucket, {@code transactional.id} {@code <prefix>-<bucket>}, created and initialized when the
 * relay reports the bucket acquired ({@code initTransactions()} fences every older producer of the
 * bucket and aborts its open transaction) and closed when the bucket is released or lost. Each
 * batch is one transaction: begin, send all, commit; any failed send aborts it (K6). The result
 * still names the message that failed (K3, R12): a topic or partition problem of message k is found
 * before the transaction begins, so the transaction holds the k messages before it; a send of
 * message k refused for a reason of its own (at send, or by the broker, which fails the records
 * before it in the same producer batch too) aborts the transaction, and the messages are sent
 * again, those before the first failed record in one transaction, then one per transaction until
 * one fails. Either way the result acknowledges k and fails message k. A fencing error becomes a {@link BucketFencedException}.
 *
 * <p>Thread-safe. The relay publishes one batch per bucket at a time; a release may come from
 * another thread while a transaction is in flight, and the producer is then closed when that
 * transaction ends.
 */
final class TransactionalPublishing {

    /** Creates a producer from settings; {@link KafkaProducer} outside tests. */
    interface ProducerFactory {
        Producer<byte[], byte[]> create(Map<String, Object> config);
    }

    /** {@link KafkaOutboxPublisher#refusal}: why a message cannot be sent now, or null. */
    interface SendCheck {
        RuntimeException refusal(Producer<byte[], byte[]> producer, OutboxMessage message,
                                 Map<String, KafkaOutboxPublisher.TopicMetadata> topics);
    }

    private static final Logger LOG = LoggerFactory.getLogger(KafkaOutboxPublisher.class);
    private static final int INIT_THREADS = 8;

    private final Map<String, Object> baseConfig;
    private final KafkaTransactions options;
    private final ProducerFactory factory;
    private final Function<OutboxMessage, ProducerRecord<byte[], byte[]>> records;
    /** K3, R12: a message's topic or partition problem, found before its transaction begins. */
    private final SendCheck check;
    private final Map<Integer, BucketProducer> producers = new ConcurrentHashMap<>();
    private final Object lifecycle = new Object();
    private boolean relayAttached;
    private volatile boolean closed;

    TransactionalPublishing(Map<String, Object> baseConfig, KafkaTransactions options, ProducerFactory factory,
                            Function<OutboxMessage, ProducerRecord<byte[], byte[]>> records, SendCheck check) {
        this.baseConfig = Map.copyOf(baseConfig);
        this.options = options;
        this.factory = factory;
        this.records = records;
        this.check = check;
    }

    KafkaTransactions options() {
        return options;
    }

    /** The settings of bucket {@code bucket}'s producer. */
    Map<String, Object> producerConfig(int bucket) {
        Map<String, Object> config = new LinkedHashMap<>(baseConfig);
        String id = options.transactionalId(bucket);
        config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, id);
        Object clientId = config.get(ProducerConfig.CLIENT_ID_CONFIG);
        // One client.id per producer keeps their metrics apart.
        config.put(ProducerConfig.CLIENT_ID_CONFIG, clientId == null ? "outbox-" + id : clientId + "-" + bucket);
        return config;
    }

    /** K5 bound: one relay per publisher, at most {@link KafkaTransactions#maxBuckets()} buckets. */
    void checkBucketCount(int bucketCount) {
        if (bucketCount > options.maxBuckets()) {
            throw new OutboxMisconfigurationException("relay option bucket.count=" + bucketCount + " is above "
                    + KafkaTransactions.MAX_BUCKETS_CONFIG + "=" + options.maxBuckets() + ": in transactional mode a "
                    + "relay may come to own every bucket and runs one Kafka producer (a thread and its connections) "
                    + "per owned bucket; lower bucket.count or raise " + KafkaTransactions.MAX_BUCKETS_CONFIG);
        }
        synchronized (lifecycle) {
            if (relayAttached) {
                throw new OutboxMisconfigurationException("a transactional Kafka outbox publisher ("
                        + KafkaTransactions.TRANSACTIONAL_ID_PREFIX_CONFIG + "=" + options.transactionalIdPrefix()
                        + ") serves one relay: its producers follow that relay's bucket leases; give each relay its "
                        + "own publisher");
            }
            relayAttached = true;
        }
    }

    /**
     * K5: a producer per gained bucket, initialized now so older producers are fenced at once.
     * Initializations run in parallel (up to {@value #INIT_THREADS} at a time): each takes a few
     * broker round trips plus {@code retry.backoff.ms} while the coordinator loads the id.
     */
    void acquired(Set<Integer> buckets) {
        List<BucketProducer> fresh = new ArrayList<>();
        for (int bucket : buckets) {
            if (closed) {
                return;
            }
            BucketProducer p = new BucketProducer(bucket, options.transactionalId(bucket));
            BucketProducer old = producers.put(bucket, p);
            if (old != null) {
                old.release();
            }
            fresh.add(p);
        }
        if (fresh.size() == 1) {
            fresh.get(0).initEagerly();
            return;
        }
        ExecutorService pool = Executors.newFixedThreadPool(Math.min(fresh.size(), INIT_THREADS), body -> {
            Thread t = new Thread(body, "outbox-transactional-init");
            t.setDaemon(true);
            return t;
        });
        try {
            CompletableFuture.allOf(fresh.stream().map(p -> CompletableFuture.runAsync(p::initEagerly, pool))
                    .toArray(CompletableFuture[]::new)).join();
        } finally {
            pool.shutdown();
        }
    }

    void released(Set<Integer> buckets) {
        for (int bucket : buckets) {
            BucketProducer old = producers.remove(bucket);
            if (old != null) {
                old.release();
            }
        }
    }

    CompletableFuture<PublishResult> publish(List<OutboxMessage> batch) {
        if (batch.isEmpty()) {
            return CompletableFuture.completedFuture(PublishResult.success(0));
        }
        int bucket = batch.get(0).bucket();
        for (OutboxMessage m : batch) {
            if (m.bucket() != bucket) {
                return CompletableFuture.completedFuture(PublishResult.failure(0, new IllegalArgumentException(
                        "a transactional batch holds one bucket's messages, but message " + m.messageId()
                                + " is of bucket " + m.bucket() + " and the first of bucket " + bucket)));
            }
        }
        BucketProducer producer = producers.get(bucket);
        if (closed) {
            return CompletableFuture.completedFuture(PublishResult.failure(0,
                    new IllegalStateException("the Kafka outbox publisher is closed")));
        }
        if (producer == null) {
            return CompletableFuture.completedFuture(PublishResult.failure(0, new BucketFencedException(bucket,
                    "bucket " + bucket + " has no transactional producer: the relay did not report acquiring it, or "
                            + "released it (a publisher wrapping this one must forward bucketsAcquired and "
                            + "bucketsReleased)", null)));
        }
        return CompletableFuture.completedFuture(producer.publish(batch));
    }

    void close(Duration timeout) {
        closed = true;
        for (BucketProducer p : List.copyOf(producers.values())) {
            p.close(timeout);
        }
        producers.clear();
    }

    /** Whether the error, or one of its causes, says a newer producer of the id exists (K6). */
    static boolean isFencing(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof ProducerFencedException || t instanceof InvalidProducerEpochException
                    || t instanceof BucketFencedException) {
                return true;
            }
        }
        return false;
    }

    /** An error no retry can fix: the broker cannot or may not run transactions for us. */
    private static boolean isMisconfiguration(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof UnsupportedVersionException || t instanceof TransactionalIdAuthorizationException
                    || t instanceof ClusterAuthorizationException) {
                return true;
            }
        }
        return false;
    }

    /** One bucket's producer and its state. */
    private final class BucketProducer {
        private final int bucket;
        private final String transactionalId;
        /** Held for the whole of an initialization or a transaction, and to close. */
        private final ReentrantLock work = new ReentrantLock();
        private volatile boolean released;
        /** Guarded by {@link #work}. */
        private Producer<byte[], byte[]> producer;
        private boolean initialized;
        private boolean fenced;
        private Throwable fencedBy;

        BucketProducer(int bucket, String transactionalId) {
            this.bucket = bucket;
            this.transactionalId = transactionalId;
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
         * against the bucket's head (R12). A read_committed consumer sees the aborted copies never, the committed ones once.
         */
        private PublishResult transaction(List<OutboxMessage> batch) {
            Producer<byte[], byte[]> p;
            try {
                p = ensureInitialized();
            } catch (RuntimeException e) {
                return PublishResult.failure(0, classify(e));
            }
            Map<String, KafkaOutboxPublisher.TopicMetadata> topics = new HashMap<>();
            int end = batch.size();
            RuntimeException refused = null;
            for (int i = 0; i < batch.size() && refused == null; i++) {
                refused = check.refusal(p, batch.get(i), topics);
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
            try {
                p.beginTransaction();
                open = true;
                BatchOutcome outcome = new BatchOutcome(messages.size());
                int refusedAt = -1;
                for (int i = 0; i < messages.size() && refusedAt < 0; i++) {
                    int index = i;
                    try {
                        if (failedAtOnce(p.send(records.apply(messages.get(i)),
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
                        outcome.complete(i, new org.apache.kafka.common.errors.TransactionAbortedException(
                                "not sent: record " + refusedAt + " of the transaction was refused"));
                    }
                }
                PublishResult sent = outcome.future().get();
                if (sent.failed()) {
                    Throwable first = sent.firstError();
                    if (isFencing(first)) {
                        open = false;
                        return PublishResult.failure(0, fenced(first));
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
            }
        }

        /** Whether a send's future failed before {@code send} returned: the producer refused the record itself. */
        private static boolean failedAtOnce(java.util.concurrent.Future<?> sent) {
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
            if (isMisconfiguration(e)) {
                discard();
                return new OutboxMisconfigurationException("the Kafka transactional mode ("
                        + KafkaTransactions.TRANSACTIONS_CONFIG + "=true) failed for transactional.id="
                        + transactionalId + ": " + e + "; it needs a broker that supports transactions (Kafka 0.11 "
                        + "or later, transaction.state.log settings the cluster can meet) and, with ACLs, WRITE and "
                        + "DESCRIBE on the transactional ids " + options.transactionalIdPrefix() + "-*", e);
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
            if (producer == null) {
                producer = factory.create(producerConfig(bucket));
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
                LOG.debug("abort failed transactionalId={} error={}", transactionalId, e.toString());
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
            if (p != null) {
                try {
                    p.close(Duration.ZERO);
                } catch (RuntimeException e) {
                    LOG.debug("closing a producer failed transactionalId={} error={}", transactionalId, e.toString());
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
    }
}
