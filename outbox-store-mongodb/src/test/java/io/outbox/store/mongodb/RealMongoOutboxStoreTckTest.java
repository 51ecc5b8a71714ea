package io.outbox.store.mongodb;

import com.mongodb.client.ClientSession;
import io.outbox.OutboxMessage;
import io.outbox.spi.OutboxStore;
import java.util.List;
import org.testcontainers.junit.jupiter.Testcontainers;

/**
 * The whole compatibility kit on a real MongoDB replica set in Docker, with every message enqueued
 * through the transactional helper inside a {@link ClientSession} transaction, so the kit's
 * rollback test (E4) runs too. Skipped, with the reason, where Docker is not available.
 */
@Testcontainers(disabledWithoutDocker = true)
class RealMongoOutboxStoreTckTest extends AbstractMongoOutboxStoreTck {

    @Override
    protected String connectionString() {
        return RealMongo.connectionString();
    }

    @Override
    protected void enqueue(OutboxStore store, List<OutboxMessage> messages) {
        try (ClientSession session = clientOf(store).startSession()) {
            session.startTransaction();
            try {
                ((MongoOutboxStore) store).writer().enqueue(session, messages);
            } catch (RuntimeException e) {
                session.abortTransaction();
                throw e;
            }
            session.commitTransaction();
        }
    }

    @Override
    protected void enqueueAndRollBack(OutboxStore store, List<OutboxMessage> messages) {
        try (ClientSession session = clientOf(store).startSession()) {
            session.startTransaction();
            ((MongoOutboxStore) store).writer().enqueue(session, messages);
            session.abortTransaction();
        }
    }

    /** A transaction left open in its own session until the kit commits it. */
    @Override
    protected OpenTransaction beginEnqueue(OutboxStore store, List<OutboxMessage> messages) {
        ClientSession session = clientOf(store).startSession();
        try {
            session.startTransaction();
            ((MongoOutboxStore) store).writer().enqueue(session, messages);
        } catch (RuntimeException e) {
            session.close();
            throw e;
        }
        return () -> {
            try (session) {
                session.commitTransaction();
            }
        };
    }
}
