package io.outbox.store.mongodb;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.gt;
import static com.mongodb.client.model.Filters.gte;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lt;
import static com.mongodb.client.model.Filters.nin;
import static com.mongodb.client.model.Filters.or;

import com.mongodb.MongoException;
import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Accumulators;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.WriteModel;
import io.outbox.OutboxPayloadTooLargeException;
import io.outbox.spi.CloseableOutboxStore;
import io.outbox.spi.CorruptMessageException;
import io.outbox.spi.DeadLetters;
import io.outbox.spi.LeaseRelease;
import io.outbox.spi.LeaseRenewal;
import io.outbox.spi.LeaseRequest;
import io.outbox.spi.LeaseTable;
import io.outbox.spi.LeaseView;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.Pending;
import io.outbox.spi.PendingMetrics;
import io.outbox.spi.PendingSnapshot;
import io.outbox.spi.ReadAhead;
import io.outbox.spi.support.BatchBytes;
import io.outbox.spi.support.BucketLease;
import io.outbox.spi.support.LeaseAcquisition;
import io.outbox.spi.support.LeaseAcquisition.LeaseSnapshot;
import io.outbox.spi.support.LeaseAcquisition.LeaseWrites;
import io.outbox.spi.support.LeaseAcquisition.StrayRows;
import io.outbox.spi.support.LeasePlan;
import io.outbox.spi.support.StoreArguments;
import io.outbox.spi.support.StoredMessages;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonNull;
import org.bson.BsonValue;
import org.bson.conversions.Bson;

/**
 * The MongoDB outbox store: the four-method {@link io.outbox.spi.OutboxStore} SPI, lease renewal (C1), pending
 * metrics (C2), lease release (C3), dead letters (C4) and read ahead (C5, {@link #nextBatchExcluding}:
 * {@code _id: {$nin: [...]}}), plus the enqueue helper that writes messages inside the
 * caller's {@link ClientSession} transaction (E4).
 *
 * <h2>Collections</h2>
 * Named by {@link MongoOutboxOptions} ({@code <prefix>} defaults to {@code outbox_}):
 * <ul>
 *   <li>{@code <prefix>messages}: one document per pending message, {@code _id} the message id
 *       (a UUID, binary subtype 4), then {@code bucket} (int32), {@code seq} (int64), {@code topic},
 *       {@code key} and {@code value} (binary, or null: null and empty stay distinct),
 *       {@code headers} (binary, {@link io.outbox.spi.support.OutboxHeaderCodec}), {@code partition}
 *       (int32 or null) and {@code createdAt} (a BSON date, epoch milliseconds). Unique index
 *       {@value #MESSAGES_INDEX} on {@code (bucket, seq)}: it orders {@link #nextBatch}, answers
 *       {@link #bucketsWithPending} and the S8 probe, and refuses a reused sequence number.</li>
 *   <li>{@code <prefix>sequences}: {@code {_id: bucket, seq: int64}}, the last sequence number
 *       reserved in each bucket (E5).</li>
 *   <li>{@code <prefix>leases}: {@code {_id: bucket, owner: relayId | null, expiresAt: int64}},
 *       one document per bucket, seeded on first use.</li>
 *   <li>{@code <prefix>relays}: {@code {_id: relayId, lastSeen: int64}}, the heartbeats.</li>
 * </ul>
 * All lease and heartbeat times are epoch milliseconds from the injected {@link Clock} (S11),
 * never server time.
 *
 * <h2>Leases (S4, S4b, S5)</h2>
 * {@link #acquireBucketLeases} runs the shared {@link LeaseAcquisition} recipe, planned by
 * {@link LeasePlan}: it probes for stray buckets (S8), upserts the heartbeat, reads all
 * heartbeats and leases, and then sends every planned transition as one {@code updateOne}
 * statement whose filter carries the condition, so the server decides every race:
 * <ul>
 *   <li>claim: {@code {_id: b, owner: observed, expiresAt: observed}} (the value observed,
 *       judged free or expired by observed change, S13) &rarr;
 *       {@code {$set: {owner: me, expiresAt: now + leaseDuration}}};</li>
 *   <li>keep: {@code {_id: b, owner: me, expiresAt: observed}} &rarr;
 *       {@code {$set: {expiresAt: max(observed + 1, now + leaseDuration)}}};</li>
 *   <li>release: {@code {_id: b, owner: me, expiresAt: observed}} &rarr;
 *       {@code {$set: {owner: null}}};</li>
 *   <li>renew (C1): {@code {_id: b, owner: me, expiresAt: {$gt: now, $lt: now + leaseDuration}}}
 *       &rarr; {@code {$set: {expiresAt: now + leaseDuration}}}, then
 *       {@code {_id: b, owner: me, expiresAt: {$gte: now + leaseDuration}}} &rarr;
 *       {@code {$inc: {expiresAt: 1}}}: later than both the stored value and
 *       {@code now + leaseDuration}, so the stored value always changes (S13);</li>
 *   <li>release all (C3): {@code {owner: me}} &rarr; {@code {$set: {owner: null}}}.</li>
 * </ul>
 * The statements of one call travel in one unordered bulk write (one round trip); each is atomic
 * on its own. Missing lease documents are first seeded with {@code $setOnInsert} upserts; a
 * duplicate key from a relay seeding the same bucket is ignored. Lease, heartbeat and counter
 * writes use majority write concern; every read goes to the primary. The owned buckets are then
 * read back from the store.
 *
 * <h2>Enqueue (E4, E5)</h2>
 * {@link #writer()} writes messages inside the caller's {@link ClientSession} transaction after
 * reserving per-bucket sequence numbers; see {@link MongoOutboxWriter} for the ordering boundary.
 *
 * <h2>Payload limit (S10)</h2>
 * A BSON document holds at most {@value #MAX_DOCUMENT_BYTES} bytes; the message document adds at
 * most {@value #DOCUMENT_OVERHEAD_BYTES} bytes of field names, types, lengths and fixed fields
 * (with a 249-character topic). The largest payload (key + value + encoded headers,
 * {@link StoredMessages#payloadSize}) is therefore {@value #MAX_PAYLOAD_BYTES} bytes; a larger
 * message fails at enqueue with {@link OutboxPayloadTooLargeException} before
 * anything, not even a sequence number, is written.
 *
 * <h2>Building</h2>
 * <pre>{@code
 * MongoOutboxStore store = MongoOutboxStore.builder(mongoClient).database("shop").build();
 * store.createSchema();   // the unique (bucket, seq) index; or verifySchema() where an operator made it
 * store.writer().enqueue(session, message);
 * }</pre>
 * {@link Builder#build()} touches no server. The store leaves the caller's client open on
 * {@link #close()} unless {@link Builder#closeClient(boolean)} is set (the provider sets it for the
 * client it creates).
 *
 * <p>Instances are thread-safe (S12): they hold only immutable collection handles over a
 * thread-safe {@link MongoClient}.
 */
public final class MongoOutboxStore implements CloseableOutboxStore, LeaseRenewal.Self, PendingMetrics.Self,
        LeaseRelease.Self, ReadAhead.Self, LeaseView.Self {

    /** The largest BSON document a MongoDB server stores, in bytes: 16 MiB. */
    public static final long MAX_DOCUMENT_BYTES = 16L * 1024 * 1024;

    /**
     * The most bytes a message document holds beyond the message's payload, in bytes: the document
     * frame (5), {@code _id} (26), {@code bucket} (12), {@code seq} (13), {@code topic} with 249
     * characters (261), {@code key} (10), {@code value} (12), {@code headers} (14),
     * {@code partition} (15) and {@code createdAt} (19).
     */
    public static final long DOCUMENT_OVERHEAD_BYTES = 387;

    /**
     * The largest {@link StoredMessages#payloadSize} this store accepts, in bytes:
     * {@link #MAX_DOCUMENT_BYTES} minus {@link #DOCUMENT_OVERHEAD_BYTES}, 16,776,829 bytes.
     */
    public static final long MAX_PAYLOAD_BYTES = MAX_DOCUMENT_BYTES - DOCUMENT_OVERHEAD_BYTES;

    /** The name of the unique index on {@code (bucket, seq)} of the messages collection. */
    public static final String MESSAGES_INDEX = "bucket_seq_unique";

    /** The messages collection's index: what {@link #createSchema()} creates and {@link #verifySchema()} checks. */
    static final MongoIndex MESSAGES_KEY = new MongoIndex(MESSAGES_INDEX, List.of(MessageDocuments.BUCKET,
            MessageDocuments.SEQ), true, "a bucket's batch is read in seq order through it, and it refuses a "
            + "reused sequence number");

    private static final String OWNER = "owner";
    private static final String EXPIRES_AT = "expiresAt";
    private static final String LAST_SEEN = "lastSeen";
    private static final String ID = MessageDocuments.ID;
    private static final String BUCKET = MessageDocuments.BUCKET;
    private static final String SEQ = MessageDocuments.SEQ;
    private static final int UPSERT_ATTEMPTS = 3;
    private static final BulkWriteOptions UNORDERED = new BulkWriteOptions().ordered(false);
    private static final BulkWriteOptions ORDERED = new BulkWriteOptions().ordered(true);

    private final MongoClient client;
    private final boolean ownsClient;
    private final MongoOutboxOptions options;
    private final Clock clock;
    private final LeaseAcquisition acquisition = new LeaseAcquisition();
    private final MongoCollection<BsonDocument> messages;
    private final MongoCollection<BsonDocument> sequences;
    private final MongoCollection<BsonDocument> leases;
    private final MongoCollection<BsonDocument> relays;
    private final MongoOutboxWriter writer;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final MongoDeadLetters deadLetters;
    private final MongoLeases leaseStore = new MongoLeases();

    private MongoOutboxStore(MongoClient client, MongoOutboxOptions options, boolean ownsClient) {
        this.client = client;
        this.options = options;
        this.ownsClient = ownsClient;
        this.clock = options.clock();
        MongoDatabase database = client.getDatabase(options.database());
        this.messages = database.getCollection(options.messagesCollection(), BsonDocument.class)
                .withReadPreference(ReadPreference.primary());
        this.sequences = coordination(database, options.sequencesCollection());
        this.leases = coordination(database, options.leasesCollection());
        this.relays = coordination(database, options.relaysCollection());
        this.writer = new MongoOutboxWriter(messages, sequences);
        this.deadLetters = new MongoDeadLetters(messages, sequences, options.database() + "."
                + options.messagesCollection(), clock);
    }

    private static MongoCollection<BsonDocument> coordination(MongoDatabase database, String name) {
        return database.getCollection(name, BsonDocument.class)
                .withReadPreference(ReadPreference.primary())
                .withWriteConcern(WriteConcern.MAJORITY);
    }

    /**
     * Starts building a store on a client.
     *
     * @param client the client; not null; its codec registry and UUID representation do not
     *     matter, the store encodes its documents itself
     * @return a builder with the defaults: no database (it must be set), collection prefix
     *     {@value MongoOutboxOptions#DEFAULT_COLLECTION_PREFIX}, the system UTC clock, the client
     *     left open on close
     * @throws NullPointerException if {@code client} is null
     */
    public static Builder builder(MongoClient client) {
        return new Builder(client);
    }

    /**
     * The enqueue helper on this store's collections (E4, E5).
     *
     * @return the writer, the same instance on every call; immutable and thread-safe
     */
    public MongoOutboxWriter writer() {
        return writer;
    }

    /**
     * The largest payload this store accepts (S10).
     *
     * <p>What it counts: the serialized key, the serialized value and the headers as stored, encoded
     * with {@link io.outbox.spi.support.OutboxHeaderCodec}, which stores
     * {@value io.outbox.spi.support.OutboxHeaderCodec#EMPTY_ENCODED_SIZE} bytes for a message without
     * headers ({@link StoredMessages#payloadSize}); a larger message is refused at enqueue with
     * {@link OutboxPayloadTooLargeException}, whose message names the three parts. So a
     * message without headers holds at most this limit minus 5 bytes of key and value together
     * (16,776,829: 16,776,824 bytes of key and value).
     *
     * @return {@value #MAX_PAYLOAD_BYTES}, in bytes of {@link StoredMessages#payloadSize}
     */
    public long maxPayloadBytes() {
        return MAX_PAYLOAD_BYTES;
    }

    /**
     * Creates the unique index {@value #MESSAGES_INDEX} on {@code (bucket, seq)} of the messages
     * collection if it does not exist (creating the collection if needed). Idempotent; safe to
     * call from several processes at once. The other collections need only their {@code _id}
     * index.
     *
     * @throws MongoException on a database error, for example a missing privilege
     */
    public void createSchema() {
        MESSAGES_KEY.create(messages);
    }

    /**
     * Checks that the messages collection has a unique index on {@code (bucket, seq)}, whatever its
     * name, as {@link #createSchema()} makes it. Without it every {@link #nextBatch} sorts a
     * collection scan, and two writers could store one sequence number twice. The provider calls
     * it when {@value MongoOutboxStoreProvider#CREATE_INDEXES} is off; a collection that does not
     * exist yet has no index either. The other collections need only their {@code _id} index.
     *
     * @throws OutboxMisconfigurationException naming the collection, the index it needs and how to
     *     create it; rule R6 makes it fatal
     * @throws MongoException on a database error, for example a missing privilege
     */
    public void verifySchema() {
        MESSAGES_KEY.verify(messages, "the outbox messages collection " + options.database() + "."
                + options.messagesCollection(), "MongoOutboxStore.createSchema(), or set "
                + MongoOutboxStoreProvider.CREATE_INDEXES + "=true to have the store create it at start-up");
    }

    /**
     * The settings this store was built with: database, collection names, clock.
     *
     * @return the settings; never null
     */
    public MongoOutboxOptions options() {
        return options;
    }

    // ---------------------------------------------------------------------------------------
    // Leases (S4-S8, C1, C3)
    // ---------------------------------------------------------------------------------------

    /**
     * {@inheritDoc}
     *
     * <p>Round trips: two index-backed S8 probes, the heartbeat upsert, one read of the
     * heartbeats and one of the leases, the seeding upserts (only while lease documents are
     * missing), one bulk write with every keep, release and claim, the deletion of stale
     * heartbeats (rare), and the read-back.
     *
     * @throws OutboxMisconfigurationException if a message or a sequence counter exists in a
     *     bucket below 0 or at or above {@code bucketCount} (S8); the message names the bucket and
     *     the collection
     */
    @Override
    public List<Integer> acquireBucketLeases(LeaseRequest request) {
        StoreArguments.requireRequest(request);
        return acquisition.acquire(request, clock, leaseStore);
    }

    /**
     * {@inheritDoc}
     *
     * <p>The two finds of the acquire recipe's snapshot (C6); nothing written.
     */
    @Override
    public LeaseTable leaseTable(int bucketCount) {
        LeaseTable.requireBucketCount(bucketCount);
        LeaseSnapshot snapshot = leaseStore.readSnapshot(bucketCount);
        return LeaseTable.of(clock.millis(), snapshot.heartbeats(), snapshot.leases(), bucketCount);
    }

    /** The primitives of {@link LeaseAcquisition} on this store's collections. */
    private final class MongoLeases implements LeaseAcquisition.LeaseStore<RuntimeException> {

        /**
         * S8: messages or counters in a bucket the relays never lease mean a bucket-count mismatch.
         * One query per collection; the two ranges of an {@code $or} on one indexed field are one
         * index scan with two intervals.
         */
        @Override
        public List<StrayRows> strayRows(int bucketCount) {
            List<Integer> messageBuckets = new ArrayList<>(1);
            BsonDocument message = messages.find(or(lt(BUCKET, 0), gte(BUCKET, bucketCount)))
                    .projection(Projections.fields(Projections.include(BUCKET), Projections.excludeId()))
                    .limit(1).first();
            if (message != null) {
                messageBuckets.add(message.get(BUCKET).asNumber().intValue());
            }
            List<Integer> counterBuckets = new ArrayList<>(1);
            BsonDocument counter = sequences.find(or(lt(ID, 0), gte(ID, bucketCount))).limit(1).first();
            if (counter != null) {
                counterBuckets.add(counter.get(ID).asNumber().intValue());
            }
            return List.of(
                    StrayRows.of("pending outbox messages", "collection " + options.database() + "."
                            + options.messagesCollection(), messageBuckets),
                    new StrayRows("sequence numbers a writer reserved", "collection " + options.database() + "."
                            + options.sequencesCollection(), counterBuckets, "if the bucket count was changed on "
                            + "purpose after every message was published, delete the counter documents with _id < 0 "
                            + "or _id >= " + bucketCount));
        }

        @Override
        public void writeHeartbeat(String relayId, long nowMillis) {
            retryingDuplicateKeys(() -> relays.updateOne(eq(ID, relayId), Updates.set(LAST_SEEN, nowMillis),
                    new UpdateOptions().upsert(true)));
        }

        @Override
        public LeaseSnapshot readSnapshot(int bucketCount) {
            Map<String, Long> heartbeats = new HashMap<>();
            for (BsonDocument relay : relays.find()) {
                BsonValue lastSeen = relay.get(LAST_SEEN);
                if (relay.isString(ID) && lastSeen != null && lastSeen.isNumber()) {
                    heartbeats.put(relay.getString(ID).getValue(), lastSeen.asNumber().longValue());
                }
            }
            List<BucketLease> all = new ArrayList<>();
            for (BsonDocument lease : leases.find(and(gte(ID, 0), lt(ID, bucketCount)))) {
                try {
                    BsonValue owner = lease.get(OWNER);
                    all.add(new BucketLease(lease.get(ID).asNumber().intValue(),
                            owner == null || owner.isNull() ? null : owner.asString().getValue(),
                            lease.get(EXPIRES_AT).asNumber().longValue()));
                } catch (RuntimeException e) {
                    throw new IllegalStateException("corrupt lease document " + lease.toJson() + " in collection "
                            + options.database() + "." + options.leasesCollection(), e);
                }
            }
            return new LeaseSnapshot(heartbeats, all);
        }

        /** Creates missing lease documents free; one from a concurrent relay is as good. */
        @Override
        public void createFreeLeases(List<Integer> missing) {
            List<WriteModel<BsonDocument>> upserts = new ArrayList<>(missing.size());
            for (int bucket : missing) {
                upserts.add(new UpdateOneModel<>(eq(ID, bucket),
                        Updates.combine(Updates.setOnInsert(OWNER, BsonNull.VALUE), Updates.setOnInsert(EXPIRES_AT, 0L)),
                        new UpdateOptions().upsert(true)));
            }
            try {
                leases.bulkWrite(upserts, UNORDERED);
            } catch (MongoException e) {
                if (!DuplicateKeys.only(e)) {
                    throw e;
                }
                // A concurrent relay inserted the same bucket first; any still missing is seeded next call.
            }
        }

        /** One unordered bulk write with every keep, release and claim. */
        @Override
        public void writeLeases(LeaseWrites plan) {
            String me = plan.relayId();
            List<WriteModel<BsonDocument>> writes = new ArrayList<>();
            for (LeaseAcquisition.Keep keep : plan.keep()) {
                writes.add(new UpdateOneModel<>(ownedAsObserved(me, keep.observed()),
                        Updates.set(EXPIRES_AT, keep.expiresAtMillis())));
            }
            for (BucketLease observed : plan.release()) {
                writes.add(new UpdateOneModel<>(ownedAsObserved(me, observed), Updates.set(OWNER, BsonNull.VALUE)));
            }
            for (BucketLease observed : plan.claim()) {
                // S13: conditional on the exact owner and expiry observed, never on a clock comparison.
                writes.add(new UpdateOneModel<>(and(eq(ID, observed.bucket()), eq(OWNER, observed.owner()),
                        eq(EXPIRES_AT, observed.expiresAtMillis())),
                        Updates.combine(Updates.set(OWNER, me), Updates.set(EXPIRES_AT, plan.claimExpiresAtMillis()))));
            }
            leases.bulkWrite(writes, UNORDERED);
        }

        @Override
        public void deleteStaleHeartbeats(Map<String, Long> stale) {
            List<WriteModel<BsonDocument>> deletes = new ArrayList<>(stale.size());
            stale.forEach((relayId, lastSeen) -> deletes.add(new DeleteOneModel<>(and(eq(ID, relayId),
                    eq(LAST_SEEN, lastSeen)))));
            relays.bulkWrite(deletes, UNORDERED);
        }

        @Override
        public List<Integer> readOwned(String relayId, long nowMillis, int bucketCount) {
            return owned(relayId, nowMillis, and(gte(ID, 0), lt(ID, bucketCount)));
        }
    }

    private static Bson ownedAsObserved(String me, BucketLease observed) {
        return and(eq(ID, observed.bucket()), eq(OWNER, me), eq(EXPIRES_AT, observed.expiresAtMillis()));
    }

    private void beat(String relayId, long now) {
        leaseStore.writeHeartbeat(relayId, now);
    }

    private List<Integer> owned(String relayId, long now, Bson buckets) {
        TreeSet<Integer> owned = new TreeSet<>();
        for (BsonDocument lease : leases.find(and(buckets, eq(OWNER, relayId), gt(EXPIRES_AT, now)))
                .projection(Projections.include(ID)).sort(Sorts.ascending(ID))) {
            owned.add(lease.get(ID).asNumber().intValue());
        }
        return List.copyOf(owned);
    }

    /**
     * {@inheritDoc}
     *
     * <p>One heartbeat upsert, one ordered bulk write with two conditional updates per bucket
     * (together later than both the stored expiry and {@code now + leaseDuration}), one read-back.
     */
    @Override
    public List<Integer> renewBucketLeases(LeaseRequest request) {
        StoreArguments.requireRequest(request);
        long now = clock.millis();
        String me = request.relayId();
        beat(me, now);
        if (request.heldBuckets().isEmpty()) {
            return List.of();
        }
        long extended = now + request.leaseDurationMillis();
        List<WriteModel<BsonDocument>> renewals = new ArrayList<>();
        for (int bucket : request.heldBuckets()) {
            // max(stored + 1, extended) in two ordered steps, so the stored value always changes (S13):
            // raise a shorter lease to extended, then move it on by 1 ms (never shorter, always changed).
            renewals.add(new UpdateOneModel<>(and(eq(ID, bucket), eq(OWNER, me), gt(EXPIRES_AT, now),
                    lt(EXPIRES_AT, extended)), Updates.set(EXPIRES_AT, extended)));
            renewals.add(new UpdateOneModel<>(and(eq(ID, bucket), eq(OWNER, me), gte(EXPIRES_AT, extended)),
                    Updates.inc(EXPIRES_AT, 1L)));
        }
        leases.bulkWrite(renewals, ORDERED);
        return owned(me, now, in(ID, request.heldBuckets()));
    }

    /**
     * {@inheritDoc}
     *
     * <p>One {@code updateMany} fenced by owner, then the heartbeat's deletion.
     */
    @Override
    public void releaseBucketLeases(String relayId) {
        Objects.requireNonNull(relayId, "relayId must not be null");
        leases.updateMany(eq(OWNER, relayId), Updates.set(OWNER, BsonNull.VALUE));
        relays.deleteOne(eq(ID, relayId));
    }

    // ---------------------------------------------------------------------------------------
    // Messages (S1-S3, C2)
    // ---------------------------------------------------------------------------------------

    /**
     * {@inheritDoc}
     *
     * <p>One {@code distinct} over the {@code (bucket, seq)} index.
     *
     * @throws IllegalArgumentException if a bucket is negative
     * @throws NullPointerException if the list or an element is null
     */
    @Override
    public List<Integer> bucketsWithPending(List<Integer> buckets) {
        List<Integer> asked = StoreArguments.requireBuckets(buckets);
        if (asked.isEmpty()) {
            return List.of();
        }
        TreeSet<Integer> pending = new TreeSet<>();
        for (BsonValue bucket : messages.distinct(BUCKET, and(in(BUCKET, asked), MongoDeadLetters.PENDING),
                BsonValue.class)) {
            int b = bucket.asNumber().intValue();
            if (Collections.binarySearch(asked, b) >= 0) {
                pending.add(b);
            }
        }
        return List.copyOf(pending);
    }

    /**
     * {@inheritDoc}
     *
     * <p>One query on the {@code (bucket, seq)} index, sorted by {@code seq}.
     *
     * @throws IllegalStateException if a stored document is malformed (names it)
     */
    @Override
    public List<Pending> nextBatch(int bucket, int maxCount, long maxBytes) {
        StoreArguments.requireBucket(bucket);
        StoreArguments.requireMaxCount(maxCount);
        StoreArguments.requireMaxBytes(maxBytes);
        return readBatch(bucket, and(eq(BUCKET, bucket), MongoDeadLetters.PENDING), maxCount, maxBytes);
    }

    /**
     * {@inheritDoc}
     *
     * <p>The batch query of {@link #nextBatch} with {@code _id: {$nin: [...]}} for the message
     * ids of {@code inFlight}: the server leaves them out, on the same {@code (bucket, seq)} index.
     */
    @Override
    public List<Pending> nextBatchExcluding(int bucket, List<Pending> inFlight, int maxCount, long maxBytes) {
        StoreArguments.requireBucket(bucket);
        StoreArguments.requireMaxCount(maxCount);
        StoreArguments.requireMaxBytes(maxBytes);
        List<BsonBinary> ids = new ArrayList<>(Objects.requireNonNull(inFlight, "inFlight must not be null").size());
        for (Pending p : inFlight) {
            ids.add(new BsonBinary(Objects.requireNonNull(p, "inFlight must not contain null").message().messageId()));
        }
        if (ids.isEmpty()) {
            return nextBatch(bucket, maxCount, maxBytes);
        }
        return readBatch(bucket, and(eq(BUCKET, bucket), MongoDeadLetters.PENDING, nin(ID, ids)), maxCount,
                maxBytes);
    }

    /**
     * Reads the batch through a cursor, stops at the first document the byte budget refuses (S1,
     * {@link BatchBytes}) and closes the cursor, so the server's later replies are never fetched.
     * Beyond the budget the driver holds at most the one reply it is reading: a reply holds at most
     * {@code maxCount} documents and at most 16 MiB (the server's cap, also its largest document).
     */
    private List<Pending> readBatch(int bucket, Bson filter, int maxCount, long maxBytes) {
        List<Pending> batch = new ArrayList<>(Math.min(maxCount, 1024));
        BatchBytes budget = new BatchBytes(maxBytes);
        String collection = options.database() + "." + options.messagesCollection();
        try (MongoCursor<BsonDocument> cursor = messages.find(filter).sort(Sorts.ascending(SEQ)).limit(maxCount)
                .batchSize(maxCount).iterator()) {
            while (cursor.hasNext()) {
                BsonDocument document = cursor.next();
                Pending read;
                try {
                    read = MessageDocuments.fromDocument(document, collection);
                } catch (IllegalStateException e) {
                    BsonValue id = document.get(ID);
                    if (id == null || !id.isBinary() || id.asBinary().getData().length != 16) {
                        throw e;
                    }
                    // R12: a data error of one document; the rows ahead of it still go out.
                    throw new CorruptMessageException(bucket, id.asBinary().asUuid(), batch, e.getMessage(), e);
                }
                if (!budget.admit(read.message())) {
                    break;
                }
                batch.add(read);
            }
        }
        return List.copyOf(batch);
    }

    /**
     * {@inheritDoc}
     *
     * <p>One {@code deleteMany} by {@code _id} (the message id) within the bucket.
     *
     * @throws IllegalArgumentException if a message belongs to another bucket
     * @throws NullPointerException if the list or an element is null
     */
    @Override
    public void markPublished(int bucket, List<Pending> published) {
        String collection = options.database() + "." + options.messagesCollection();
        List<MessageDocuments.Handle> handles = StoreArguments.requirePublished(bucket, published,
                MessageDocuments.Handle.class, h -> h.collection().equals(collection), "collection " + collection);
        List<UUID> ids = new ArrayList<>(handles.size());
        for (MessageDocuments.Handle handle : handles) {
            ids.add(handle.id());
        }
        if (ids.isEmpty()) {
            return;
        }
        List<BsonBinary> keys = ids.stream().map(BsonBinary::new).toList();
        messages.deleteMany(and(eq(BUCKET, bucket), in(ID, keys), MongoDeadLetters.PENDING));
    }

    /**
     * {@inheritDoc}
     *
     * <p>One aggregation ({@code $group} with a count and {@code $min} of {@code createdAt}) over
     * every pending message, limited by {@code maxTimeMS}: its cost grows with the backlog.
     *
     * @throws IllegalArgumentException if the timeout is not positive
     * @throws com.mongodb.MongoExecutionTimeoutException when the timeout elapses
     */
    @Override
    public PendingSnapshot pendingMetrics(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout must not be null");
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive but was " + timeout);
        }
        BsonDocument result = messages.aggregate(List.of(Aggregates.match(MongoDeadLetters.PENDING),
                        Aggregates.group(null, Accumulators.sum("count", 1),
                        Accumulators.min("oldest", "$" + MessageDocuments.CREATED_AT))))
                .maxTime(Math.max(1, timeout.toMillis()), TimeUnit.MILLISECONDS)
                .first();
        if (result == null) {
            return new PendingSnapshot(0, null);
        }
        BsonValue oldest = result.get("oldest");
        return new PendingSnapshot(result.get("count").asNumber().longValue(),
                oldest != null && oldest.isDateTime() ? Instant.ofEpochMilli(oldest.asDateTime().getValue()) : null);
    }

    /**
     * C4: dead letters are marked in place in the messages collection ({@link MongoDeadLetters}):
     * each change is one single-document update, atomic without a transaction.
     *
     * @return the store's dead letters
     */
    @Override
    public Optional<DeadLetters> deadLetters() {
        return Optional.of(deadLetters);
    }

    /**
     * Closes the client if this store owns it ({@link Builder#closeClient(boolean)}, as the
     * provider builds it); otherwise does nothing. Idempotent.
     */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true) && ownsClient) {
            client.close();
        }
    }

    @Override
    public String toString() {
        return "MongoOutboxStore[" + options.database() + "." + options.collectionPrefix() + "*, ownsClient="
                + ownsClient + "]";
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

    /**
     * Builds a {@link MongoOutboxStore}. Not thread-safe; validation happens in {@link #build()},
     * which may be called more than once.
     */
    public static final class Builder {

        private final MongoClient client;
        private String database;
        private String collectionPrefix = MongoOutboxOptions.DEFAULT_COLLECTION_PREFIX;
        private Clock clock = Clock.systemUTC();
        private boolean closeClient;

        private Builder(MongoClient client) {
            this.client = Objects.requireNonNull(client, "client must not be null");
        }

        /**
         * Sets the database holding the outbox collections. Required.
         *
         * @param database a legal MongoDB database name, see
         *     {@link MongoOutboxOptions#requireDatabaseName(String)}; checked in {@link #build()}
         * @return this builder
         */
        public Builder database(String database) {
            this.database = database;
            return this;
        }

        /**
         * Sets the prefix of the four collection names.
         *
         * @param prefix the prefix, see {@link MongoOutboxOptions#requireCollectionPrefix(String)};
         *     default {@value MongoOutboxOptions#DEFAULT_COLLECTION_PREFIX}; checked in {@link #build()}
         * @return this builder
         */
        public Builder collectionPrefix(String prefix) {
            this.collectionPrefix = prefix;
            return this;
        }

        /**
         * Sets the clock all lease and heartbeat time comes from (S11). Relays sharing a store
         * need clocks that run at about the same rate, not in sync (S13).
         *
         * @param clock the clock; not null (checked in {@link #build()}); default {@link Clock#systemUTC()}
         * @return this builder
         */
        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /**
         * Whether {@link MongoOutboxStore#close()} also closes the client. Set it when the store is
         * the client's only user.
         *
         * @param close true to close the client with the store; default false
         * @return this builder
         */
        public Builder closeClient(boolean close) {
            this.closeClient = close;
            return this;
        }

        /**
         * Validates and builds the store; contacts no server (call
         * {@link MongoOutboxStore#createSchema()} or {@link MongoOutboxStore#verifySchema()}).
         *
         * @return the store
         * @throws NullPointerException if the database is not set, or the prefix or clock is null
         * @throws IllegalArgumentException naming the bad setting and value
         */
        public MongoOutboxStore build() {
            if (database == null) {
                throw new NullPointerException("database must be set (MongoOutboxStore.Builder.database)");
            }
            return new MongoOutboxStore(client, new MongoOutboxOptions(database, collectionPrefix, clock),
                    closeClient);
        }
    }
}
