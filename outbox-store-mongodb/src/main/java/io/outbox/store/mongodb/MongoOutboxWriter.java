package io.outbox.store.mongodb;

import static com.mongodb.client.model.Filters.eq;

import com.mongodb.MongoException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.Updates;
import io.outbox.OutboxMessage;
import io.outbox.OutboxPayloadTooLargeException;
import io.outbox.spi.support.SequenceReservation;
import io.outbox.spi.support.StoredMessages;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The enqueue helper of a {@link MongoOutboxStore} (rule E4): writes outbox messages inside the
 * caller's {@link ClientSession} transaction, next to the business change. Get it from
 * {@link MongoOutboxStore#writer()}.
 *
 * <pre>{@code
 * try (ClientSession session = client.startSession()) {
 *     session.withTransaction(() -> {
 *         orders.insertOne(session, order);                           // the business change
 *         store.writer().enqueue(session, messages.create("orders", order.id(), json));
 *         return null;
 *     });
 * }
 * }</pre>
 *
 * <h2>Sequence numbers (E5) and the ordering boundary</h2>
 * {@link #enqueue(ClientSession, List)} first reserves each message's sequence number with one
 * atomic {@code findOneAndUpdate({_id: bucket}, {$inc: {seq: n}}, upsert)} per bucket and call
 * ({@code n} messages of one bucket get the contiguous range after the counter's previous value),
 * with majority write concern, then inserts the documents with the caller's session, inside its
 * transaction. The reservation runs <em>outside</em> the caller's transaction, on purpose: inside
 * it, every concurrent transaction writing to a bucket would update the same counter document, so
 * on a real server they would abort each other with write conflicts, and writers of unrelated keys
 * that happen to share a bucket would serialize. Outside it, a reservation never conflicts; the
 * price is a gap in the sequence when the transaction aborts or is retried, and gaps are harmless
 * (only monotonicity matters).
 *
 * <p>Sequence order is reservation order. It equals commit order only for writers that serialize
 * their writes to a key: two transactions that enqueue for the same key concurrently, without
 * first writing a common document, may commit in the opposite order to their reservations, and
 * the relay publishes in reservation order. To keep per-key order equal to commit order, make each
 * transaction write the key's business document (which conflicts with any other open transaction
 * writing it) <em>before</em> it calls {@code enqueue}.
 *
 * <h2>Payload limit (S10)</h2>
 * A message whose {@link StoredMessages#payloadSize} exceeds {@link #maxPayloadBytes()}
 * ({@value MongoOutboxStore#MAX_PAYLOAD_BYTES} bytes) fails with
 * {@link OutboxPayloadTooLargeException} before anything, not even a sequence number,
 * is written.
 *
 * <p>Instances are immutable and thread-safe; one serves every thread of an application.
 */
public final class MongoOutboxWriter {

    private static final String ID = MessageDocuments.ID;
    private static final String SEQ = MessageDocuments.SEQ;
    private static final int UPSERT_ATTEMPTS = 3;

    private final MongoCollection<BsonDocument> messages;
    private final MongoCollection<BsonDocument> sequences;

    MongoOutboxWriter(MongoCollection<BsonDocument> messages, MongoCollection<BsonDocument> sequences) {
        this.messages = Objects.requireNonNull(messages, "messages must not be null");
        this.sequences = Objects.requireNonNull(sequences, "sequences must not be null");
    }

    /**
     * The largest payload this writer accepts (S10).
     *
     * <p>What it counts: the serialized key, the serialized value and the headers as stored, encoded
     * with {@link io.outbox.spi.support.OutboxHeaderCodec}, which stores
     * {@value io.outbox.spi.support.OutboxHeaderCodec#EMPTY_ENCODED_SIZE} bytes for a message without
     * headers ({@link StoredMessages#payloadSize}); a larger message is refused at enqueue with
     * {@link OutboxPayloadTooLargeException}, whose message names the three parts. So a
     * message without headers holds at most this limit minus 5 bytes of key and value together
     * (16,776,829: 16,776,824 bytes of key and value).
     *
     * @return {@link MongoOutboxStore#MAX_PAYLOAD_BYTES}, in bytes of {@link StoredMessages#payloadSize}
     */
    public long maxPayloadBytes() {
        return MongoOutboxStore.MAX_PAYLOAD_BYTES;
    }

    /**
     * Writes messages inside the caller's transaction (E4): they become visible when the caller
     * commits, and never if it aborts. Each message's sequence number is reserved first, outside
     * the transaction (see the class documentation for why and for the ordering boundary).
     * Messages keep their order within each bucket.
     *
     * <p>Call it between {@code session.startTransaction()} and {@code commitTransaction()}, or
     * inside {@code session.withTransaction(...)}, after the business writes. Use a session of
     * the client the store was built on.
     *
     * @param session the caller's session with an active transaction; not null
     * @param messages the messages; not null, no null elements; may be empty (no-op)
     * @throws NullPointerException if an argument or element is null
     * @throws IllegalStateException if the session has no active transaction
     * @throws OutboxPayloadTooLargeException if a message's payload exceeds
     *     {@link #maxPayloadBytes()}; nothing is written, not even a sequence number
     * @throws MongoException on a database error; the caller's transaction should then be
     *     aborted (a duplicate message id in the batch or in the store is reported as a
     *     duplicate-key error)
     */
    public void enqueue(ClientSession session, List<OutboxMessage> messages) {
        Objects.requireNonNull(session, "session must not be null");
        List<BsonDocument> documents = prepare(messages, () -> {
            if (!session.hasActiveTransaction()) {
                throw new IllegalStateException("the ClientSession has no active transaction: call "
                        + "session.startTransaction() (or use session.withTransaction) before enqueue, or use "
                        + "enqueue(messages) without a session for a write outside any transaction");
            }
        });
        if (!documents.isEmpty()) {
            this.messages.insertMany(session, documents);
        }
    }

    /**
     * Writes messages inside the caller's transaction; see {@link #enqueue(ClientSession, List)}.
     *
     * @param session the caller's session with an active transaction; not null
     * @param messages the messages; no null elements
     * @throws NullPointerException if an argument or element is null
     * @throws IllegalStateException if the session has no active transaction
     * @throws OutboxPayloadTooLargeException if a payload exceeds
     *     {@link #maxPayloadBytes()}; nothing is written
     * @throws MongoException on a database error
     */
    public void enqueue(ClientSession session, OutboxMessage... messages) {
        enqueue(session, List.of(messages));
    }

    /**
     * Writes messages without a transaction: for a standalone server, which has none, or for
     * messages that are not tied to a business change. Nothing makes them atomic with any other
     * write (E4 needs {@link #enqueue(ClientSession, List)}). Sequence numbers are reserved as
     * there, then the documents are inserted with one ordered insert. Each document is written
     * atomically, the batch is not: if the insert fails part-way, a prefix of the messages is
     * stored, in order, and retrying the same messages fails with a duplicate-key error on the
     * first one already stored (the document id is the message id).
     *
     * @param messages the messages; not null, no null elements; may be empty (no-op)
     * @throws NullPointerException if the list or an element is null
     * @throws OutboxPayloadTooLargeException if a payload exceeds
     *     {@link #maxPayloadBytes()}; nothing is written, not even a sequence number
     * @throws MongoException on a database error
     */
    public void enqueue(List<OutboxMessage> messages) {
        List<BsonDocument> documents = prepare(messages, () -> { });
        if (!documents.isEmpty()) {
            this.messages.insertMany(documents);
        }
    }

    /**
     * Writes messages without a transaction; see {@link #enqueue(List)}.
     *
     * @param messages the messages; no null elements
     * @throws NullPointerException if an element is null
     * @throws OutboxPayloadTooLargeException if a payload exceeds
     *     {@link #maxPayloadBytes()}; nothing is written
     * @throws MongoException on a database error
     */
    public void enqueue(OutboxMessage... messages) {
        enqueue(List.of(messages));
    }

    /** Validates everything, then reserves sequence numbers and builds the documents. */
    private List<BsonDocument> prepare(List<OutboxMessage> batch, Runnable precondition) {
        Objects.requireNonNull(batch, "messages must not be null");
        precondition.run();
        for (OutboxMessage message : batch) {
            StoredMessages.requirePayloadAtMost(Objects.requireNonNull(message, "messages must not contain null"),
                    maxPayloadBytes());
        }
        if (batch.isEmpty()) {
            return List.of();
        }
        long[] seqs = SequenceReservation.reserve(batch, this::reserve);
        List<BsonDocument> documents = new ArrayList<>(batch.size());
        for (int i = 0; i < seqs.length; i++) {
            documents.add(MessageDocuments.toDocument(batch.get(i), seqs[i]));
        }
        return documents;
    }

    /**
     * Reserves {@code count} sequence numbers in a bucket with one atomic $inc; returns the last.
     * It reads the counter as it was before the increment: that value is as atomic as the
     * increment on every server, whereas mongo-java-server 1.47 encodes an "after" document
     * outside its lock, so concurrent reservations there could see each other's increments.
     */
    private long reserve(int bucket, int count) {
        FindOneAndUpdateOptions upsert = new FindOneAndUpdateOptions().upsert(true)
                .returnDocument(ReturnDocument.BEFORE);
        BsonDocument before = retryingDuplicateKeys(() -> sequences.findOneAndUpdate(eq(ID, bucket),
                Updates.inc(SEQ, (long) count), upsert));
        BsonValue last = before == null ? null : before.get(SEQ);
        return (last == null ? 0 : last.asNumber().longValue()) + count;
    }

    /** Runs an upsert again when a concurrent upsert of the same _id won the insert. */
    private static <T> T retryingDuplicateKeys(Supplier<T> upsert) {
        for (int attempt = 1; ; attempt++) {
            try {
                return upsert.get();
            } catch (MongoException e) {
                if (attempt >= UPSERT_ATTEMPTS || !DuplicateKeys.only(e)) {
                    throw e;
                }
            }
        }
    }

    @Override
    public String toString() {
        return "MongoOutboxWriter[" + messages.getNamespace() + "]";
    }
}
