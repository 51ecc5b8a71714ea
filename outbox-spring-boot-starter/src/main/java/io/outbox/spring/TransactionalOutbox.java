package io.outbox.spring;

import io.outbox.OutboxCommitNotifier;
import io.outbox.OutboxMessage;
import io.outbox.OutboxMessageFactory;
import io.outbox.OutboxTracing;
import java.util.BitSet;
import java.util.List;
import java.util.Objects;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.transaction.IllegalTransactionStateException;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The part of every {@link Outbox} that is independent of the store: the transaction check, the
 * bucket bookkeeping per transaction and the notification after commit (rule N1).
 */
abstract class TransactionalOutbox implements Outbox {

    private static final Logger LOG = LoggerFactory.getLogger(TransactionalOutbox.class);

    private final int bucketCount;
    private final OutboxMessageFactory<String, String> strings;
    private final OutboxCommitNotifier notifier;

    /**
     * @param bucketCount the bucket count, {@code >= 1}
     * @param notifier told the buckets a transaction wrote once it committed (rule N1); its
     *     exceptions after the commit are logged
     * @param tracing where {@link #enqueue(String, String, String)} takes the trace context it
     *     stores with each message (rule O1)
     */
    TransactionalOutbox(int bucketCount, OutboxCommitNotifier notifier, OutboxTracing tracing) {
        this.bucketCount = OutboxRelaySettings.bucketCount(bucketCount);
        this.notifier = Objects.requireNonNull(notifier, "notifier must not be null");
        this.strings = OutboxMessageFactory.builder(bucketCount)
                .keySerializer(new StringSerializer())
                .valueSerializer(new StringSerializer())
                .tracing(Objects.requireNonNull(tracing, "tracing must not be null"))
                .build();
    }

    @Override
    public final void enqueue(List<OutboxMessage> messages) {
        Objects.requireNonNull(messages, "messages must not be null");
        if (!TransactionSynchronizationManager.isActualTransactionActive()
                || !TransactionSynchronizationManager.isSynchronizationActive()) {
            throw new IllegalTransactionStateException("Outbox.enqueue needs an active Spring-managed transaction "
                    + "and none is active on thread " + Thread.currentThread().getName()
                    + ": call it from a @Transactional method (or inside TransactionTemplate.execute); "
                    + "the outbox never writes in auto-commit");
        }
        BitSet buckets = new BitSet();
        for (OutboxMessage m : messages) {
            Objects.requireNonNull(m, "messages must not contain null");
            if (m.bucket() < 0 || m.bucket() >= bucketCount) {
                throw new IllegalArgumentException("message " + m.messageId() + " is in bucket " + m.bucket()
                        + " but outbox.bucket-count is " + bucketCount
                        + "; create messages with Outbox.bucketCount() buckets");
            }
            buckets.set(m.bucket());
        }
        if (messages.isEmpty()) {
            return;
        }
        write(messages);
        written().buckets.or(buckets);
    }

    @Override
    public final OutboxMessage enqueue(String topic, String key, String value) {
        OutboxMessage message = strings.create(topic, key, value);
        enqueue(List.of(message));
        return message;
    }

    @Override
    public final int bucketCount() {
        return bucketCount;
    }

    /**
     * Writes the messages on the current transaction's connection or session.
     *
     * @param messages validated, not empty
     * @throws IllegalTransactionStateException if the active transaction is not the store's
     */
    abstract void write(List<OutboxMessage> messages);

    /**
     * Lets the notifier put its notification into the transaction, right before the commit
     * ({@link OutboxCommitNotifier#beforeCommit}, PostgreSQL NOTIFY, rule N5).
     *
     * @param notifier the notifier
     * @param buckets the buckets written
     * @return true if the commit itself tells the other processes
     */
    boolean beforeCommit(OutboxCommitNotifier notifier, int[] buckets) {
        return false;
    }

    private Written written() {
        Written written = (Written) TransactionSynchronizationManager.getResource(this);
        if (written == null) {
            written = new Written();
            TransactionSynchronizationManager.bindResource(this, written);
            TransactionSynchronizationManager.registerSynchronization(written);
        }
        return written;
    }

    /** The buckets one transaction wrote; told to the notifier after its commit. */
    private final class Written implements TransactionSynchronization {
        final BitSet buckets = new BitSet();
        boolean toldByCommit;

        @Override
        public void suspend() {
            TransactionSynchronizationManager.unbindResourceIfPossible(TransactionalOutbox.this);
        }

        @Override
        public void resume() {
            TransactionSynchronizationManager.bindResource(TransactionalOutbox.this, this);
        }

        @Override
        public void beforeCommit(boolean readOnly) {
            int[] written = buckets.stream().toArray();
            if (written.length > 0) {
                toldByCommit = TransactionalOutbox.this.beforeCommit(notifier, written);
            }
        }

        @Override
        public void afterCommit() {
            int[] written = buckets.stream().toArray();
            if (written.length == 0) {
                return;
            }
            try {
                if (toldByCommit) {
                    notifier.committedLocally(written);
                } else {
                    notifier.committed(written);
                }
            } catch (RuntimeException e) {
                LOG.warn("outbox wake-up after commit failed; the relay finds the messages at its next poll: {}",
                        e.toString());
            }
        }

        @Override
        public void afterCompletion(int status) {
            TransactionSynchronizationManager.unbindResourceIfPossible(TransactionalOutbox.this);
        }
    }
}
