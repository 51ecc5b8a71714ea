package io.outbox.store.mongodb;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.mongodb.MongoException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Updates;
import io.outbox.OutboxMessage;
import io.outbox.spi.Pending;
import io.outbox.spi.support.StoredMessages;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.testcontainers.junit.jupiter.Testcontainers;

/**
 * The transactional enqueue tests on a real MongoDB replica set in Docker, plus what only a real
 * server shows: a write conflict on a business document serializes two writers, so their messages
 * get sequence numbers in commit order. Skipped, with the reason, where Docker is not available.
 */
@Testcontainers(disabledWithoutDocker = true)
class RealMongoEnqueueTest extends AbstractMongoEnqueueTest {

    @Override
    protected MongoClient connect() {
        return MongoClients.create(RealMongo.connectionString());
    }

    /**
     * The documented ordering boundary: writers that write the key's business document before they
     * enqueue are serialized by the server's write conflict, so the later writer reserves its
     * sequence number after the earlier one committed.
     */
    @Test
    void ordering_writersSerializedByABusinessDocumentGetSequencesInCommitOrder() {
        MongoClient client = client();
        MongoOutboxStore store = MongoOutboxStore.builder(client).database(DATABASE)
                .collectionPrefix("ordering_" + UUID.randomUUID().toString().substring(0, 8) + "_").build();
        store.createSchema();
        MongoCollection<Document> accounts = client.getDatabase(DATABASE)
                .getCollection(store.options().collectionPrefix() + "accounts");
        accounts.insertOne(new Document("_id", "acc-1").append("balance", 0));
        OutboxMessage first = message(0);
        OutboxMessage second = message(0);
        try (ClientSession a = client.startSession(); ClientSession b = client.startSession()) {
            a.startTransaction();
            accounts.updateOne(a, eq("_id", "acc-1"), Updates.inc("balance", 1));
            store.writer().enqueue(a, first);

            b.startTransaction();
            MongoException conflict = catchThrowableOfType(MongoException.class,
                    () -> accounts.updateOne(b, eq("_id", "acc-1"), Updates.inc("balance", 1)));
            assertThat(conflict).as("the second writer's business write conflicts").isNotNull();
            assertThat(conflict.hasErrorLabel(MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL)).isTrue();
            b.abortTransaction();

            a.commitTransaction();

            b.startTransaction();
            accounts.updateOne(b, eq("_id", "acc-1"), Updates.inc("balance", 1));
            store.writer().enqueue(b, second);
            b.commitTransaction();
        }
        List<Pending> batch = store.nextBatch(0, 10);
        assertThat(batch).map(p -> p.message().messageId()).containsExactly(first.messageId(), second.messageId());
        assertThat(((MessageDocuments.Handle) batch.get(1).handle()).seq())
                .isGreaterThan(((MessageDocuments.Handle) batch.get(0).handle()).seq());
        client.getDatabase(DATABASE).getCollection(store.options().messagesCollection()).drop();
        client.getDatabase(DATABASE).getCollection(store.options().sequencesCollection()).drop();
        accounts.drop();
    }

    private static OutboxMessage message(int bucket) {
        return StoredMessages.rebuild(UUID.randomUUID(), bucket, "accounts", new byte[] {1}, new byte[] {2}, List.of(),
                null, Instant.now());
    }
}
