package io.outbox.store.jdbc;

import io.outbox.OutboxMessage;
import io.outbox.spi.OutboxStore;
import io.outbox.tck.OutboxStoreTck;
import java.sql.Connection;
import java.time.Clock;
import java.util.List;
import java.util.Map;

/**
 * The store compatibility kit on one database. Every test gets its own tables (a unique prefix),
 * created with {@link JdbcOutboxStore#createSchema()} and dropped afterwards; every store the kit
 * opens has its own small HikariCP pool, as separate relay processes would, and reads the dialect
 * from the connection.
 */
abstract class JdbcStoreTckBase extends OutboxStoreTck {

    private String prefix;

    /** The database this run uses. */
    abstract TestDatabase database();

    @Override
    protected void createStorage() {
        database().requireReachable();
        prefix = TestDatabase.uniquePrefix();
        database().createTables(prefix);
    }

    @Override
    protected OutboxStore newStore(Clock clock) {
        return JdbcOutboxStore.builder(database().newPool(4)).tablePrefix(prefix).clock(clock)
                .closeDataSource(true).build();
    }

    @Override
    protected void enqueue(OutboxStore store, List<OutboxMessage> messages) throws Exception {
        JdbcOutboxStore jdbc = (JdbcOutboxStore) store;
        try (Connection c = jdbc.dataSource().getConnection()) {
            c.setAutoCommit(false);
            try {
                jdbc.writer().enqueue(c, messages);
                c.commit();
            } catch (Exception e) {
                c.rollback();
                throw e;
            }
        }
    }

    @Override
    protected void enqueueAndRollBack(OutboxStore store, List<OutboxMessage> messages) throws Exception {
        JdbcOutboxStore jdbc = (JdbcOutboxStore) store;
        try (Connection c = jdbc.dataSource().getConnection()) {
            c.setAutoCommit(false);
            jdbc.writer().enqueue(c, messages);
            c.rollback();
        }
    }

    /** A transaction on its own connection, left open until the kit commits it. */
    @Override
    protected OpenTransaction beginEnqueue(OutboxStore store, List<OutboxMessage> messages) throws Exception {
        JdbcOutboxStore jdbc = (JdbcOutboxStore) store;
        Connection c = jdbc.dataSource().getConnection();
        try {
            c.setAutoCommit(false);
            jdbc.writer().enqueue(c, messages);
        } catch (Exception e) {
            try (c) {
                c.rollback();
            }
            throw e;
        }
        return () -> {
            try (c) {
                c.commit();
            }
        };
    }

    /** The writer takes any bucket, as a writer configured with another bucket count would. */
    @Override
    protected void insertRawRow(OutboxStore store, OutboxMessage message) throws Exception {
        enqueue(store, List.of(message));
    }

    /** R12: a header blob with an unknown version byte, written over the stored one. */
    @Override
    protected void corruptStoredHeaders(OutboxStore store, OutboxMessage message) throws Exception {
        JdbcOutboxStore jdbc = (JdbcOutboxStore) store;
        JdbcDialect dialect = jdbc.dialect();
        try (Connection c = jdbc.dataSource().getConnection();
             var update = c.prepareStatement("UPDATE " + dialect.qualified(jdbc.tables(), jdbc.tables().messages())
                     + " SET " + dialect.quote("headers") + " = ? WHERE " + dialect.quote("message_id") + " = ?")) {
            update.setBytes(1, new byte[] {0x7f});
            dialect.setMessageId(update, 2, message.messageId());
            if (update.executeUpdate() != 1) {
                throw new IllegalStateException("no row of message " + message.messageId());
            }
        }
    }

    @Override
    protected long maxPayloadBytes() {
        return JdbcOutboxStore.DEFAULT_MAX_PAYLOAD_BYTES;
    }

    @Override
    protected String providerName() {
        return JdbcOutboxStoreProvider.NAME;
    }

    @Override
    protected Map<String, String> providerConfig() {
        return database().providerConfig(prefix);
    }

    @Override
    protected void dropStorage() throws Exception {
        if (prefix != null) {
            database().dropTables(prefix);
        }
    }
}
