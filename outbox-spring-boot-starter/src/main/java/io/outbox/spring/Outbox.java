package io.outbox.spring;

import io.outbox.OutboxMessage;
import java.util.List;

/**
 * Enqueues outbox messages inside the current Spring-managed transaction (rule E4): the messages
 * are written with the business change and exist exactly when the transaction commits. After the
 * commit, the buckets written are handed to the relay so it publishes at once instead of at its
 * next poll (rules N1, R8); a rollback notifies nothing.
 *
 * <pre>{@code
 * @Transactional
 * public void placeOrder(Order order) {
 *     orders.save(order);
 *     outbox.enqueue("orders", order.id(), order.toJson());
 * }
 * }</pre>
 *
 * <p>There is no auto-commit fallback: every method fails with
 * {@link org.springframework.transaction.IllegalTransactionStateException} when no transaction of
 * the store's resource is active on the calling thread. Thread-safe; the bean is shared.
 */
public interface Outbox {

    /**
     * Enqueues messages in the current transaction, in order.
     *
     * @param messages the messages; not null, no null element; each built with
     *     {@link #bucketCount()} buckets
     * @throws org.springframework.transaction.IllegalTransactionStateException if no Spring-managed
     *     transaction of the store's resource is active
     * @throws IllegalArgumentException if a message's bucket is outside {@code [0, bucketCount())}
     * @throws io.outbox.OutboxPayloadTooLargeException if a message is larger than the store holds
     *     (rule S10); nothing is written
     * @throws org.springframework.dao.DataAccessException if the database refuses the write; the
     *     transaction should roll back
     */
    void enqueue(List<OutboxMessage> messages);

    /**
     * Enqueues messages in the current transaction, in order.
     *
     * @param messages the messages; see {@link #enqueue(List)}
     * @throws org.springframework.transaction.IllegalTransactionStateException if no Spring-managed
     *     transaction is active; see {@link #enqueue(List)} for the others
     */
    default void enqueue(OutboxMessage... messages) {
        enqueue(List.of(messages));
    }

    /**
     * Enqueues a message with a UTF-8 string key and value, bucketed by its key (rule E2).
     *
     * @param topic the Kafka topic; a legal topic name (E3)
     * @param key the key; may be null (the message id then chooses the bucket)
     * @param value the value; may be null (a tombstone)
     * @return the message written, with its id
     * @throws org.springframework.transaction.IllegalTransactionStateException if no Spring-managed
     *     transaction is active; see {@link #enqueue(List)} for the others
     * @throws IllegalArgumentException if the topic is not a legal Kafka topic name
     */
    OutboxMessage enqueue(String topic, String key, String value);

    /**
     * The bucket count messages must be created with: {@code outbox.bucket-count}.
     *
     * @return the bucket count, {@code >= 1}
     */
    int bucketCount();
}
