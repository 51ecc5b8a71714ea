package io.outbox.store.mongodb;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lt;

import com.mongodb.MongoException;
import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.result.UpdateResult;
import io.outbox.InboxRetention;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.support.InboxArguments;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import org.bson.BsonBinary;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.UuidRepresentation;
import org.bson.conversions.Bson;

/**
 * The consumer-side inbox on MongoDB (rules I1, I2): inside the consumer's own
 * {@link ClientSession} transaction, {@link #firstDelivery(ClientSession, String, UUID)} records
 * the marker {@code (consumer, messageId)} and says whether this is the first time, so the
 * business effect and the marker commit or abort together.
 *
 * <pre>{@code
 * MongoInbox inbox = MongoInbox.builder(client).database("shop").retention(Duration.ofDays(7)).build();
 * inbox.createSchema();                                      // its two indexes, idempotent
 * try (ClientSession session = client.startSession()) {
 *     session.withTransaction(() -> {                        // retries TransientTransactionError
 *         if (inbox.firstDelivery(session, "billing", MessageIdReader.messageId(record))) {
 *             accounts.updateOne(session, eq("_id", customer), inc("charged", amount));
 *         }
 *         return null;
 *     });
 * }
 * }</pre>
 *
 * <h2>Documents and indexes</h2>
 * Collection {@code <prefix>inbox} (default {@code outbox_inbox}): {@code {consumer: string,
 * messageId: UUID (binary subtype 4), seenAt: date}}, with the unique index
 * {@value #UNIQUE_INDEX} on {@code (consumer, messageId)} and {@value #SEEN_AT_INDEX} on
 * {@code seenAt} for the cleanup. {@code seenAt} is the inbox clock's time, never the server's.
 *
 * <h2>How a repeat is told (no error inside the transaction)</h2>
 * The marker is written with one
 * {@code updateOne({consumer, messageId}, {$setOnInsert: {seenAt}}, {upsert: true})} in the
 * caller's session: an upserted id means first delivery, a matched document a repeat. It never
 * inserts a duplicate and raises no duplicate-key error, which inside a transaction would abort
 * it. When two transactions write the same marker at once, the server fails the later one with a
 * write conflict labelled {@code TransientTransactionError}; {@code withTransaction} (or your own
 * retry loop) runs it again, and then it sees the committed marker: a repeat. Exactly one
 * transaction commits a first delivery (I1). The unique index makes a second marker impossible
 * even for writes outside a transaction.
 *
 * <h2>Retention (I2)</h2>
 * Markers are deleted only by {@link #deleteExpired()} / {@link #deleteExpiredBatch()}, which the
 * application schedules: a batch reads the ids of at most {@link #cleanupBatchSize()} markers with
 * {@code seenAt < now - retention} through the {@code seenAt} index and deletes them with one
 * {@code deleteMany}, majority write concern. No TTL index is used: its deletions would follow
 * the server's clock, not the inbox's.
 *
 * <p>Instances are thread-safe; the client stays the caller's.
 */
public final class MongoInbox implements InboxRetention {

    /** The name of the unique index on {@code (consumer, messageId)}. */
    public static final String UNIQUE_INDEX = "consumer_messageId_unique";

    /** The name of the index on {@code seenAt}. */
    public static final String SEEN_AT_INDEX = "seenAt";

    static final String CONSUMER = "consumer";
    static final String MESSAGE_ID = "messageId";
    static final String SEEN_AT = "seenAt";

    /** The collection's indexes: what {@link #createSchema()} creates and {@link #verifySchema()} checks. */
    static final List<MongoIndex> INDEXES = List.of(
            new MongoIndex(UNIQUE_INDEX, List.of(CONSUMER, MESSAGE_ID), true,
                    "exactly one first delivery per consumer and message id (rule I1) rests on it"),
            new MongoIndex(SEEN_AT_INDEX, List.of(SEEN_AT), false,
                    "the retention cleanup (rule I2) finds expired markers through it"));
    private static final String ID = "_id";
    private static final UpdateOptions UPSERT = new UpdateOptions().upsert(true);

    private final String database;
    private final String collectionName;
    private final MongoCollection<BsonDocument> markers;
    private final Clock clock;
    private final Duration retention;
    private final int cleanupBatchSize;

    private MongoInbox(Builder builder) {
        this.database = builder.database;
        this.collectionName = builder.collectionPrefix + "inbox";
        this.markers = builder.client.getDatabase(database).getCollection(collectionName, BsonDocument.class)
                .withReadPreference(ReadPreference.primary())
                .withWriteConcern(WriteConcern.MAJORITY);
        this.clock = builder.clock;
        this.retention = builder.retention;
        this.cleanupBatchSize = builder.cleanupBatchSize;
    }

    /**
     * Starts building an inbox.
     *
     * @param client the caller's client; not null; not closed by the inbox
     * @return a builder with the defaults: no database (it must be set), prefix
     *     {@value MongoOutboxOptions#DEFAULT_COLLECTION_PREFIX}, the system UTC clock, 7 days'
     *     retention, batches of 1,000
     */
    public static Builder builder(MongoClient client) {
        return new Builder(client);
    }

    /**
     * Records that {@code consumerName} has received {@code messageId}, inside the caller's
     * transaction, and says whether this is the first time (I1). Process the message only when it
     * returns true, in the same transaction; if the transaction aborts, the marker goes too.
     *
     * @param session the caller's session with an active transaction, of the client the inbox was
     *     built on; not null
     * @param consumerName who consumes; see {@link InboxArguments#requireConsumerName(String)}
     * @param messageId the outbox message id; not null
     * @return true if no marker existed, false for a repeat
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the consumer name is not allowed
     * @throws IllegalStateException if the session has no active transaction
     * @throws MongoException on a database error, among them a write conflict with a concurrent
     *     delivery of the same id ({@code TransientTransactionError}: retry the transaction)
     */
    public boolean firstDelivery(ClientSession session, String consumerName, UUID messageId) {
        Objects.requireNonNull(session, "session must not be null");
        InboxArguments.requireConsumerName(consumerName);
        InboxArguments.requireMessageId(messageId);
        if (!session.hasActiveTransaction()) {
            throw new IllegalStateException("the ClientSession has no active transaction: the inbox marker would"
                    + " commit on its own, apart from the business effect (rule I1); call session.startTransaction()"
                    + " or use session.withTransaction");
        }
        UpdateResult result = markers.updateOne(session, key(consumerName, messageId),
                Updates.setOnInsert(SEEN_AT, new BsonDateTime(clock.millis())), UPSERT);
        return result.getUpsertedId() != null;
    }

    /**
     * Whether a committed marker exists, read outside any transaction: for tests and operators.
     *
     * @param consumerName the consumer name
     * @param messageId the message id
     * @return true if it exists
     * @throws MongoException on a database error
     */
    public boolean hasMarker(String consumerName, UUID messageId) {
        return markers.find(key(InboxArguments.requireConsumerName(consumerName),
                InboxArguments.requireMessageId(messageId))).limit(1).first() != null;
    }

    @Override
    public Duration retention() {
        return retention;
    }

    @Override
    public int cleanupBatchSize() {
        return cleanupBatchSize;
    }

    /**
     * {@inheritDoc}
     *
     * @throws MongoException on a database error
     */
    @Override
    public int deleteExpiredBatch() {
        return deleteBatch(InboxArguments.cutoffMillis(clock.millis(), retention));
    }

    /**
     * {@inheritDoc}
     *
     * @throws MongoException on a database error
     */
    @Override
    public long deleteExpired() {
        return InboxArguments.deleteInBatches(
                InboxArguments.cutoffMillis(clock.millis(), retention), cleanupBatchSize, this::deleteBatch);
    }

    private int deleteBatch(long cutoffMillis) {
        Bson expired = lt(SEEN_AT, new BsonDateTime(cutoffMillis));
        List<BsonValue> ids = new ArrayList<>();
        for (BsonDocument d : markers.find(expired).projection(Projections.include(ID)).limit(cleanupBatchSize)) {
            ids.add(d.get(ID));
        }
        if (ids.isEmpty()) {
            return 0;
        }
        return (int) markers.deleteMany(and(in(ID, ids), expired)).getDeletedCount();
    }

    /**
     * Creates the unique index on {@code (consumer, messageId)} and the {@code seenAt} index if
     * absent (creating the collection if needed). Idempotent.
     *
     * @throws MongoException on a database error, for example a missing privilege
     */
    public void createSchema() {
        INDEXES.forEach(index -> index.create(markers));
    }

    /**
     * Checks that the collection has the indexes {@link #createSchema()} makes, whatever their
     * names: a unique index on {@code (consumer, messageId)}, without which two markers of one
     * delivery could exist (I1), and an index leading with {@code seenAt}, without which each
     * cleanup batch (I2) scans the collection.
     *
     * @throws OutboxMisconfigurationException naming the collection, the index and how to create it
     * @throws MongoException on a database error
     */
    public void verifySchema() {
        INDEXES.forEach(index -> index.verify(markers, "the inbox collection " + database + "." + collectionName,
                "MongoInbox.createSchema()"));
    }

    /**
     * The inbox collection's name.
     *
     * @return {@code <prefix>inbox}
     */
    public String collectionName() {
        return collectionName;
    }

    @Override
    public String toString() {
        return "MongoInbox[" + database + "." + collectionName + ", retention=" + retention + ", cleanupBatchSize="
                + cleanupBatchSize + "]";
    }

    private static Bson key(String consumerName, UUID messageId) {
        // A plain equality document, not $and: servers (and emulators) copy its fields into the upserted marker.
        return new BsonDocument(CONSUMER, new BsonString(consumerName))
                .append(MESSAGE_ID, new BsonBinary(messageId, UuidRepresentation.STANDARD));
    }

    /** Builds a {@link MongoInbox}; validation happens in {@link #build()}. Not thread-safe. */
    public static final class Builder {

        private final MongoClient client;
        private String collectionPrefix = MongoOutboxOptions.DEFAULT_COLLECTION_PREFIX;
        private Clock clock = Clock.systemUTC();
        private Duration retention = InboxArguments.DEFAULT_RETENTION;
        private int cleanupBatchSize = InboxArguments.DEFAULT_CLEANUP_BATCH_SIZE;
        private String database;

        private Builder(MongoClient client) {
            this.client = Objects.requireNonNull(client, "client must not be null");
        }

        /**
         * Sets the database holding the inbox collection; required.
         *
         * @param database see {@link MongoOutboxOptions#requireDatabaseName(String)}
         * @return this builder
         */
        public Builder database(String database) {
            this.database = database;
            return this;
        }

        /**
         * Sets the collection prefix: the collection is {@code <prefix>inbox}.
         *
         * @param prefix see {@link MongoOutboxOptions#requireCollectionPrefix(String)}; default
         *     {@value MongoOutboxOptions#DEFAULT_COLLECTION_PREFIX}
         * @return this builder
         */
        public Builder collectionPrefix(String prefix) {
            this.collectionPrefix = prefix;
            return this;
        }

        /**
         * Sets the clock of {@code seenAt} and of the cleanup's cutoff.
         *
         * @param clock the clock; default {@link Clock#systemUTC()}
         * @return this builder
         */
        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /**
         * Sets how long markers are kept at least (I2).
         *
         * @param retention at least 1 s; default 7 days
         * @return this builder
         */
        public Builder retention(Duration retention) {
            this.retention = retention;
            return this;
        }

        /**
         * Sets the most markers one cleanup batch deletes.
         *
         * @param batchSize 1 to {@value InboxArguments#MAX_CLEANUP_BATCH_SIZE}; default
         *     {@value InboxArguments#DEFAULT_CLEANUP_BATCH_SIZE}
         * @return this builder
         */
        public Builder cleanupBatchSize(int batchSize) {
            this.cleanupBatchSize = batchSize;
            return this;
        }

        /**
         * Validates and builds; touches no collection (call {@link MongoInbox#createSchema()}).
         *
         * @return the inbox
         * @throws NullPointerException if the database (unset), prefix, clock or retention is null
         * @throws IllegalArgumentException naming the bad setting and value
         */
        public MongoInbox build() {
            if (database == null) {
                throw new NullPointerException("database must be set (MongoInbox.Builder.database)");
            }
            MongoOutboxOptions.requireDatabaseName(database);
            MongoOutboxOptions.requireCollectionPrefix(collectionPrefix);
            Objects.requireNonNull(clock, "clock must not be null");
            InboxArguments.requireRetention(retention);
            InboxArguments.requireCleanupBatchSize(cleanupBatchSize);
            return new MongoInbox(this);
        }
    }
}
