package io.outbox.store.mongodb;

import static org.junit.jupiter.api.Assumptions.abort;

import io.outbox.OutboxMessage;
import io.outbox.spi.OutboxStore;
import java.util.List;

/**
 * The whole compatibility kit on mongo-java-server, in process: ordering, deletion, leases under
 * contention between several {@code MongoClient}s (its updates and findAndModify are atomic per
 * document), fidelity, the payload limit, the clock, thread safety, discovery, C1-C6.
 *
 * <p>mongo-java-server has no sessions, so messages go through the session-less
 * {@link MongoOutboxWriter#enqueue(List)} here, and the kit's rollback test (E4) is aborted with
 * the reason. The transactional path is covered by {@code JongodbEnqueueTest} (commit, abort,
 * business write plus messages) and, with the whole kit, by {@code RealMongoOutboxStoreTckTest}
 * where Docker is available.
 */
class MongoOutboxStoreTckTest extends AbstractMongoOutboxStoreTck {

    @Override
    protected String connectionString() {
        return InProcessMongo.connectionString();
    }

    @Override
    protected void enqueue(OutboxStore store, List<OutboxMessage> messages) {
        ((MongoOutboxStore) store).writer().enqueue(messages);
    }

    @Override
    protected void enqueueAndRollBack(OutboxStore store, List<OutboxMessage> messages) {
        abort("mongo-java-server has no sessions or transactions, so a rollback cannot be tested here; "
                + "JongodbEnqueueTest covers commit and abort on jongodb, and RealMongoOutboxStoreTckTest runs "
                + "this test on a real replica set where Docker is available");
    }

    @Override
    protected OpenTransaction beginEnqueue(OutboxStore store, List<OutboxMessage> messages) {
        return abort("mongo-java-server has no transactions to hold open; RealMongoOutboxStoreTckTest runs this "
                + "test on a real replica set where Docker is available");
    }
}
