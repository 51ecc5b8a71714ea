package io.outbox.store.dynamodb;

import io.outbox.OutboxMessage;

/**
 * A message read from the messages table, carrying its native key (bucket and sequence) from
 * {@code nextBatch} to {@code markPublished} (rule S2). Immutable.
 */
final class DynamoDbStoredMessage extends OutboxMessage {

    private final String table;
    private final long seq;

    DynamoDbStoredMessage(OutboxMessage message, String table, long seq) {
        super(message);
        this.table = table;
        this.seq = seq;
    }

    String table() {
        return table;
    }

    long seq() {
        return seq;
    }
}
