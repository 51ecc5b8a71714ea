package io.outbox.store.mongodb;

import io.outbox.OutboxMessage;

/**
 * A message as read from the messages collection, carrying its per-bucket sequence number from
 * {@code nextBatch} to {@code markPublished} (rule S2). Immutable.
 */
final class MongoStoredMessage extends OutboxMessage {

    private final long seq;
    private final String collection;

    MongoStoredMessage(OutboxMessage message, long seq, String collection) {
        super(message);
        this.seq = seq;
        this.collection = collection;
    }

    long seq() {
        return seq;
    }

    /** The {@code database.collection} the message was read from. */
    String collection() {
        return collection;
    }

    @Override
    public String toString() {
        return super.toString() + "[seq=" + seq + "]";
    }
}
