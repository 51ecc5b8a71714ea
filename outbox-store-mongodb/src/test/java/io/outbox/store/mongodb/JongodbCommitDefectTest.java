package io.outbox.store.mongodb;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.in;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Sorts;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonValue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A defect of the jongodb emulator (0.1.6) that the store's own calls reveal: a transaction's
 * commit brings back documents that a {@code deleteMany} outside it deleted while it was open.
 * On jongodb a relay therefore publishes a message again after its markPublished (S2) deleted it,
 * whenever writers commit transactions into the messages collection at the same time. The
 * compatibility kit does not show it: its S2 tests enqueue first and delete afterwards.
 *
 * <p>Each test runs a reader that does what a relay does with one bucket: it reads the bucket in
 * {@code seq} order, then deletes what it read with the store's own filter ({@code bucket}, the
 * {@code _id}s, no {@code dead} field); a document it read again after a deletion that the server
 * acknowledged for every {@code _id} came back.
 */
class JongodbCommitDefectTest {

    private static final String DATABASE = "outbox_jongodb_defect_test";
    private static final int BUCKET = 3;
    private static final int WRITERS = 2;

    private final AtomicBoolean stop = new AtomicBoolean();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final Set<BsonValue> deleted = ConcurrentHashMap.newKeySet();
    private final AtomicLong readAgain = new AtomicLong();
    private final List<Thread> threads = new ArrayList<>();
    private MongoClient client;
    private MongoCollection<BsonDocument> messages;

    @BeforeEach
    void connect() {
        client = Jongodb.connect();
        messages = client.getDatabase(DATABASE)
                .getCollection("messages_" + UUID.randomUUID().toString().replace("-", ""), BsonDocument.class);
    }

    @AfterEach
    void stopAndEmpty() throws InterruptedException {
        stop.set(true);
        for (Thread thread : threads) {
            thread.join(Duration.ofSeconds(30).toMillis());
        }
        try {
            messages.deleteMany(new BsonDocument());
        } finally {
            client.close();
        }
    }

    @Test
    void aCommitBringsBackDocumentsDeletedWhileItsTransactionWasOpen() {
        startWriters(true);
        startReader();

        await("a deleted document read again").atMost(Duration.ofSeconds(60))
                .until(() -> failed() || readAgain.get() > 0);
        assertThat(failure.get()).isNull();
        assertThat(readAgain.get()).as("documents read again after their deletion").isPositive();
    }

    /** The control: the same reader and writers, the writers without transactions. */
    @Test
    void withoutTransactionsNoDeletedDocumentComesBack() {
        startWriters(false);
        startReader();

        await("documents deleted").atMost(Duration.ofSeconds(30)).until(() -> failed() || deleted.size() >= 100);
        await("no deleted document read again").during(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(10))
                .until(() -> !failed() && readAgain.get() == 0);
        assertThat(failure.get()).isNull();
    }

    private boolean failed() {
        return failure.get() != null;
    }

    /** Writers that insert one message document after another, each in its own transaction or not. */
    private void startWriters(boolean transactions) {
        for (int w = 0; w < WRITERS; w++) {
            start("writer-" + w, () -> {
                try (MongoClient own = Jongodb.connect()) {
                    MongoCollection<BsonDocument> collection = own.getDatabase(DATABASE)
                            .getCollection(messages.getNamespace().getCollectionName(), BsonDocument.class);
                    while (!stop.get()) {
                        BsonDocument document = new BsonDocument("_id", new BsonBinary(UUID.randomUUID()))
                                .append(MessageDocuments.BUCKET, new BsonInt32(BUCKET))
                                .append(MessageDocuments.SEQ, new BsonInt64(System.nanoTime()));
                        if (transactions) {
                            try (ClientSession session = own.startSession()) {
                                session.startTransaction();
                                collection.insertOne(session, document);
                                session.commitTransaction();
                            }
                        } else {
                            collection.insertOne(document);
                        }
                    }
                }
            });
        }
    }

    /** Reads the bucket's head and deletes it, as nextBatch and markPublished do. */
    private void startReader() {
        start("reader", () -> {
            while (!stop.get()) {
                List<BsonDocument> batch = messages.find(and(eq(MessageDocuments.BUCKET, BUCKET),
                                exists(MongoDeadLetters.DEAD, false)))
                        .sort(Sorts.ascending(MessageDocuments.SEQ)).limit(500).into(new ArrayList<>());
                List<BsonValue> ids = new ArrayList<>(batch.size());
                for (BsonDocument document : batch) {
                    ids.add(document.get("_id"));
                    if (deleted.contains(document.get("_id"))) {
                        readAgain.incrementAndGet();
                    }
                }
                if (ids.isEmpty()) {
                    continue;
                }
                long count = messages.deleteMany(and(eq(MessageDocuments.BUCKET, BUCKET), in("_id", ids),
                        exists(MongoDeadLetters.DEAD, false))).getDeletedCount();
                if (count == ids.size()) {
                    deleted.addAll(ids);
                }
            }
        });
    }

    private void start(String name, Runnable body) {
        Thread thread = new Thread(() -> {
            try {
                body.run();
            } catch (RuntimeException | Error e) {
                failure.compareAndSet(null, e);
            }
        }, "jongodb-defect-" + name);
        thread.setDaemon(true);
        threads.add(thread);
        thread.start();
    }
}
