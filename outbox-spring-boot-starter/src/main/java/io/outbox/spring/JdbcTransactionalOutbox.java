package io.outbox.spring;

import io.outbox.OutboxCommitNotifier;
import io.outbox.OutboxMessage;
import io.outbox.OutboxTracing;
import io.outbox.store.jdbc.JdbcOutboxWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Objects;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.jdbc.support.SQLErrorCodeSQLExceptionTranslator;
import org.springframework.jdbc.support.SQLExceptionTranslator;
import org.springframework.transaction.IllegalTransactionStateException;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * {@link Outbox} on the JDBC store: writes on the connection the Spring transaction holds for the
 * data source ({@link DataSourceUtils#getConnection(DataSource)}), so the rows commit or roll back
 * with the business change (rule E4).
 */
final class JdbcTransactionalOutbox extends TransactionalOutbox {

    private final DataSource dataSource;
    private final JdbcOutboxWriter writer;
    private final SQLExceptionTranslator translator;

    JdbcTransactionalOutbox(DataSource dataSource, JdbcOutboxWriter writer, int bucketCount,
                            OutboxCommitNotifier notifier) {
        this(dataSource, writer, bucketCount, notifier, OutboxTracing.global());
    }

    JdbcTransactionalOutbox(DataSource dataSource, JdbcOutboxWriter writer, int bucketCount,
                            OutboxCommitNotifier notifier, OutboxTracing tracing) {
        super(bucketCount, notifier, tracing);
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource must not be null");
        this.writer = Objects.requireNonNull(writer, "writer must not be null");
        this.translator = new SQLErrorCodeSQLExceptionTranslator(dataSource);
    }

    @Override
    void write(List<OutboxMessage> messages) {
        // Checked before getConnection: with synchronization active, DataSourceUtils would bind a fresh
        // auto-commit connection to the foreign transaction and report it as transactional.
        if (TransactionSynchronizationManager.getResource(dataSource) == null) {
            throw notOnThisDataSource();
        }
        Connection connection = DataSourceUtils.getConnection(dataSource);
        try {
            if (connection.getAutoCommit()) {
                throw notOnThisDataSource();
            }
            writer.enqueue(connection, messages);
        } catch (SQLException e) {
            throw Objects.requireNonNull(translator.translate("Outbox.enqueue", null, e));
        } finally {
            DataSourceUtils.releaseConnection(connection, dataSource);
        }
    }

    @Override
    boolean beforeCommit(OutboxCommitNotifier notifier, int[] buckets) {
        Connection connection = DataSourceUtils.getConnection(dataSource);
        try {
            return notifier.beforeCommit(connection, buckets);
        } catch (SQLException e) {
            throw Objects.requireNonNull(translator.translate("Outbox commit notification", null, e));
        } finally {
            DataSourceUtils.releaseConnection(connection, dataSource);
        }
    }

    private static IllegalTransactionStateException notOnThisDataSource() {
        return new IllegalTransactionStateException("Outbox.enqueue found a Spring transaction, but not one "
                + "on the outbox's DataSource: the transaction manager of the @Transactional method must "
                + "manage the same DataSource bean (DataSourceTransactionManager, JdbcTransactionManager or "
                + "JpaTransactionManager on it); the outbox never writes in auto-commit");
    }

    @Override
    public String toString() {
        return "JdbcTransactionalOutbox[" + writer.tables() + "]";
    }
}
