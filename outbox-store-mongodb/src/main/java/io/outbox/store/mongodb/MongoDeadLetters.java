package io.outbox.store.mongodb;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.gt;

import com.mongodb.MongoException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;
import io.outbox.spi.DeadLetter;
import io.outbox.spi.DeadLetterFailure;
import io.outbox.spi.DeadLetters;
import io.outbox.spi.HeadFailure;
import io.outbox.spi.support.StoreArguments;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.bson.BsonBinary;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.conversions.Bson;

/**
 * Capability C4 of {@link MongoOutboxStore}. A dead letter is its message's own document in the
 * messages collection, marked with a {@value #DEAD} subdocument holding the failure; every
 * pending query of the store excludes marked documents. So each change is one single-document
 * write, which MongoDB applies atomically without a transaction (and on servers without
 * sessions): the move marks a document that is still pending, the replay unmarks it and gives it
 * a newly reserved sequence number (after everything pending in its bucket now, E5), the purge
 * deletes a marked document. The message's fields stay untouched, the header blob as stored.
 * Thread-safe.
 *
 * <pre>
 * dead: { reason: string, causeClass: string, attempts: int32, firstFailureAt: date,
 *         lastFailureAt: date, relayId: string, deadLetteredAt: date }
 * </pre>
 *
 * <p>A failing head's record ({@link DeadLetters#recordHeadFailure}) is a {@value #FAILING}
 * subdocument of the same shape (without {@code deadLetteredAt}) on the pending message's own
 * document, set by one update conditional on the document being pending; it goes with the
 * document when the message is published, and the move removes it in its update. Reading the
 * records of a bucket reads its head (one indexed query, {@code limit 1}). Since the message id is
 * the document id, a second pending message with a dead letter's id is refused at enqueue: a
 * move never meets an existing dead letter.
 */
final class MongoDeadLetters implements DeadLetters {

    /** The marker field of a dead letter. */
    static final String DEAD = "dead";

    /** The field of a pending document holding its failing head's record. */
    static final String FAILING = "failing";

    /** Matches pending (not dead-lettered) message documents. */
    static final Bson PENDING = exists(DEAD, false);

    private static final Bson IS_DEAD = exists(DEAD, true);
    private static final int UPSERT_ATTEMPTS = 3;

    private final MongoCollection<BsonDocument> messages;
    private final MongoCollection<BsonDocument> sequences;
    private final String collection;
    private final Clock clock;

    MongoDeadLetters(MongoCollection<BsonDocument> messages, MongoCollection<BsonDocument> sequences,
                     String collection, Clock clock) {
        this.messages = messages;
        this.sequences = sequences;
        this.collection = collection;
        this.clock = clock;
    }

    /**
     * {@inheritDoc}
     *
     * <p>One single-document update: the pending document is marked with the failure in place;
     * atomic without a transaction.
     */
    @Override
    public boolean moveToDeadLetters(int bucket, UUID messageId, DeadLetterFailure failure) {
        if (bucket < 0) {
            throw new IllegalArgumentException("bucket must be >= 0 but was " + bucket);
        }
        Objects.requireNonNull(messageId, "messageId must not be null");
        Objects.requireNonNull(failure, "failure must not be null");
        BsonDocument dead = failureDocument(failure).append("deadLetteredAt", new BsonDateTime(clock.millis()));
        return messages.updateOne(and(eq(MessageDocuments.ID, new BsonBinary(messageId)),
                eq(MessageDocuments.BUCKET, bucket), PENDING), Updates.combine(Updates.set(DEAD, dead),
                Updates.unset(FAILING))).getModifiedCount() == 1;
    }

    private static BsonDocument failureDocument(DeadLetterFailure failure) {
        return new BsonDocument("reason", new BsonString(failure.reason()))
                .append("causeClass", new BsonString(failure.causeClass()))
                .append("attempts", new BsonInt32(failure.attempts()))
                .append("firstFailureAt", new BsonDateTime(failure.firstFailureAt().toEpochMilli()))
                .append("lastFailureAt", new BsonDateTime(failure.lastFailureAt().toEpochMilli()))
                .append("relayId", new BsonString(failure.relayId()));
    }

    private static DeadLetterFailure failure(BsonDocument f) {
        return new DeadLetterFailure(f.getString("reason").getValue(), f.getString("causeClass").getValue(),
                f.getInt32("attempts").getValue(), Instant.ofEpochMilli(f.getDateTime("firstFailureAt").getValue()),
                Instant.ofEpochMilli(f.getDateTime("lastFailureAt").getValue()), f.getString("relayId").getValue());
    }

    /**
     * {@inheritDoc}
     *
     * <p>One single-document update of the pending message's document.
     */
    @Override
    public boolean recordHeadFailure(int bucket, UUID messageId, DeadLetterFailure failure) {
        if (bucket < 0) {
            throw new IllegalArgumentException("bucket must be >= 0 but was " + bucket);
        }
        Objects.requireNonNull(messageId, "messageId must not be null");
        Objects.requireNonNull(failure, "failure must not be null");
        return messages.updateOne(and(eq(MessageDocuments.ID, new BsonBinary(messageId)),
                eq(MessageDocuments.BUCKET, bucket), PENDING), Updates.set(FAILING, failureDocument(failure)))
                .getMatchedCount() == 1;
    }

    /**
     * {@inheritDoc}
     *
     * <p>One indexed query per bucket for its head ({@code limit 1}).
     */
    @Override
    public List<HeadFailure> headFailures(List<Integer> buckets) {
        List<HeadFailure> found = new ArrayList<>();
        for (int bucket : StoreArguments.requireBuckets(buckets)) {
            BsonDocument head = messages.find(and(eq(MessageDocuments.BUCKET, bucket), PENDING))
                    .sort(Sorts.ascending(MessageDocuments.SEQ)).limit(1)
                    .projection(Projections.include(MessageDocuments.ID, FAILING)).first();
            if (head == null || !head.isDocument(FAILING)) {
                continue;
            }
            try {
                found.add(new HeadFailure(bucket, head.getBinary(MessageDocuments.ID).asUuid(),
                        failure(head.getDocument(FAILING))));
            } catch (RuntimeException e) {
                throw new IllegalStateException("corrupt failing head record of document _id="
                        + head.get(MessageDocuments.ID) + " in collection " + collection + ": " + e.getMessage(), e);
            }
        }
        return List.copyOf(found);
    }

    @Override
    public List<DeadLetter> deadLetters(UUID after, int limit) {
        DeadLetters.requireLimit(limit);
        Bson filter = after == null ? IS_DEAD : and(IS_DEAD, gt(MessageDocuments.ID, new BsonBinary(after)));
        List<DeadLetter> page = new ArrayList<>();
        for (BsonDocument d : messages.find(filter).sort(Sorts.ascending(MessageDocuments.ID)).limit(limit)) {
            page.add(read(d));
        }
        return List.copyOf(page);
    }

    @Override
    public Optional<DeadLetter> deadLetter(UUID messageId) {
        BsonDocument d = messages.find(and(eq(MessageDocuments.ID, new BsonBinary(Objects.requireNonNull(messageId,
                "messageId must not be null"))), IS_DEAD)).first();
        return d == null ? Optional.empty() : Optional.of(read(d));
    }

    @Override
    public boolean replayDeadLetter(UUID messageId) {
        Optional<DeadLetter> dead = deadLetter(messageId);
        if (dead.isEmpty()) {
            return false;
        }
        long seq = reserve(dead.get().bucket());
        return messages.updateOne(and(eq(MessageDocuments.ID, new BsonBinary(messageId)), IS_DEAD),
                Updates.combine(Updates.unset(DEAD), Updates.set(MessageDocuments.SEQ, seq))).getModifiedCount() == 1;
    }

    @Override
    public boolean purgeDeadLetter(UUID messageId) {
        return messages.deleteOne(and(eq(MessageDocuments.ID, new BsonBinary(Objects.requireNonNull(messageId,
                "messageId must not be null"))), IS_DEAD)).getDeletedCount() == 1;
    }

    /** One newly reserved sequence number of the bucket, as the writer reserves them (E5). */
    private long reserve(int bucket) {
        FindOneAndUpdateOptions upsert = new FindOneAndUpdateOptions().upsert(true)
                .returnDocument(ReturnDocument.AFTER);
        for (int attempt = 1; ; attempt++) {
            try {
                BsonDocument after = sequences.findOneAndUpdate(eq(MessageDocuments.ID, bucket),
                        Updates.inc(MessageDocuments.SEQ, 1L), upsert);
                return after.get(MessageDocuments.SEQ).asNumber().longValue();
            } catch (MongoException e) {
                if (attempt >= UPSERT_ATTEMPTS || !DuplicateKeys.only(e)) {
                    throw e;
                }
            }
        }
    }

    private DeadLetter read(BsonDocument d) {
        try {
            BsonDocument dead = d.getDocument(DEAD);
            DeadLetterFailure failure = failure(dead);
            BsonValue partition = d.get(MessageDocuments.PARTITION);
            return new DeadLetter(d.getBinary(MessageDocuments.ID).asUuid(), d.getInt32(MessageDocuments.BUCKET)
                    .getValue(), d.getString(MessageDocuments.TOPIC).getValue(), bytes(d, MessageDocuments.KEY),
                    bytes(d, MessageDocuments.VALUE), d.getBinary(MessageDocuments.HEADERS).getData(),
                    partition == null || partition.isNull() ? null : partition.asInt32().getValue(),
                    Instant.ofEpochMilli(d.getDateTime(MessageDocuments.CREATED_AT).getValue()), failure,
                    Instant.ofEpochMilli(dead.getDateTime("deadLetteredAt").getValue()));
        } catch (RuntimeException e) {
            throw new IllegalStateException("corrupt dead letter document _id=" + d.get(MessageDocuments.ID)
                    + " in collection " + collection + ": " + e.getMessage(), e);
        }
    }

    private static byte[] bytes(BsonDocument d, String field) {
        BsonValue v = d.get(field);
        return v == null || v.isNull() ? null : v.asBinary().getData();
    }
}
