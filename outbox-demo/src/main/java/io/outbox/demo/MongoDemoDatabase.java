package io.outbox.demo;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import io.outbox.OutboxMessage;
import io.outbox.spi.CloseableOutboxStore;
import io.outbox.spi.OutboxStores;
import io.outbox.store.mongodb.MongoOutboxOptions;
import io.outbox.store.mongodb.MongoOutboxStore;
import io.outbox.store.mongodb.MongoOutboxStoreProvider;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.bson.Document;

/**
 * The demo on MongoDB (a replica set: transactions need one): an {@code orders} collection and
 * the store's four collections, named with the run's prefix. An order is one transaction,
 * {@code session.withTransaction}: the order document, then
 * {@code store.writer().enqueue(session, message)} in the same session.
 */
final class MongoDemoDatabase implements DemoDatabase {

    /** The database when neither {@code --mongodb-database} nor the connection string names one. */
    static final String DEFAULT_DATABASE = "outbox_demo";

    /** MongoDB's "no such command" error code: jongodb has no {@code drop}. */
    private static final int COMMAND_NOT_FOUND = 59;

    private final String connectionString;
    private final String databaseName;
    private final String prefix;
    private final MongoClient client;
    private final MongoDatabase database;
    private final MongoCollection<Document> orders;
    private final MongoOutboxStore store;
    private final String serverVersion;

    MongoDemoDatabase(String connectionString, String databaseName, String prefix) {
        ConnectionString parsed = new ConnectionString(connectionString);
        this.connectionString = connectionString;
        this.databaseName = databaseName != null ? databaseName
                : parsed.getDatabase() != null ? parsed.getDatabase() : DEFAULT_DATABASE;
        this.prefix = prefix;
        this.client = MongoClients.create(MongoClientSettings.builder().applyConnectionString(parsed)
                .applyToClusterSettings(c -> c.serverSelectionTimeout(10, TimeUnit.SECONDS)).build());
        this.database = client.getDatabase(this.databaseName);
        this.orders = database.getCollection(prefix + "orders");
        try {
            this.serverVersion = client.getDatabase("admin").runCommand(new Document("buildInfo", 1))
                    .getString("version");
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
        this.store = MongoOutboxStore.builder(client).database(this.databaseName).collectionPrefix(prefix).build();
    }

    /**
     * Whether the server is the jongodb emulator, whose {@code findOneAndUpdate} and conditional
     * updates are not atomic across connections: more than one writer races for sequence numbers
     * and more than one relay for leases.
     */
    boolean isJongodb() {
        return serverVersion != null && serverVersion.contains("jongodb");
    }

    @Override
    public String describe() {
        return "mongodb: MongoDB " + serverVersion + " at " + String.join(",", new ConnectionString(connectionString)
                .getHosts()) + ", database " + databaseName;
    }

    @Override
    public List<String> objectNames() {
        MongoOutboxOptions o = store.options();
        return List.of(databaseName + "." + orders.getNamespace().getCollectionName(),
                databaseName + "." + o.messagesCollection(), databaseName + "." + o.sequencesCollection(),
                databaseName + "." + o.leasesCollection(), databaseName + "." + o.relaysCollection());
    }

    @Override
    public void createSchema() {
        store.createSchema();
        // Creates the collection outside any transaction, and makes (customer, seq) the business key.
        orders.createIndex(Indexes.ascending("customer", "seq"), new IndexOptions().unique(true));
    }

    @Override
    public void placeOrder(Order order, OutboxMessage message) {
        Document document = new Document("_id", order.orderId())
                .append("customer", order.customer())
                .append("seq", order.seq())
                .append("amountCents", order.amountCents())
                .append("placedAtMicros", order.placedAtMicros())
                .append("messageId", message.messageId().toString());
        try (ClientSession session = client.startSession()) {
            session.withTransaction(() -> {
                orders.insertOne(session, document);
                store.writer().enqueue(session, message); // after the business write, in the same transaction (E4)
                return null;
            });
        }
    }

    @Override
    public void enqueue(List<OutboxMessage> messages) {
        try (ClientSession session = client.startSession()) {
            session.withTransaction(() -> {
                store.writer().enqueue(session, messages);
                return null;
            });
        }
    }

    @Override
    public int maxMessagesPerTransaction() {
        return 500;
    }

    @Override
    public CloseableOutboxStore openRelayStore() {
        return OutboxStores.open(MongoOutboxStoreProvider.NAME, Map.of(
                MongoOutboxStoreProvider.CONNECTION_STRING, connectionString,
                MongoOutboxStoreProvider.DATABASE, databaseName,
                MongoOutboxStoreProvider.COLLECTION_PREFIX, prefix,
                MongoOutboxStoreProvider.CREATE_INDEXES, "false"));
    }

    @Override
    public DemoInbox openInbox() {
        return new MongoDemoInbox(client, databaseName, prefix);
    }

    @Override
    public void dropSchema() {
        MongoOutboxOptions o = store.options();
        for (String name : List.of(orders.getNamespace().getCollectionName(), o.messagesCollection(),
                o.sequencesCollection(), o.leasesCollection(), o.relaysCollection())) {
            MongoCollection<Document> collection = database.getCollection(name);
            try {
                collection.drop();
            } catch (MongoCommandException e) {
                if (e.getErrorCode() != COMMAND_NOT_FOUND) {
                    throw e;
                }
                collection.deleteMany(new Document()); // jongodb cannot drop: leave it empty
            }
        }
    }

    @Override
    public void close() {
        store.close();
        client.close();
    }
}
