package io.outbox.store.dynamodb;

import io.outbox.OutboxCommitNotifier;
import io.outbox.OutboxMessage;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;

/**
 * Writes the caller's items and outbox messages in one {@code TransactWriteItems} request, and
 * tells the notifier which buckets it wrote once the request has returned, which is when DynamoDB
 * has committed it (rule N1). A cancelled or failed request notifies nothing.
 *
 * <pre>{@code
 * DynamoDbOutboxTransactions tx = DynamoDbOutboxTransactions.of(writer, notifier);
 * tx.write(List.of(TransactWriteItem.builder().put(orderPut).build()), List.of(message));
 * }</pre>
 *
 * <p>Thread-safe.
 */
public final class DynamoDbOutboxTransactions {

    private final DynamoDbOutboxWriter writer;
    private final OutboxCommitNotifier notifier;

    private DynamoDbOutboxTransactions(DynamoDbOutboxWriter writer, OutboxCommitNotifier notifier) {
        this.writer = Objects.requireNonNull(writer, "writer must not be null");
        this.notifier = Objects.requireNonNull(notifier, "notifier must not be null");
    }

    /**
     * A helper writing with this writer and notifying this notifier.
     *
     * @param writer not null
     * @param notifier not null; {@link OutboxCommitNotifier#NONE} for none
     * @return the helper
     */
    public static DynamoDbOutboxTransactions of(DynamoDbOutboxWriter writer, OutboxCommitNotifier notifier) {
        return new DynamoDbOutboxTransactions(writer, notifier);
    }

    /**
     * Runs {@link DynamoDbOutboxWriter#enqueue(Collection, List)} and, after it returned, notifies
     * the messages' buckets.
     *
     * @param businessItems the caller's own items; not null, may be empty
     * @param messages the messages, in enqueue order; not null
     * @throws RuntimeException what the writer throws (for example
     *     {@code TransactionCanceledException}); nothing was written and nothing notified
     */
    public void write(Collection<TransactWriteItem> businessItems, List<OutboxMessage> messages) {
        writer.enqueue(businessItems, messages);
        int[] buckets = messages.stream().mapToInt(OutboxMessage::bucket).distinct().toArray();
        if (buckets.length > 0) {
            notifier.committed(buckets);
        }
    }
}
