package io.outbox.store.jdbc;

import io.outbox.OutboxHeader;
import io.outbox.OutboxMessage;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/** A message as read from a messages table, carrying its row id for {@code markPublished} (S2). */
final class JdbcStoredMessage extends OutboxMessage {

    private final JdbcOutboxTables tables;
    private final long id;

    JdbcStoredMessage(JdbcOutboxTables tables, long id, UUID messageId, int bucket, String topic, byte[] key,
                  byte[] value, List<OutboxHeader> headers, Integer partition, Instant createdAt) {
        super(messageId, bucket, topic, key, value, headers, partition, createdAt);
        this.tables = tables;
        this.id = id;
    }

    /** The tables the row was read from. */
    JdbcOutboxTables tables() {
        return tables;
    }

    /** The row's auto-increment id. */
    long id() {
        return id;
    }
}
