package io.outbox.store.mongodb;

import io.outbox.OutboxMessage;

/**
 * A message as read from the messages collection, carrying its per-bucket sequence number from
 * {@code nextBatch} to {@code markPublished} (rule S2). Immutable.
 */
final class MongoStoredMessage extends OutboxMessage {

    private final long seq;

    MongoStoredMessage(OutboxMessage message, long seq) {
        super(message);
        this.seq = seq;
    }

    long seq() {
        return seq;
    }

    @Override
    public String toString() {
        return super.toString() + "[seq=" + seq + "]";
    }
}
