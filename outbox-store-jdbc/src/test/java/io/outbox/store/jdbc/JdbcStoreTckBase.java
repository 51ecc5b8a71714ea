package io.outbox.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.OutboxMessage;
import io.outbox.spi.OutboxStore;
import io.outbox.spi.support.StoredMessages;
import io.outbox.tck.OutboxStoreTck;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
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
    /** Whether this test dropped the messages table's CHECK (bucket >= 0) to insert below 0. */
    private boolean bucketCheckDropped;

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

    /**
     * A row below bucket 0, as a foreign writer or a hand-written fix would leave it: the DDL's
     * {@code CHECK (bucket >= 0)} must refuse it first (S8); the check is then dropped, as on a
     * table made by an older DDL, and the row inserted, so the store's probe below 0 is tested too.
     */
    @Override
    protected void insertRawRow(OutboxStore store, OutboxMessage message, int bucket) throws Exception {
        if (bucket >= 0) {
            super.insertRawRow(store, message, bucket);
            return;
        }
        JdbcOutboxStore jdbc = (JdbcOutboxStore) store;
        Sql sql = new Sql(jdbc.dialect(), jdbc.tables());
        try (Connection c = jdbc.dataSource().getConnection()) {
            c.setAutoCommit(true);
            if (!bucketCheckDropped) {
                assertThatThrownBy(() -> insertRow(c, sql, message, bucket))
                        .as("S8: the messages table's CHECK (bucket >= 0) refuses a row in bucket %d", bucket)
                        .isInstanceOf(SQLException.class)
                        .satisfies(e -> assertThat(((SQLException) e).getSQLState()).startsWith("23"));
                try (Statement ddl = c.createStatement()) {
                    ddl.execute("ALTER TABLE " + sql.messages + " DROP CONSTRAINT "
                            + jdbc.dialect().quote(jdbc.tables().messagesBucketCheck()));
                }
                bucketCheckDropped = true;
            }
            insertRow(c, sql, message, bucket);
        }
    }

    private static void insertRow(Connection c, Sql sql, OutboxMessage message, int bucket) throws SQLException {
        try (PreparedStatement insert = c.prepareStatement(sql.insertMessage)) {
            insert.setInt(1, bucket);
            sql.dialect.setMessageId(insert, 2, message.messageId());
            insert.setString(3, message.topic());
            insert.setNull(4, Types.VARBINARY);
            insert.setNull(5, Types.VARBINARY);
            insert.setBytes(6, StoredMessages.encodedHeaders(message));
            insert.setNull(7, Types.INTEGER);
            insert.setLong(8, message.createdAt().toEpochMilli());
            insert.executeUpdate();
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
