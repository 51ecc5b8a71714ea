package io.outbox.store.mongodb;

import static com.mongodb.client.model.Filters.eq;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import io.outbox.OutboxHeader;
import io.outbox.OutboxMessage;
import io.outbox.OutboxPayloadTooLargeException;
import io.outbox.spi.Pending;
import io.outbox.spi.support.StoredMessages;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.stream.IntStream;
import org.bson.BsonDocument;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The transactional enqueue helper (E4, E5) on a server with sessions and transactions: messages
 * written in the caller's transaction appear with its commit and never after its abort, together
 * with the caller's business document. One client, one thread: no lease races here (jongodb's
 * findOneAndUpdate is not atomic across connections).
 *
 * <p>Each test uses its own collection prefix in one database and empties its collections
 * afterwards (jongodb cannot drop collections or databases).
 */
abstract class AbstractMongoEnqueueTest {

    static final String DATABASE = "outbox_enqueue_test";
    private static final int BUCKETS = 8;

    private MongoClient client;
    private MongoOutboxStore store;
    private MongoDatabase database;
    private MongoCollection<Document> orders;
    private String prefix;

    /**
     * Connects to a server with sessions and transactions, failing with a clear message when it is
     * not there.
     *
     * @return a new client; the test closes it
     */
    protected abstract MongoClient connect();

    /** The client of the current test. */
    protected final MongoClient client() {
        return client;
    }

    @BeforeEach
    void createStore() {
        client = connect();
        prefix = "enq_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12) + "_";
        store = MongoOutboxStore.builder(client()).database(DATABASE).collectionPrefix(prefix).build();
        store.createSchema();
        database = client().getDatabase(DATABASE);
        orders = database.getCollection(prefix + "orders");
    }

    @AfterEach
    void emptyCollections() {
        if (store == null) {
            return; // connect() failed and said why
        }
        for (String name : List.of(store.options().messagesCollection(), store.options().sequencesCollection(),
                store.options().leasesCollection(), store.options().relaysCollection(), prefix + "orders")) {
            database.getCollection(name).deleteMany(new Document());
        }
        store.close();
        client.close();
    }

    private static OutboxMessage message(int bucket, String value) {
        return StoredMessages.rebuild(UUID.randomUUID(), bucket, "orders",
                ("key-" + bucket).getBytes(StandardCharsets.UTF_8),
                value.getBytes(StandardCharsets.UTF_8), List.of(OutboxHeader.ofUtf8("source", "enqueue-test")), null,
                Instant.parse("2030-01-02T03:04:05.678Z"));
    }

    private static List<UUID> ids(List<Pending> read) {
        return read.stream().map(p -> p.message().messageId()).toList();
    }

    private static long seq(Pending read) {
        return ((MessageDocuments.Handle) read.handle()).seq();
    }

    private List<Integer> pending() {
        return store.bucketsWithPending(IntStream.range(0, BUCKETS).boxed().toList());
    }

    private long counter(int bucket) {
        BsonDocument counter = database.getCollection(store.options().sequencesCollection(), BsonDocument.class)
                .find(eq("_id", bucket)).first();
        return counter == null ? 0 : counter.get("seq").asNumber().longValue();
    }

    @Test
    void E4_aCommittedTransactionShowsItsMessagesInEnqueueOrder() {
        OutboxMessage first = message(0, "first");
        OutboxMessage other = message(1, "other bucket");
        OutboxMessage second = message(0, "second");
        try (ClientSession session = client().startSession()) {
            session.startTransaction();
            store.writer().enqueue(session, first, other, second);
            session.commitTransaction();
        }
        List<Pending> bucket0 = store.nextBatch(0, 10);
        assertThat(ids(bucket0)).containsExactly(first.messageId(), second.messageId());
        assertThat(bucket0.get(0).message()).as("fields round-trip").isEqualTo(first);
        assertThat(ids(store.nextBatch(1, 10))).containsExactly(other.messageId());
        assertThat(pending()).containsExactly(0, 1);
    }

    @Test
    void E4_anAbortedTransactionLeavesNoMessage() {
        try (ClientSession session = client().startSession()) {
            session.startTransaction();
            store.writer().enqueue(session, message(0, "a"), message(3, "b"));
            session.abortTransaction();
        }
        assertThat(pending()).as("after abort").isEmpty();
        OutboxMessage later = message(3, "committed later");
        try (ClientSession session = client().startSession()) {
            session.startTransaction();
            store.writer().enqueue(session, List.of(later));
            session.commitTransaction();
        }
        assertThat(ids(store.nextBatch(3, 10))).containsExactly(later.messageId());
        assertThat(pending()).containsExactly(3);
    }

    @Test
    void E4_messagesAreInvisibleOutsideTheTransactionUntilItCommits() {
        OutboxMessage m = message(2, "isolated");
        try (ClientSession session = client().startSession()) {
            session.startTransaction();
            store.writer().enqueue(session, m);
            assertThat(pending()).as("seen by the relay before commit").isEmpty();
            session.commitTransaction();
        }
        assertThat(ids(store.nextBatch(2, 10))).containsExactly(m.messageId());
    }

    @Test
    void E4_aBusinessWriteAndItsMessagesCommitTogether() {
        OutboxMessage placed = message(4, "order placed");
        try (ClientSession session = client().startSession()) {
            session.withTransaction(() -> {
                orders.insertOne(session, new Document("_id", "order-1").append("status", "placed"));
                store.writer().enqueue(session, placed);
                return null;
            });
        }
        assertThat(orders.find(eq("_id", "order-1")).first()).isNotNull();
        assertThat(ids(store.nextBatch(4, 10))).containsExactly(placed.messageId());
    }

    @Test
    void E4_aBusinessWriteAndItsMessagesAbortTogether() {
        try (ClientSession session = client().startSession()) {
            assertThatThrownBy(() -> session.withTransaction(() -> {
                orders.insertOne(session, new Document("_id", "order-2").append("status", "placed"));
                store.writer().enqueue(session, message(5, "order placed"));
                throw new IllegalStateException("business rule violated after the writes");
            })).isInstanceOf(IllegalStateException.class).hasMessageContaining("business rule");
        }
        assertThat(orders.countDocuments()).as("business documents").isZero();
        assertThat(pending()).as("outbox messages").isEmpty();
    }

    @Test
    void S10_aTooLargeMessageFailsTheTransactionBeforeAnythingIsWritten() {
        OutboxMessage small = message(6, "small");
        OutboxMessage tooLarge = StoredMessages.rebuild(UUID.randomUUID(), 7, "orders", null,
                new byte[(int) MongoOutboxStore.MAX_PAYLOAD_BYTES - 5 + 1], List.of(), null, Instant.now());
        assertThat(StoredMessages.payloadSize(tooLarge)).isEqualTo(MongoOutboxStore.MAX_PAYLOAD_BYTES + 1);
        try (ClientSession session = client().startSession()) {
            assertThatThrownBy(() -> session.withTransaction(() -> {
                orders.insertOne(session, new Document("_id", "order-3"));
                store.writer().enqueue(session, small, tooLarge);
                return null;
            })).isInstanceOf(OutboxPayloadTooLargeException.class);
        }
        assertThat(orders.countDocuments()).as("business documents").isZero();
        assertThat(pending()).as("outbox messages").isEmpty();
        assertThat(counter(6)).as("no sequence number reserved for the small message").isZero();
        assertThat(counter(7)).as("no sequence number reserved for the large one").isZero();
    }

    @Test
    void E4_enqueueRefusesASessionWithoutATransaction() {
        try (ClientSession session = client().startSession()) {
            assertThatThrownBy(() -> store.writer().enqueue(session, message(0, "no transaction")))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("startTransaction");
        }
        assertThat(pending()).isEmpty();
        assertThat(counter(0)).isZero();
    }

    @Test
    void E5_sequenceNumbersAreReservedOutsideTheTransactionSoAnAbortLeavesAGap() {
        try (ClientSession session = client().startSession()) {
            session.startTransaction();
            store.writer().enqueue(session, message(1, "a"), message(1, "b"), message(1, "c"));
            session.abortTransaction();
        }
        assertThat(counter(1)).as("the reservation survives the abort").isEqualTo(3);
        OutboxMessage kept = message(1, "kept");
        try (ClientSession session = client().startSession()) {
            session.startTransaction();
            store.writer().enqueue(session, kept);
            session.commitTransaction();
        }
        List<Pending> batch = store.nextBatch(1, 10);
        assertThat(ids(batch)).containsExactly(kept.messageId());
        assertThat(seq(batch.get(0))).as("after the gap").isEqualTo(4);
    }

    @Test
    void E5_oneEnqueueReservesAContiguousRangePerBucket() {
        List<OutboxMessage> messages = List.of(message(2, "a"), message(5, "x"), message(2, "b"), message(2, "c"),
                message(5, "y"));
        try (ClientSession session = client().startSession()) {
            session.startTransaction();
            store.writer().enqueue(session, messages);
            session.commitTransaction();
        }
        assertThat(store.nextBatch(2, 10)).map(AbstractMongoEnqueueTest::seq).containsExactly(1L, 2L, 3L);
        assertThat(store.nextBatch(5, 10)).map(AbstractMongoEnqueueTest::seq).containsExactly(1L, 2L);
    }

    /**
     * Two open transactions enqueue into the same bucket, interleaved, and both commit: the
     * counter update does not take part in either transaction, so on a real server they do not
     * conflict on it. (jongodb reports no write conflicts at all, so only the real server proves
     * this.)
     */
    @Test
    void E5_interleavedTransactionsOnOneBucketBothCommit() {
        OutboxMessage a = message(0, "a");
        OutboxMessage b = message(0, "b");
        try (ClientSession first = client().startSession(); ClientSession second = client().startSession()) {
            first.startTransaction();
            second.startTransaction();
            store.writer().enqueue(first, a);
            store.writer().enqueue(second, b);
            second.commitTransaction();
            first.commitTransaction();
        }
        assertThat(ids(store.nextBatch(0, 10))).as("reservation order, not commit order")
                .containsExactly(a.messageId(), b.messageId());
    }

    /** N1: the helper notifies once, after withTransaction committed, with the last run's buckets. */
    @Test
    void N1_withTransactionNotifiesAfterTheCommitOnlyTheBucketsOfTheRunThatCommitted() {
        java.util.List<String> events = new java.util.concurrent.CopyOnWriteArrayList<>();
        io.outbox.OutboxCommitNotifier notifier = buckets -> events.add(java.util.Arrays.toString(buckets)
                + " pending=" + pending());
        java.util.concurrent.atomic.AtomicInteger runs = new java.util.concurrent.atomic.AtomicInteger();
        try (ClientSession session = client().startSession()) {
            String result = MongoOutboxTransactions.of(store.writer(), notifier).run(session, outbox -> {
                if (runs.incrementAndGet() == 1) {
                    outbox.enqueue(message(5, "first run, aborted by a transient error"));
                    com.mongodb.MongoException transientError = new com.mongodb.MongoException(112, "write conflict");
                    transientError.addLabel(com.mongodb.MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL);
                    throw transientError; // withTransaction aborts and runs the body again
                }
                orders.insertOne(session, new Document("_id", "order-1"));
                outbox.enqueue(message(2, "a"), message(6, "b"), message(2, "c"));
                return "placed";
            });
            assertThat(result).isEqualTo("placed");
        }
        assertThat(runs.get()).isEqualTo(2);
        assertThat(events).as("one notification, after the commit, without the aborted run's bucket 5")
                .containsExactly("[2, 6] pending=[2, 6]");
    }

    /** N1: an exception of the body aborts the transaction and notifies nothing. */
    @Test
    void N1_aBodyThatThrowsAbortsAndNotifiesNothing() {
        java.util.List<int[]> events = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (ClientSession session = client().startSession()) {
            assertThatThrownBy(() -> MongoOutboxTransactions.of(store.writer(), events::add).run(session, outbox -> {
                outbox.enqueue(message(1, "never"));
                throw new IllegalStateException("business rule broken");
            })).hasMessage("business rule broken");
        }
        assertThat(events).isEmpty();
        assertThat(pending()).isEmpty();
    }
}
