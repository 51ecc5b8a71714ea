package io.outbox.spring;

import com.mongodb.client.ClientSession;
import io.outbox.OutboxCommitNotifier;
import io.outbox.OutboxMessage;
import io.outbox.OutboxTracing;
import io.outbox.store.mongodb.MongoOutboxWriter;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Objects;
import org.springframework.data.mongodb.MongoDatabaseFactory;
import org.springframework.transaction.IllegalTransactionStateException;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * {@link Outbox} on the MongoDB store: writes in the {@link ClientSession} that Spring Data
 * MongoDB's {@code MongoTransactionManager} bound to the current transaction for the
 * {@link MongoDatabaseFactory}, so the messages commit or abort with the business writes (rule E4).
 * The session must come from the client the store was built on.
 */
final class MongoTransactionalOutbox extends TransactionalOutbox {

    private final MongoDatabaseFactory factory;
    private final MongoOutboxWriter writer;

    MongoTransactionalOutbox(MongoDatabaseFactory factory, MongoOutboxWriter writer, int bucketCount,
                             OutboxCommitNotifier notifier, OutboxTracing tracing) {
        super(bucketCount, notifier, tracing);
        this.factory = Objects.requireNonNull(factory, "factory must not be null");
        this.writer = Objects.requireNonNull(writer, "writer must not be null");
    }

    @Override
    void write(List<OutboxMessage> messages) {
        ClientSession session = boundSession(TransactionSynchronizationManager.getResource(factory));
        if (session == null || !session.hasActiveTransaction()) {
            throw new IllegalTransactionStateException("Outbox.enqueue found a Spring transaction, but no MongoDB "
                    + "transaction of the MongoDatabaseFactory: use a MongoTransactionManager on that factory for the "
                    + "@Transactional method; the outbox never writes outside a transaction");
        }
        writer.enqueue(session, messages);
    }

    /**
     * The session in Spring Data MongoDB's resource holder. The holder's class is not public; its
     * {@code getSession()} is read reflectively, and a change of that internal API is reported as
     * such rather than as a missing transaction.
     */
    private static ClientSession boundSession(Object holder) {
        if (holder == null) {
            return null;
        }
        try {
            Method getSession = holder.getClass().getDeclaredMethod("getSession");
            getSession.setAccessible(true);
            return (ClientSession) getSession.invoke(holder);
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException("cannot read the ClientSession of Spring Data MongoDB's transaction "
                    + "resource " + holder.getClass().getName() + " (" + e + "); this starter was tested with "
                    + "spring-data-mongodb 5.0", e);
        }
    }

    @Override
    public String toString() {
        return "MongoTransactionalOutbox[" + writer + "]";
    }
}
