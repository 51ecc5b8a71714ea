package io.outbox.store.jdbc;

import io.outbox.OutboxMessage;
import io.outbox.OutboxPayloadTooLargeException;
import io.outbox.spi.support.StoredMessages;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The enqueue helper (rule E4): writes outbox messages on the caller's own
 * {@link java.sql.Connection}, inside the caller's transaction, next to the business change.
 *
 * <pre>{@code
 * JdbcOutboxWriter writer = store.writer();       // JdbcOutboxStore.builder(dataSource)...build()
 * OutboxMessageFactory<String, String> messages = OutboxMessageFactory.builder(16)
 *         .keySerializer(new StringSerializer()).valueSerializer(new StringSerializer()).build();
 * try (Connection c = dataSource.getConnection()) {
 *     c.setAutoCommit(false);
 *     insertOrder(c, order);                                   // the business change
 *     writer.enqueue(c, messages.create("orders", order.id(), json));
 *     c.commit();                                              // both, or neither
 * }
 * // then, if the relay runs in this process: relay.wakeUp()
 * }</pre>
 *
 * <p>The helper never commits, rolls back, closes the connection or changes its auto-commit mode:
 * the caller's transaction boundary is what makes the enqueue atomic with the business change. A
 * rollback, or any failure that makes the caller roll back (a business constraint violated in the
 * same transaction, say), leaves no message behind. On a connection in auto-commit mode every
 * message commits on its own as it is written, with no atomicity at all: use a transaction. It
 * works the same under Spring's {@code @Transactional} or {@code JdbcTemplate} (pass the
 * transaction's connection, e.g. from {@code DataSourceUtils.getConnection}) and in jOOQ (from
 * {@code ConnectionProvider}).
 *
 * <p>Every message's payload ({@link StoredMessages#payloadSize}) is checked against
 * {@link #maxPayloadBytes()} before anything is written (S10); a larger one fails the whole call
 * with {@link OutboxPayloadTooLargeException}. Messages are inserted in list order,
 * several in one JDBC batch.
 *
 * <p>Order: a bucket is published in the order of the rows' auto-increment ids (S1), which the
 * database assigns when a row is inserted, not when its transaction commits. Two transactions
 * writing messages of the same key therefore keep their order when the second one cannot insert
 * before the first commits: enqueue <em>after</em> the business write that locks the key's row
 * (update the order, then enqueue its event), as the example above does.
 *
 * <p>Get the writer from {@link JdbcOutboxStore#writer()}, so that it writes the tables the store
 * reads, with its payload limit. Instances are immutable and thread-safe; one can serve every
 * thread of an application.
 */
public final class JdbcOutboxWriter {

    /** How many rows one {@code executeBatch} sends at most. */
    private static final int BATCH_ROWS = 500;

    private final JdbcOutboxTables tables;
    private final long maxPayloadBytes;
    private final JdbcDialect dialect;
    private final Map<JdbcDialect, Sql> sqlByDialect = new EnumMap<>(JdbcDialect.class);

    JdbcOutboxWriter(JdbcOutboxTables tables, long maxPayloadBytes, JdbcDialect dialect) {
        this.tables = Objects.requireNonNull(tables, "tables must not be null");
        this.maxPayloadBytes = JdbcOutboxStore.requirePayloadLimit(maxPayloadBytes);
        this.dialect = dialect;
        for (JdbcDialect d : JdbcDialect.values()) {
            sqlByDialect.put(d, new Sql(d, tables));
        }
    }

    /**
     * The tables this writer inserts into.
     *
     * @return the table names
     */
    public JdbcOutboxTables tables() {
        return tables;
    }

    /**
     * The largest payload this writer accepts.
     *
     * <p>What it counts: the serialized key, the serialized value and the headers as stored, encoded
     * with {@link io.outbox.spi.support.OutboxHeaderCodec}, which stores
     * {@value io.outbox.spi.support.OutboxHeaderCodec#EMPTY_ENCODED_SIZE} bytes for a message without
     * headers ({@link StoredMessages#payloadSize}); a larger message is refused at enqueue with
     * {@link OutboxPayloadTooLargeException}, whose message names the three parts. So a
     * message without headers holds at most this limit minus 5 bytes of key and value together
     * (1,000,000 by default: 999,995 bytes of key and value).
     *
     * @return the limit on {@link StoredMessages#payloadSize}, in bytes
     */
    public long maxPayloadBytes() {
        return maxPayloadBytes;
    }

    /**
     * Writes messages on the caller's connection, in the caller's transaction.
     *
     * @param connection the caller's open connection, normally with auto-commit off; not null;
     *     never committed, rolled back, closed or reconfigured here
     * @param messages the messages, in enqueue order; no null elements; none is a no-op
     * @throws NullPointerException if an argument or a message is null
     * @throws OutboxPayloadTooLargeException if a message's payload exceeds
     *     {@link #maxPayloadBytes()}; nothing is written then
     * @throws SQLException if the insert fails (missing table, lost connection, ...); the caller
     *     should roll back
     */
    public void enqueue(Connection connection, OutboxMessage... messages) throws SQLException {
        enqueue(connection, List.of(messages));
    }

    /**
     * Writes messages on the caller's connection, in the caller's transaction.
     *
     * @param connection the caller's open connection, normally with auto-commit off; not null;
     *     never committed, rolled back, closed or reconfigured here
     * @param messages the messages, in enqueue order; not null, no null elements; an empty list
     *     is a no-op
     * @throws NullPointerException if an argument or a message is null
     * @throws OutboxPayloadTooLargeException if a message's payload exceeds
     *     {@link #maxPayloadBytes()}; nothing is written then
     * @throws SQLException if the insert fails (missing table, lost connection, ...); the caller
     *     should roll back
     */
    public void enqueue(Connection connection, List<OutboxMessage> messages) throws SQLException {
        Objects.requireNonNull(connection, "connection must not be null");
        Objects.requireNonNull(messages, "messages must not be null");
        for (OutboxMessage message : messages) {
            StoredMessages.requirePayloadAtMost(Objects.requireNonNull(message, "messages must not contain null"),
                    maxPayloadBytes);
        }
        if (messages.isEmpty()) {
            return;
        }
        JdbcDialect d = dialect != null ? dialect : JdbcDialect.detect(connection);
        try (PreparedStatement insert = connection.prepareStatement(sqlByDialect.get(d).insertMessage)) {
            if (messages.size() == 1) {
                bind(insert, d, messages.get(0));
                insert.executeUpdate();
                return;
            }
            int pending = 0;
            for (OutboxMessage message : messages) {
                bind(insert, d, message);
                insert.addBatch();
                if (++pending == BATCH_ROWS) {
                    insert.executeBatch();
                    pending = 0;
                }
            }
            if (pending > 0) {
                insert.executeBatch();
            }
        }
    }

    private static void bind(PreparedStatement insert, JdbcDialect dialect, OutboxMessage message)
            throws SQLException {
        insert.setInt(1, message.bucket());
        dialect.setMessageId(insert, 2, message.messageId());
        insert.setString(3, message.topic());
        setBytesOrNull(insert, 4, StoredMessages.key(message)); // the message's own arrays: the driver only reads them
        setBytesOrNull(insert, 5, StoredMessages.value(message));
        insert.setBytes(6, StoredMessages.encodedHeaders(message));
        if (message.partition() == null) {
            insert.setNull(7, Types.INTEGER);
        } else {
            insert.setInt(7, message.partition());
        }
        insert.setLong(8, message.createdAt().toEpochMilli());
    }

    private static void setBytesOrNull(PreparedStatement insert, int index, byte[] bytes) throws SQLException {
        if (bytes == null) {
            insert.setNull(index, Types.VARBINARY);
        } else {
            insert.setBytes(index, bytes);
        }
    }
}
