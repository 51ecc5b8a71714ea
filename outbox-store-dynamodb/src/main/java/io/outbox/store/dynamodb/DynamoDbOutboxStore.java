package io.outbox.store.dynamodb;

import static io.outbox.store.dynamodb.MessageItems.number;

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
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemResponse;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.DeleteRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * The outbox store on Amazon DynamoDB (AWS SDK v2): the four SPI methods plus renewal (C1),
 * pending metrics (C2) and release (C3). Tables: see {@link DynamoDbOutboxTables}; enqueue with
 * {@link #writer()} (rule E4).
 *
 * <h2>Leases (S4, S4b, S5, S6, S7, S8)</h2>
 * {@link #acquireBucketLeases} runs the shared {@link LeaseAcquisition} recipe, planned by
 * {@link LeasePlan}: it looks for sequence counters of buckets below 0 or at or above
 * {@code bucketCount} (S8, two one-item Queries), writes the relay's heartbeat, reads
 * every heartbeat and lease in one strongly consistent Query, plans, then makes one conditional
 * {@code UpdateItem} per lease transition, with the clock's epoch milliseconds (S11):
 * <ul>
 *   <li>keep: {@code SET expiresAt = :renewed} if {@code owner = :me AND expiresAt = :seen};</li>
 *   <li>release: {@code REMOVE owner} if {@code owner = :me AND expiresAt = :seen};</li>
 *   <li>claim: {@code SET owner = :me, expiresAt = :now+duration} if owner and expiry are
 *       exactly as observed ({@code #owner = :owner AND #expiresAt = :seen}, or
 *       {@code attribute_not_exists(owner)} for a free lease; a lease observed free at 0 also
 *       matches a missing item, which the update creates): the value the planner judged free or
 *       expired by observed change (S13), never a clock comparison;</li>
 *   <li>stale heartbeat: {@code DeleteItem} if {@code lastSeen = :seen}.</li>
 * </ul>
 * A {@code ConditionalCheckFailedException} means another relay moved first; it is counted in
 * {@link #refusedConditionalWrites()} (DynamoDB bills such writes and traces them as errors) and
 * the read-back decides what the relay owns. Relays that see the same membership plan disjoint
 * writes, so a converged fleet makes none.
 *
 * <h2>Cost in calls</h2>
 * <ul>
 *   <li>{@code acquireBucketLeases}: 4 calls (counter probe Query, heartbeat PutItem, fleet Query,
 *       read-back Query) plus one UpdateItem per lease kept, released or claimed, plus one
 *       DeleteItem per stale heartbeat.</li>
 *   <li>{@code renewBucketLeases}: 1 PutItem plus 1 UpdateItem per bucket renewed (and a GetItem after a
 *       refused one, only where the backend does not return the old item with the refusal); a lease
 *       already at or past {@code now + leaseDuration} (a clock set back, or a renewal in the
 *       millisecond of the last keep) costs a second UpdateItem that moves it on by 1 ms (S13).</li>
 *   <li>{@code releaseBucketLeases}: 1 Query, 1 UpdateItem per lease held, 1 DeleteItem.</li>
 *   <li>{@code nextBatch}: 1 strongly consistent Query (another only past DynamoDB's 1 MB page, or
 *       when the byte budget over the largest payload limits a page's {@code Limit}; reading stops
 *       at the first item over the budget, S1).
 *       The store does not read ahead (capability C5): a Query cannot leave the batch in flight
 *       out without reading, and paying for, its items, so the relay drains a bucket one batch at
 *       a time here.</li>
 *   <li>{@code markPublished}: one BatchWriteItem per 25 messages, plus retries of unprocessed items.</li>
 *   <li>{@code bucketsWithPending}: one strongly consistent Query with {@code Limit 1} per distinct
 *       bucket asked, {@link DynamoDbOutboxOptions#probeParallelism()} at a time. DynamoDB cannot
 *       probe several partition keys in one call; each probe reads at most one item (1 RCU per 4 KB
 *       of that item).</li>
 *   <li>{@code pendingMetrics}: 1 Query over the counters, then per bucket that ever had a message
 *       one Query per 1 MB of its backlog, strongly consistent: it reads every pending item
 *       (1 RCU per 4 KB). Sample it rarely.</li>
 * </ul>
 *
 * <h2>Errors</h2>
 * Throttling ({@code ProvisionedThroughputExceededException}, {@code ThrottlingException}) and 5xx
 * errors are retried by the client's retry strategy; what still fails propagates as an
 * {@code SdkException}, which the relay treats as transient (R3). Nothing is lost: rows leave the
 * table only through {@link #markPublished} (S9).
 *
 * <h2>Building</h2>
 * <pre>{@code
 * DynamoDbOutboxStore store = DynamoDbOutboxStore.builder(dynamoDb).messagesTable("orders_outbox").build();
 * store.createSchema();   // or verifySchema() where the tables come from infrastructure code
 * items.add(store.writer().prepare(message));   // into the caller's TransactWriteItems
 * }</pre>
 * {@link Builder#build()} calls no DynamoDB API.
 *
 * <p>Thread-safe (S12). A store leaves the caller's client open on {@link #close()} unless
 * {@link Builder#closeClient(boolean)} is set (the provider sets it for the client it builds).
 */
public final class DynamoDbOutboxStore implements CloseableOutboxStore, LeaseRenewal.Self, PendingMetrics.Self,
        LeaseRelease.Self, LeaseView.Self {

    /**
     * The largest payload (key + value + encoded headers) this store accepts, in bytes: DynamoDB's
     * 400 KB item limit (409,600 bytes, attribute names and values included) minus 1,024 bytes for
     * the item's other attributes (at most 418 bytes with a 249-character topic). 408,576 bytes.
     */
    public static final long MAX_PAYLOAD_BYTES = MessageItems.ITEM_SIZE_LIMIT - MessageItems.RESERVED_ITEM_BYTES;

    /** BatchWriteItem takes at most this many requests. */
    static final int BATCH_WRITE_LIMIT = 25;

    private static final Logger LOG = LoggerFactory.getLogger(DynamoDbOutboxStore.class);
    private static final long MAX_BACKOFF_MILLIS = 1_000;

    private final DynamoDbClient client;
    private final boolean ownsClient;
    private final DynamoDbOutboxOptions options;
    private final Clock clock;
    private final LeaseAcquisition acquisition = new LeaseAcquisition();
    private final String messagesTable;
    private final String coordinationTable;
    private final DynamoDbOutboxWriter writer;
    private final ExecutorService probes;
    private final AtomicLong refusedWrites = new AtomicLong();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final DynamoDbDeadLetters deadLetters;
    private final DynamoDbLeases leaseStore = new DynamoDbLeases();

    private DynamoDbOutboxStore(DynamoDbClient client, DynamoDbOutboxOptions options, boolean ownsClient) {
        this.client = Objects.requireNonNull(client, "client must not be null");
        this.options = Objects.requireNonNull(options, "options must not be null");
        this.ownsClient = ownsClient;
        this.clock = options.clock();
        this.messagesTable = options.messagesTable();
        this.coordinationTable = options.coordinationTable();
        this.writer = new DynamoDbOutboxWriter(client, options);
        this.deadLetters = new DynamoDbDeadLetters(client, messagesTable, coordinationTable, clock, this::onTables);
        this.probes = options.probeParallelism() == 1 ? null : probePool(options.probeParallelism());
    }

    private static ExecutorService probePool(int threads) {
        AtomicInteger count = new AtomicInteger();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), task -> {
                    Thread t = new Thread(task, "outbox-dynamodb-probe-" + count.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }

    /**
     * Starts building a store on a client.
     *
     * @param client the DynamoDB client; not null. Configure its retry strategy for throttling
     *     (see the module README); the store adds retries only for unprocessed batch items.
     * @return a builder with the defaults: tables {@value DynamoDbOutboxOptions#DEFAULT_MESSAGES_TABLE}
     *     and {@value DynamoDbOutboxOptions#DEFAULT_COORDINATION_TABLE}, the system UTC clock,
     *     {@value DynamoDbOutboxOptions#DEFAULT_PROBE_PARALLELISM} concurrent probes, the client
     *     left open on close
     * @throws NullPointerException if {@code client} is null
     */
    public static Builder builder(DynamoDbClient client) {
        return new Builder(client);
    }

    /**
     * The enqueue helper on this store's client and tables (E4): it returns the items for the
     * caller's own {@code TransactWriteItems}.
     *
     * @return the writer, the same instance on every call; thread-safe
     */
    public DynamoDbOutboxWriter writer() {
        return writer;
    }

    /**
     * The largest payload this store accepts (S10).
     *
     * <p>What it counts: the serialized key, the serialized value and the headers as stored, encoded
     * with {@link io.outbox.spi.support.OutboxHeaderCodec}, which stores
     * {@value io.outbox.spi.support.OutboxHeaderCodec#EMPTY_ENCODED_SIZE} bytes for a message without
     * headers ({@link StoredMessages#payloadSize}); a larger message is refused at enqueue with
     * {@link io.outbox.OutboxPayloadTooLargeException}, whose message names the three parts. So a
     * message without headers holds at most this limit minus 5 bytes of key and value together
     * (408,576: 408,571 bytes of key and value).
     *
     * @return {@value #MAX_PAYLOAD_BYTES}, in bytes of {@link StoredMessages#payloadSize}
     */
    public long maxPayloadBytes() {
        return MAX_PAYLOAD_BYTES;
    }

    /**
     * Creates both tables unless they exist and waits until both are ACTIVE, at most
     * {@link DynamoDbOutboxTables#DEFAULT_TIMEOUT} each; see {@link DynamoDbOutboxTables} for their
     * layout. Idempotent: safe to call from every instance at start-up.
     *
     * @throws OutboxMisconfigurationException if a table exists with another key schema
     * @throws IllegalStateException if a table is not ACTIVE in time, or the thread is interrupted
     * @throws software.amazon.awssdk.core.exception.SdkException on a DynamoDB error
     */
    public void createSchema() {
        createSchema(DynamoDbOutboxTables.DEFAULT_TIMEOUT);
    }

    /**
     * Creates both tables unless they exist and waits until both are ACTIVE.
     *
     * @param timeout how long to wait for each table; not null, positive
     * @throws OutboxMisconfigurationException if a table exists with another key schema
     * @throws IllegalStateException if a table is not ACTIVE in time, or the thread is interrupted
     * @throws software.amazon.awssdk.core.exception.SdkException on a DynamoDB error
     */
    public void createSchema(Duration timeout) {
        DynamoDbOutboxTables.create(client, options, timeout);
    }

    /**
     * Checks that both tables exist and have the outbox's key schema, so that a store on absent
     * tables fails at start-up instead of on each call. One {@code GetItem} of a key no outbox item
     * has per table (no {@code DescribeTable} permission needed). The provider calls it when
     * {@value DynamoDbOutboxStoreProvider#CREATE_TABLES} is off.
     *
     * @throws OutboxMisconfigurationException naming every absent table and how to create it, or a
     *     table whose key schema differs; rule R6 makes it fatal
     * @throws software.amazon.awssdk.core.exception.SdkException on another DynamoDB error
     */
    public void verifySchema() {
        DynamoDbOutboxTables.verify(client, options);
    }

    /**
     * The options this store was built with.
     *
     * @return the options
     */
    public DynamoDbOutboxOptions options() {
        return options;
    }

    /**
     * How many of this instance's conditional lease writes DynamoDB refused
     * ({@code ConditionalCheckFailedException}) since it was created: claims lost to another relay,
     * keeps and releases of leases that changed, renewals of lost leases, stale heartbeats that came
     * back. A converged fleet adds none (S4b).
     *
     * @return the count, {@code >= 0}
     */
    public long refusedConditionalWrites() {
        return refusedWrites.get();
    }

    // ---------------------------------------------------------------------------------------
    // Leases
    // ---------------------------------------------------------------------------------------

    @Override
    public List<Integer> acquireBucketLeases(LeaseRequest request) {
        return onTables(() -> acquireLeases(request));
    }

    /**
     * {@inheritDoc}
     *
     * <p>The fleet query of the acquire recipe's snapshot (C6); nothing written.
     */
    @Override
    public LeaseTable leaseTable(int bucketCount) {
        LeaseTable.requireBucketCount(bucketCount);
        return onTables(() -> {
            LeaseSnapshot snapshot = leaseStore.readSnapshot(bucketCount);
            return LeaseTable.of(clock.millis(), snapshot.heartbeats(), snapshot.leases(), bucketCount);
        });
    }

    private List<Integer> acquireLeases(LeaseRequest request) {
        StoreArguments.requireRequest(request);
        return acquisition.acquire(request, clock, leaseStore);
    }

    /**
     * The primitives of {@link LeaseAcquisition} on the coordination table. No seeding: a claim is
     * a conditional {@code UpdateItem}, which creates a missing lease item.
     */
    private final class DynamoDbLeases implements LeaseAcquisition.LeaseStore<RuntimeException> {

        /**
         * S8: a counter below 0 or at or above bucketCount means some writer uses buckets this relay
         * never leases. Two one-item Queries on the counter partition, one on each side (a negative
         * bucket's zero-padded sort key starts with '-', which sorts before every digit).
         */
        @Override
        public List<StrayRows> strayRows(int bucketCount) {
            List<Integer> stray = new ArrayList<>(2);
            firstCounter("#sk < :bound", CoordinationItems.padded(0)).ifPresent(stray::add);
            firstCounter("#sk >= :bound", CoordinationItems.padded(bucketCount)).ifPresent(stray::add);
            return List.of(new StrayRows("outbox messages a writer enqueued", "table " + coordinationTable
                    + ", which holds their sequence counters", stray, "if the count was changed on purpose, drain those "
                    + "buckets and delete their counter items (pk = \"counter\", sk outside [\""
                    + CoordinationItems.padded(0) + "\", \"" + CoordinationItems.padded(bucketCount) + "\"))"));
        }

        private OptionalInt firstCounter(String skCondition, String bound) {
            QueryResponse response = client.query(QueryRequest.builder()
                    .tableName(coordinationTable)
                    .keyConditionExpression("#pk = :counter AND " + skCondition)
                    .expressionAttributeNames(Map.of("#pk", CoordinationItems.PK, "#sk", CoordinationItems.SK))
                    .expressionAttributeValues(Map.of(":counter", AttributeValue.fromS(CoordinationItems.COUNTER),
                            ":bound", AttributeValue.fromS(bound)))
                    .consistentRead(true)
                    .limit(1)
                    .build());
            return response.items().isEmpty() ? OptionalInt.empty() : OptionalInt.of(
                    Math.toIntExact(MessageItems.requiredNumber(response.items().get(0), CoordinationItems.BUCKET)));
        }

        @Override
        public void writeHeartbeat(String relayId, long nowMillis) {
            putHeartbeat(relayId, nowMillis);
        }

        @Override
        public LeaseSnapshot readSnapshot(int bucketCount) {
            Map<String, Long> heartbeats = new HashMap<>();
            List<BucketLease> leases = new ArrayList<>();
            readFleet(heartbeats, leases);
            return new LeaseSnapshot(heartbeats, leases);
        }

        @Override
        public void writeLeases(LeaseWrites writes) {
            String me = writes.relayId();
            for (LeaseAcquisition.Keep keep : writes.keep()) {
                fencedUpdate(keep.observed(), me, "SET #expiresAt = :exp",
                        Map.of(":exp", number(keep.expiresAtMillis())));
            }
            for (BucketLease seen : writes.release()) {
                fencedUpdate(seen, me, "REMOVE #owner", Map.of());
            }
            for (BucketLease seen : writes.claim()) {
                claim(seen, me, writes.claimExpiresAtMillis());
            }
        }

        @Override
        public void deleteStaleHeartbeats(Map<String, Long> stale) {
            stale.forEach(DynamoDbOutboxStore.this::deleteStaleHeartbeat);
        }

        @Override
        public List<Integer> readOwned(String relayId, long nowMillis, int bucketCount) {
            return ownedLeases(relayId, nowMillis, bucketCount);
        }
    }

    private void putHeartbeat(String relayId, long now) {
        Map<String, AttributeValue> item = CoordinationItems.relayKey(relayId);
        item.put(CoordinationItems.RELAY, AttributeValue.fromS(relayId));
        item.put(CoordinationItems.LAST_SEEN, number(now));
        client.putItem(r -> r.tableName(coordinationTable).item(item));
    }

    /** One strongly consistent Query returns every heartbeat and every lease. */
    private void readFleet(Map<String, Long> heartbeats, List<BucketLease> leases) {
        for (Map<String, AttributeValue> item : client.queryPaginator(fleetQuery(false, null, Map.of())).items()) {
            String sk = MessageItems.required(item, CoordinationItems.SK).s();
            if (sk.startsWith(CoordinationItems.LEASE_PREFIX)) {
                leases.add(lease(item));
            } else if (sk.startsWith(CoordinationItems.RELAY_PREFIX)) {
                heartbeats.put(MessageItems.required(item, CoordinationItems.RELAY).s(),
                        MessageItems.requiredNumber(item, CoordinationItems.LAST_SEEN));
            }
        }
    }

    /**
     * A strongly consistent Query on the fleet partition: everything, or only the leases, optionally
     * filtered (a filter saves transfer, not read capacity).
     */
    private QueryRequest fleetQuery(boolean leasesOnly, String filter, Map<String, AttributeValue> filterValues) {
        Map<String, String> names = new HashMap<>();
        Map<String, AttributeValue> values = new HashMap<>(filterValues);
        names.put("#pk", CoordinationItems.PK);
        values.put(":fleet", AttributeValue.fromS(CoordinationItems.FLEET));
        String condition = "#pk = :fleet";
        if (leasesOnly) {
            names.put("#sk", CoordinationItems.SK);
            values.put(":prefix", AttributeValue.fromS(CoordinationItems.LEASE_PREFIX));
            condition += " AND begins_with(#sk, :prefix)";
        }
        if (filter != null) {
            names.put("#owner", CoordinationItems.OWNER);
            if (filter.contains("#expiresAt")) {
                names.put("#expiresAt", CoordinationItems.EXPIRES_AT);
            }
        }
        return QueryRequest.builder().tableName(coordinationTable).keyConditionExpression(condition)
                .filterExpression(filter).expressionAttributeNames(names).expressionAttributeValues(values)
                .consistentRead(true).build();
    }

    private static BucketLease lease(Map<String, AttributeValue> item) {
        int bucket = Math.toIntExact(MessageItems.requiredNumber(item, CoordinationItems.BUCKET));
        AttributeValue owner = item.get(CoordinationItems.OWNER);
        AttributeValue expiresAt = item.get(CoordinationItems.EXPIRES_AT);
        return new BucketLease(bucket, owner == null ? null : owner.s(),
                expiresAt == null ? 0L : Long.parseLong(expiresAt.n()));
    }

    /** Keep or release: fenced by owner and the expiry last seen (S5). */
    private boolean fencedUpdate(BucketLease seen, String me, String update, Map<String, AttributeValue> values) {
        Map<String, AttributeValue> all = new HashMap<>(values);
        all.put(":me", AttributeValue.fromS(me));
        all.put(":seen", number(seen.expiresAtMillis()));
        return conditionalUpdate(seen.bucket(), update, "#owner = :me AND #expiresAt = :seen", all);
    }

    /**
     * Claim: conditional on the exact owner and expiry observed (S13), never on a clock
     * comparison. A lease observed free at expiry 0 may have no item yet; the update creates it.
     */
    private boolean claim(BucketLease seen, String me, long expiry) {
        int bucket = seen.bucket();
        Map<String, AttributeValue> values = new HashMap<>();
        values.put(":me", AttributeValue.fromS(me));
        values.put(":exp", number(expiry));
        values.put(":b", number(bucket));
        values.put(":seen", number(seen.expiresAtMillis()));
        String condition;
        if (seen.owner() != null) {
            values.put(":owner", AttributeValue.fromS(seen.owner()));
            condition = "#owner = :owner AND #expiresAt = :seen";
        } else if (seen.expiresAtMillis() == 0L) {
            condition = "attribute_not_exists(#owner) AND (attribute_not_exists(#expiresAt) OR #expiresAt = :seen)";
        } else {
            condition = "attribute_not_exists(#owner) AND #expiresAt = :seen";
        }
        return conditionalUpdate(bucket, "SET #owner = :me, #expiresAt = :exp, #bucket = :b", condition, values);
    }

    private boolean conditionalUpdate(int bucket, String update, String condition, Map<String, AttributeValue> values) {
        try {
            client.updateItem(leaseUpdate(bucket, update, condition, values).build());
            return true;
        } catch (ConditionalCheckFailedException refused) {
            countRefused("lease of bucket " + bucket, condition);
            return false;
        }
    }

    private UpdateItemRequest.Builder leaseUpdate(int bucket, String update, String condition,
                                                  Map<String, AttributeValue> values) {
        Map<String, String> names = new HashMap<>();
        names.put("#owner", CoordinationItems.OWNER);
        names.put("#expiresAt", CoordinationItems.EXPIRES_AT);
        if (update.contains("#bucket")) {
            names.put("#bucket", CoordinationItems.BUCKET);
        }
        return UpdateItemRequest.builder().tableName(coordinationTable).key(CoordinationItems.leaseKey(bucket))
                .updateExpression(update).conditionExpression(condition)
                .expressionAttributeNames(names).expressionAttributeValues(values);
    }

    private void deleteStaleHeartbeat(String relayId, long lastSeen) {
        try {
            client.deleteItem(r -> r.tableName(coordinationTable).key(CoordinationItems.relayKey(relayId))
                    .conditionExpression("#lastSeen = :seen")
                    .expressionAttributeNames(Map.of("#lastSeen", CoordinationItems.LAST_SEEN))
                    .expressionAttributeValues(Map.of(":seen", number(lastSeen))));
        } catch (ConditionalCheckFailedException cameBack) {
            countRefused("heartbeat of relay " + relayId, "lastSeen = " + lastSeen);
        }
    }

    private void countRefused(String what, String condition) {
        refusedWrites.incrementAndGet();
        LOG.debug("conditional write on {} refused ({}): another relay moved first", what, condition);
    }

    /** The read-back: leases owned by the relay and unexpired at {@code now}, ascending. */
    private List<Integer> ownedLeases(String me, long now, int bucketCount) {
        QueryRequest query = fleetQuery(true, "#owner = :me AND #expiresAt > :now",
                Map.of(":me", AttributeValue.fromS(me), ":now", number(now)));
        TreeSet<Integer> owned = new TreeSet<>();
        for (Map<String, AttributeValue> item : client.queryPaginator(query).items()) {
            BucketLease lease = lease(item);
            if (lease.bucket() < bucketCount && lease.isHeldBy(me, now)) {
                owned.add(lease.bucket());
            }
        }
        return List.copyOf(owned);
    }

    @Override
    public List<Integer> renewBucketLeases(LeaseRequest request) {
        return onTables(() -> renewLeases(request));
    }

    private List<Integer> renewLeases(LeaseRequest request) {
        StoreArguments.requireRequest(request);
        long now = clock.millis();
        String me = request.relayId();
        putHeartbeat(me, now);
        long extended = now + request.leaseDurationMillis();
        List<Integer> held = new ArrayList<>();
        for (int bucket : request.heldBuckets()) {
            if (renew(bucket, me, now, extended)) {
                held.add(bucket);
            }
        }
        return List.copyOf(held);
    }

    /**
     * C1: extends an unexpired lease of the caller to {@code max(expiresAt + 1, extended)}. DynamoDB
     * has no max(): the first write only happens when it lengthens the lease to {@code extended};
     * when it is refused, the old item tells whether the lease is still the caller's (already
     * longer: a second write fenced on that expiry moves it on by 1 ms, S13) or lost.
     */
    private boolean renew(int bucket, String me, long now, long extended) {
        try {
            client.updateItem(leaseUpdate(bucket, "SET #expiresAt = :exp",
                    "#owner = :me AND #expiresAt > :now AND #expiresAt < :exp",
                    Map.of(":me", AttributeValue.fromS(me), ":now", number(now), ":exp", number(extended)))
                    .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD).build());
            return true;
        } catch (ConditionalCheckFailedException refused) {
            Map<String, AttributeValue> old = refused.hasItem() ? refused.item() : currentLease(bucket);
            if (old.isEmpty() || !lease(old).isHeldBy(me, now)) {
                countRefused("renewal of bucket " + bucket, "owner = " + me + " and unexpired");
                return false;
            }
            // Already at or past extended (the clock went back): move it on by 1 ms, so the stored
            // value still changes and peers see a live holder (S13).
            return fencedUpdate(lease(old), me, "SET #expiresAt = :exp",
                    Map.of(":exp", number(lease(old).expiresAtMillis() + 1)))
                    || heldNow(bucket, me, now);
        }
    }

    /** The lease item as stored now, for backends that do not return it with a refused write. */
    private boolean heldNow(int bucket, String me, long now) {
        Map<String, AttributeValue> item = currentLease(bucket);
        return !item.isEmpty() && lease(item).isHeldBy(me, now);
    }

    private Map<String, AttributeValue> currentLease(int bucket) {
        var response = client.getItem(r -> r.tableName(coordinationTable).key(CoordinationItems.leaseKey(bucket))
                .consistentRead(true));
        return response.hasItem() ? response.item() : Map.of();
    }

    @Override
    public void releaseBucketLeases(String relayId) {
        runOnTables(() -> releaseLeases(relayId));
    }

    private void releaseLeases(String relayId) {
        LeaseRequest.requireRelayId(relayId);
        QueryRequest query = fleetQuery(true, "#owner = :me", Map.of(":me", AttributeValue.fromS(relayId)));
        List<BucketLease> mine = new ArrayList<>();
        for (Map<String, AttributeValue> item : client.queryPaginator(query).items()) {
            BucketLease lease = lease(item);
            if (relayId.equals(lease.owner())) {
                mine.add(lease);
            }
        }
        for (BucketLease seen : mine) {
            fencedUpdate(seen, relayId, "REMOVE #owner", Map.of());
        }
        client.deleteItem(r -> r.tableName(coordinationTable).key(CoordinationItems.relayKey(relayId)));
    }

    // ---------------------------------------------------------------------------------------
    // Messages
    // ---------------------------------------------------------------------------------------

    @Override
    public List<Integer> bucketsWithPending(List<Integer> buckets) {
        return onTables(() -> probePending(buckets));
    }

    private List<Integer> probePending(List<Integer> buckets) {
        List<Integer> distinct = StoreArguments.requireBuckets(buckets);
        List<Integer> pending = new ArrayList<>();
        if (probes == null || distinct.size() == 1) {
            for (int bucket : distinct) {
                if (hasPending(bucket)) {
                    pending.add(bucket);
                }
            }
            return List.copyOf(pending);
        }
        Map<Integer, Future<Boolean>> probing = new LinkedHashMap<>();
        for (int bucket : distinct) {
            probing.put(bucket, probes.submit(() -> hasPending(bucket)));
        }
        try {
            for (Map.Entry<Integer, Future<Boolean>> probe : probing.entrySet()) {
                if (probe.getValue().get()) {
                    pending.add(probe.getKey());
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while probing outbox buckets", e);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException runtime ? runtime
                    : new IllegalStateException("probing outbox buckets failed", e.getCause());
        } finally {
            probing.values().forEach(f -> f.cancel(true));
        }
        return List.copyOf(pending);
    }

    private boolean hasPending(int bucket) {
        return !client.query(bucketQuery(bucket).limit(1).projectionExpression("#bucket").build()).items().isEmpty();
    }

    private QueryRequest.Builder bucketQuery(int bucket) {
        return QueryRequest.builder().tableName(messagesTable)
                .keyConditionExpression("#bucket = :b")
                .expressionAttributeNames(Map.of("#bucket", MessageItems.BUCKET))
                .expressionAttributeValues(Map.of(":b", number(bucket)))
                .consistentRead(true);
    }

    @Override
    public List<Pending> nextBatch(int bucket, int maxCount, long maxBytes) {
        return onTables(() -> readBatch(bucket, maxCount, maxBytes));
    }

    /**
     * Queries page by page, each page's {@code Limit} at most what is left of the count and of the
     * byte budget over the largest payload (at least 1), and stops at the first item the budget
     * refuses (S1, {@link BatchBytes}).
     */
    private List<Pending> readBatch(int bucket, int maxCount, long maxBytes) {
        StoreArguments.requireBucket(bucket);
        StoreArguments.requireMaxCount(maxCount);
        StoreArguments.requireMaxBytes(maxBytes);
        List<Pending> batch = new ArrayList<>(Math.min(maxCount, 1024));
        BatchBytes budget = new BatchBytes(maxBytes);
        Map<String, AttributeValue> start = null;
        do {
            long itemsInBudget = Math.max(1, (maxBytes - budget.taken()) / MAX_PAYLOAD_BYTES);
            int limit = (int) Math.min(maxCount - batch.size(), itemsInBudget);
            QueryResponse page = client.query(bucketQuery(bucket).scanIndexForward(true)
                    .limit(limit).exclusiveStartKey(start).build());
            for (Map<String, AttributeValue> item : page.items()) {
                Pending read;
                try {
                    read = MessageItems.fromItem(messagesTable, item);
                } catch (IllegalStateException e) {
                    UUID id = readableId(item);
                    if (id == null) {
                        throw e;
                    }
                    // R12: a data error of one item; the items ahead of it still go out.
                    throw new CorruptMessageException(bucket, id, batch, e.getMessage(), e);
                }
                if (!budget.admit(read.message())) {
                    return List.copyOf(batch);
                }
                batch.add(read);
            }
            start = nextPage(page);
        } while (start != null && batch.size() < maxCount);
        return List.copyOf(batch);
    }

    private static UUID readableId(Map<String, AttributeValue> item) {
        AttributeValue id = item.get(MessageItems.ID);
        try {
            return id == null || id.s() == null ? null : UUID.fromString(id.s());
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /**
     * C4: dead letters are items of the coordination table; a move and a replay are each one
     * {@code TransactWriteItems} ({@link DynamoDbDeadLetters}).
     *
     * @return the store's dead letters
     */
    @Override
    public Optional<DeadLetters> deadLetters() {
        return Optional.of(deadLetters);
    }

    @Override
    public void markPublished(int bucket, List<Pending> published) {
        runOnTables(() -> deletePublished(bucket, published));
    }

    private void deletePublished(int bucket, List<Pending> published) {
        List<MessageItems.Handle> handles = StoreArguments.requirePublished(bucket, published,
                MessageItems.Handle.class, h -> h.table().equals(messagesTable), "table " + messagesTable);
        TreeSet<Long> seqs = new TreeSet<>();
        for (MessageItems.Handle handle : handles) {
            seqs.add(handle.seq());
        }
        List<WriteRequest> deletes = new ArrayList<>(seqs.size());
        for (long seq : seqs) {
            deletes.add(WriteRequest.builder()
                    .deleteRequest(DeleteRequest.builder().key(MessageItems.key(bucket, seq)).build()).build());
        }
        for (int from = 0; from < deletes.size(); from += BATCH_WRITE_LIMIT) {
            deleteAll(deletes.subList(from, Math.min(deletes.size(), from + BATCH_WRITE_LIMIT)));
        }
    }

    /** BatchWriteItem, then its UnprocessedItems again with capped exponential backoff, until done. */
    private void deleteAll(List<WriteRequest> chunk) {
        Map<String, List<WriteRequest>> pending = Map.of(messagesTable, List.copyOf(chunk));
        long backoff = 25;
        while (true) {
            Map<String, List<WriteRequest>> request = pending;
            BatchWriteItemResponse response = client.batchWriteItem(r -> r.requestItems(request));
            if (!response.hasUnprocessedItems() || response.unprocessedItems().isEmpty()) {
                return;
            }
            pending = response.unprocessedItems();
            LOG.debug("{} outbox deletes unprocessed; retrying in {} ms",
                    pending.values().stream().mapToInt(List::size).sum(), backoff);
            try {
                Thread.sleep(backoff);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while deleting published outbox messages; the"
                        + " remaining ones are published again later", e);
            }
            backoff = Math.min(MAX_BACKOFF_MILLIS, backoff * 2);
        }
    }

    @Override
    public PendingSnapshot pendingMetrics(Duration timeout) {
        return onTables(() -> measurePending(timeout));
    }

    private PendingSnapshot measurePending(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout must not be null");
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive but was " + timeout);
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        List<Integer> buckets = new ArrayList<>();
        Map<String, AttributeValue> start = null;
        do {
            QueryResponse page = client.query(QueryRequest.builder().tableName(coordinationTable)
                    .keyConditionExpression("#pk = :counter")
                    .expressionAttributeNames(Map.of("#pk", CoordinationItems.PK))
                    .expressionAttributeValues(Map.of(":counter", AttributeValue.fromS(CoordinationItems.COUNTER)))
                    .consistentRead(true)
                    .exclusiveStartKey(start)
                    .overrideConfiguration(o -> o.apiCallTimeout(remaining(deadline, timeout)))
                    .build());
            page.items().forEach(item -> buckets.add(
                    Math.toIntExact(MessageItems.requiredNumber(item, CoordinationItems.BUCKET))));
            start = nextPage(page);
        } while (start != null);
        long count = 0;
        long oldest = Long.MAX_VALUE;
        for (int bucket : buckets) {
            start = null;
            do {
                QueryResponse page = client.query(bucketQuery(bucket)
                        .projectionExpression("#createdAt")
                        .expressionAttributeNames(Map.of("#bucket", MessageItems.BUCKET,
                                "#createdAt", MessageItems.CREATED_AT))
                        .exclusiveStartKey(start)
                        .overrideConfiguration(o -> o.apiCallTimeout(remaining(deadline, timeout)))
                        .build());
                for (Map<String, AttributeValue> item : page.items()) {
                    count++;
                    oldest = Math.min(oldest, MessageItems.requiredNumber(item, MessageItems.CREATED_AT));
                }
                start = nextPage(page);
            } while (start != null);
        }
        return new PendingSnapshot(count, count == 0 ? null : Instant.ofEpochMilli(oldest));
    }

    /** Where the next page starts, or null after the last page. */
    private static Map<String, AttributeValue> nextPage(QueryResponse page) {
        return page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
    }

    private static Duration remaining(long deadline, Duration timeout) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            throw ApiCallTimeoutException.create(timeout.toMillis());
        }
        return Duration.ofNanos(left);
    }

    /**
     * Runs a store call; a table that does not exist (dropped, or never created) becomes an
     * {@link OutboxMisconfigurationException} naming it, which stops a relay (R6) instead of
     * being retried for ever.
     */
    private <T> T onTables(Supplier<T> call) {
        try {
            return call.get();
        } catch (ResourceNotFoundException e) {
            try {
                DynamoDbOutboxTables.verify(client, options);
            } catch (OutboxMisconfigurationException absent) {
                absent.addSuppressed(e);
                throw absent;
            } catch (RuntimeException checkFailed) {
                e.addSuppressed(checkFailed);
            }
            throw new OutboxMisconfigurationException("outbox table " + messagesTable + " or " + coordinationTable
                    + " does not exist: " + e.getMessage(), e);
        }
    }

    private void runOnTables(Runnable call) {
        onTables(() -> {
            call.run();
            return null;
        });
    }

    /**
     * Stops the probe threads and, when the store owns its client
     * ({@link Builder#closeClient(boolean)}), closes it. Idempotent.
     */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            if (probes != null) {
                probes.shutdownNow();
            }
            if (ownsClient) {
                client.close();
            }
        }
    }

    @Override
    public String toString() {
        return "DynamoDbOutboxStore[" + options + ", ownsClient=" + ownsClient + "]";
    }

    /**
     * Builds a {@link DynamoDbOutboxStore}. Not thread-safe; validation happens in
     * {@link #build()}, which may be called more than once.
     */
    public static final class Builder {

        private final DynamoDbClient client;
        private String messagesTable = DynamoDbOutboxOptions.DEFAULT_MESSAGES_TABLE;
        private String coordinationTable = DynamoDbOutboxOptions.DEFAULT_COORDINATION_TABLE;
        private Clock clock = Clock.systemUTC();
        private int probeParallelism = DynamoDbOutboxOptions.DEFAULT_PROBE_PARALLELISM;
        private boolean closeClient;

        private Builder(DynamoDbClient client) {
            this.client = Objects.requireNonNull(client, "client must not be null");
        }

        /**
         * Sets the messages table name.
         *
         * @param name 3 to 255 characters of {@code [a-zA-Z0-9_.-]}; default
         *     {@value DynamoDbOutboxOptions#DEFAULT_MESSAGES_TABLE}; checked in {@link #build()}
         * @return this builder
         */
        public Builder messagesTable(String name) {
            this.messagesTable = name;
            return this;
        }

        /**
         * Sets the coordination table name (leases, heartbeats, sequence counters).
         *
         * @param name 3 to 255 characters of {@code [a-zA-Z0-9_.-]}, different from the messages
         *     table; default {@value DynamoDbOutboxOptions#DEFAULT_COORDINATION_TABLE}; checked in
         *     {@link #build()}
         * @return this builder
         */
        public Builder coordinationTable(String name) {
            this.coordinationTable = name;
            return this;
        }

        /**
         * Sets the clock for all lease time (S11).
         *
         * @param clock the clock; not null (checked in {@link #build()}); default {@link Clock#systemUTC()}
         * @return this builder
         */
        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /**
         * Sets how many single-bucket probes {@link DynamoDbOutboxStore#bucketsWithPending} runs at once.
         *
         * @param parallelism {@code >= 1} (1 probes on the caller's thread); default
         *     {@value DynamoDbOutboxOptions#DEFAULT_PROBE_PARALLELISM}; checked in {@link #build()}
         * @return this builder
         */
        public Builder probeParallelism(int parallelism) {
            this.probeParallelism = parallelism;
            return this;
        }

        /**
         * Whether {@link DynamoDbOutboxStore#close()} also closes the client. Set it when the store
         * is the client's only user.
         *
         * @param close true to close the client with the store; default false
         * @return this builder
         */
        public Builder closeClient(boolean close) {
            this.closeClient = close;
            return this;
        }

        /**
         * Validates and builds the store; calls no DynamoDB API (call
         * {@link DynamoDbOutboxStore#createSchema()} or {@link DynamoDbOutboxStore#verifySchema()}).
         *
         * @return the store
         * @throws NullPointerException if a table name or the clock is null
         * @throws IllegalArgumentException naming the setting and the value when a table name breaks
         *     DynamoDB's naming rule, both names are equal, or the parallelism is below 1
         */
        public DynamoDbOutboxStore build() {
            DynamoDbOutboxOptions options = DynamoDbOutboxOptions.builder().messagesTable(messagesTable)
                    .coordinationTable(coordinationTable).clock(clock).probeParallelism(probeParallelism).build();
            return new DynamoDbOutboxStore(client, options, closeClient);
        }
    }
}
