package io.outbox.store.mongodb;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;

import com.mongodb.MongoException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import io.outbox.InboxRetention;
import io.outbox.tck.InboxTck;
import java.time.Clock;
import java.time.Duration;
import java.util.UUID;
import org.bson.Document;

/**
 * The inbox kit on a MongoDB server with transactions. Each fixture has its own client; each
 * delivery is one session transaction holding the marker and an effect document, retried on
 * {@code TransientTransactionError} as {@code withTransaction} would. Collections are emptied
 * afterwards, since jongodb cannot drop them.
 */
abstract class AbstractMongoInboxTck extends InboxTck {

    static final String DATABASE = "outbox_inbox_tck";
    private static final int ATTEMPTS = 20;
    private static final int WRITE_CONFLICT = 112;

    private MongoClient admin;
    private String prefix;

    /** A new client to the server under test; the caller closes it. */
    abstract MongoClient connect();

    @Override
    protected void createStorage() {
        admin = connect();
        prefix = "inbox_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12) + "_";
        MongoInbox schema = MongoInbox.builder(admin).database(DATABASE).collectionPrefix(prefix).build();
        schema.createSchema();
        schema.verifySchema();
        admin.getDatabase(DATABASE).getCollection(prefix + "effects").insertOne(new Document("seed", true));
    }

    @Override
    protected InboxFixture open(Clock clock, Duration retention, int cleanupBatchSize) {
        MongoClient client = connect();
        MongoInbox inbox = MongoInbox.builder(client).database(DATABASE).collectionPrefix(prefix).clock(clock)
                .retention(retention).cleanupBatchSize(cleanupBatchSize).build();
        MongoCollection<Document> effects = client.getDatabase(DATABASE).getCollection(prefix + "effects");
        return new InboxFixture() {
            @Override
            public boolean deliver(String consumer, UUID messageId, Ending ending, Duration holdOpen)
                    throws InterruptedException {
                for (int attempt = 1; ; attempt++) {
                    try (ClientSession session = client.startSession()) {
                        session.startTransaction();
                        try {
                            boolean first = inbox.firstDelivery(session, consumer, messageId);
                            if (first) {
                                effects.insertOne(session, new Document("consumer", consumer)
                                        .append("messageId", messageId.toString()));
                            }
                            Thread.sleep(holdOpen.toMillis());
                            if (ending == Ending.COMMIT) {
                                session.commitTransaction();
                            } else {
                                session.abortTransaction();
                            }
                            return first;
                        } catch (MongoException e) {
                            if (session.hasActiveTransaction()) {
                                session.abortTransaction();
                            }
                            if (attempt >= ATTEMPTS || !isTransient(e)) {
                                throw e;
                            }
                        }
                    }
                }
            }

            @Override
            public boolean hasMarker(String consumer, UUID messageId) {
                return inbox.hasMarker(consumer, messageId);
            }

            @Override
            public long effects(String consumer, UUID messageId) {
                return effects.countDocuments(and(eq("consumer", consumer), eq("messageId", messageId.toString())));
            }

            @Override
            public InboxRetention retention() {
                return inbox;
            }

            @Override
            public void close() {
                client.close();
            }
        };
    }

    /**
     * A transaction to run again: labelled {@code TransientTransactionError}, as a real server labels
     * write conflicts, or a bare WriteConflict (112), which jongodb reports at commit without the label.
     */
    private static boolean isTransient(MongoException e) {
        return e.hasErrorLabel(MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL) || e.getCode() == WRITE_CONFLICT;
    }

    @Override
    protected void dropStorage() {
        if (admin != null) {
            try {
                for (String name : new String[] {prefix + "inbox", prefix + "effects"}) {
                    admin.getDatabase(DATABASE).getCollection(name).deleteMany(new Document());
                }
            } finally {
                admin.close();
                admin = null;
            }
        }
    }
}
