package io.outbox.demo;

import static com.mongodb.client.model.Filters.eq;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import io.outbox.store.mongodb.MongoInbox;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.bson.Document;

/**
 * The inbox side of the demo on MongoDB: {@link MongoInbox} on the demo's client and a
 * {@code <prefix>counters} collection; one delivery is one session transaction, run with
 * {@code withTransaction} (which retries transient errors).
 */
final class MongoDemoInbox implements DemoInbox {

    private static final int COMMAND_NOT_FOUND = 59;
    private static final int ATTEMPTS = 10;

    private final MongoClient client;
    private final MongoDatabase database;
    private final String databaseName;
    private final MongoInbox inbox;
    private final MongoCollection<Document> counters;

    MongoDemoInbox(MongoClient client, String databaseName, String prefix) {
        this.client = client;
        this.databaseName = databaseName;
        this.database = client.getDatabase(databaseName);
        this.inbox = MongoInbox.builder(client).database(databaseName).collectionPrefix(prefix).build();
        this.counters = database.getCollection(prefix + "counters");
    }

    @Override
    public void createSchema() {
        inbox.createSchema();
        counters.insertOne(new Document("_id", "created")); // creates the collection outside any transaction
        counters.deleteOne(eq("_id", "created"));
    }

    @Override
    public boolean apply(UUID messageId, Order order) {
        for (int attempt = 1; ; attempt++) {
            try (ClientSession session = client.startSession()) {
                return session.withTransaction(() -> {
                    boolean first = inbox.firstDelivery(session, DemoInbox.CONSUMER, messageId);
                    if (first) {
                        counters.updateOne(session, eq("_id", order.customer()), Updates.inc("orders", 1L),
                                new UpdateOptions().upsert(true));
                    }
                    return first;
                });
            } catch (MongoCommandException e) {
                // jongodb reports a commit-time write conflict without the TransientTransactionError label.
                if (attempt >= ATTEMPTS || e.getErrorCode() != 112) {
                    throw e;
                }
            }
        }
    }

    @Override
    public Map<Integer, Long> counters() {
        Map<Integer, Long> result = new HashMap<>();
        for (Document d : counters.find()) {
            result.put(((Number) d.get("_id")).intValue(), ((Number) d.get("orders")).longValue());
        }
        return result;
    }

    @Override
    public List<String> objectNames() {
        return List.of(databaseName + "." + inbox.collectionName(), databaseName + "." + counters.getNamespace()
                .getCollectionName());
    }

    @Override
    public void dropSchema() {
        for (String name : List.of(inbox.collectionName(), counters.getNamespace().getCollectionName())) {
            MongoCollection<Document> collection = database.getCollection(name);
            try {
                collection.drop();
            } catch (MongoException e) {
                if (!(e instanceof MongoCommandException c) || c.getErrorCode() != COMMAND_NOT_FOUND) {
                    throw e;
                }
                collection.deleteMany(new Document()); // jongodb cannot drop: leave it empty
            }
        }
    }
}
