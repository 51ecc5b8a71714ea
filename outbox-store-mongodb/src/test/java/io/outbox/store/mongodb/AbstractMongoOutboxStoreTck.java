package io.outbox.store.mongodb;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import io.outbox.OutboxMessage;
import io.outbox.spi.OutboxStore;
import io.outbox.tck.OutboxStoreTck;
import java.time.Clock;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The compatibility kit over {@link MongoOutboxStore}, for any server reachable by a connection
 * string. Each test gets a fresh database; each {@link #newStore} call gets its own
 * {@link MongoClient}, so the kit's simulated relays race through separate connections as separate
 * processes would. By default every message is enqueued through the transactional helper inside a
 * {@link ClientSession} transaction, so the kit's rollback test (E4) runs too; a server without
 * transactions overrides the three enqueue methods.
 */
abstract class AbstractMongoOutboxStoreTck extends OutboxStoreTck {

    private final List<MongoClient> clients = new ArrayList<>();
    private final Map<OutboxStore, MongoClient> clientOfStore = new IdentityHashMap<>();
    private String database;

    /** Where the server is. */
    protected abstract String connectionString();

    @Override
    protected void createStorage() {
        database = "tck_" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
    }

    private MongoClient newClient() {
        MongoClient client = MongoClients.create(connectionString());
        synchronized (clients) {
            clients.add(client);
        }
        return client;
    }

    @Override
    protected OutboxStore newStore(Clock clock) {
        MongoClient client = newClient();
        MongoOutboxStore store = MongoOutboxStore.builder(client).database(database).clock(clock).build();
        store.createSchema();
        synchronized (clients) {
            clientOfStore.put(store, client);
        }
        return store;
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

    /** The client a store of this test was made on, to start sessions on. */
    protected final MongoClient clientOf(OutboxStore store) {
        synchronized (clients) {
            return clientOfStore.get(store);
        }
    }

    /** S8 writer: the session-less helper, which also leaves the bucket's sequence counter. */
    @Override
    protected void insertRawRow(OutboxStore store, OutboxMessage message) {
        ((MongoOutboxStore) store).writer().enqueue(message);
    }

    /** R12: a header blob with an unknown version byte, written over the stored one. */
    @Override
    protected void corruptStoredHeaders(OutboxStore store, OutboxMessage message) {
        MongoOutboxStore mongo = (MongoOutboxStore) store;
        long changed = clientOf(store).getDatabase(database).getCollection(mongo.options().messagesCollection(),
                        org.bson.BsonDocument.class)
                .updateOne(com.mongodb.client.model.Filters.eq("_id", new org.bson.BsonBinary(message.messageId())),
                        com.mongodb.client.model.Updates.set("headers", new org.bson.BsonBinary(new byte[] {0x7f})))
                .getModifiedCount();
        if (changed != 1) {
            throw new IllegalStateException("no document of message " + message.messageId());
        }
    }

    /**
     * S8 below 0: a message document and its sequence counter in any bucket, written directly, as
     * a foreign writer with a signed hash would leave them.
     */
    @Override
    protected void insertRawRow(OutboxStore store, OutboxMessage message, int bucket) {
        MongoOutboxOptions options = ((MongoOutboxStore) store).options();
        var db = clientOf(store).getDatabase(options.database());
        BsonDocument document = MessageDocuments.toDocument(message, 1);
        document.put(MessageDocuments.BUCKET, new BsonInt32(bucket));
        db.getCollection(options.messagesCollection(), BsonDocument.class).insertOne(document);
        db.getCollection(options.sequencesCollection(), BsonDocument.class).updateOne(
                new BsonDocument("_id", new BsonInt32(bucket)), Updates.inc(MessageDocuments.SEQ, 1L),
                new UpdateOptions().upsert(true));
    }

    /**
     * Whether the server drops databases; where it cannot, the four collections of each test's
     * database are emptied instead.
     */
    protected boolean canDropDatabases() {
        return true;
    }

    @Override
    protected long maxPayloadBytes() {
        return MongoOutboxStore.MAX_PAYLOAD_BYTES;
    }

    @Override
    protected String providerName() {
        return MongoOutboxStoreProvider.NAME;
    }

    @Override
    protected Map<String, String> providerConfig() {
        return Map.of(MongoOutboxStoreProvider.CONNECTION_STRING, connectionString(),
                MongoOutboxStoreProvider.DATABASE, database);
    }

    @Override
    protected void dropStorage() {
        try (MongoClient client = MongoClients.create(connectionString())) {
            if (canDropDatabases()) {
                client.getDatabase(database).drop();
            } else {
                MongoOutboxOptions options = new MongoOutboxOptions(database,
                        MongoOutboxOptions.DEFAULT_COLLECTION_PREFIX, Clock.systemUTC());
                for (String name : List.of(options.messagesCollection(), options.sequencesCollection(),
                        options.leasesCollection(), options.relaysCollection())) {
                    client.getDatabase(database).getCollection(name).deleteMany(new BsonDocument());
                }
            }
        } finally {
            synchronized (clients) {
                clients.forEach(MongoClient::close);
                clients.clear();
                clientOfStore.clear();
            }
        }
    }
}
