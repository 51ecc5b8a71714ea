package io.outbox.store.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.OutboxMessage;
import io.outbox.spi.LeaseRequest;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.OutboxStores;
import io.outbox.spi.Pending;
import io.outbox.spi.support.StoredMessages;
import io.outbox.tck.TckClock;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemResponse;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.QueryRequest;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * DynamoDB-specific lease and cost behaviour on a backend: quiet acquisition (S4b, refused
 * conditional writes counted), fencing of races (S5), the counter probe (S8), the cost in calls of
 * each SPI method, unprocessed batch items, table creation.
 */
abstract class AbstractDynamoDbLeaseTest {

    private static final int BUCKETS = 8;
    private static final Duration LEASE = Duration.ofSeconds(30);

    private final List<AutoCloseable> closeables = new ArrayList<>();
    private DynamoDbClient admin;
    private DynamoDbOutboxOptions tables;
    private TckClock clock;

    /** The backend to run on. */
    abstract DynamoDbBackend backend();

    @BeforeEach
    void createTables() {
        admin = backend().newClient();
        tables = DynamoDbBackend.uniqueTables();
        DynamoDbBackend.createTables(admin, tables);
        clock = new TckClock(Instant.parse("2031-05-06T07:08:09.010Z"));
    }

    @AfterEach
    void dropTables() throws Exception {
        for (AutoCloseable c : closeables) {
            c.close();
        }
        try {
            DynamoDbBackend.dropTables(admin, tables);
        } finally {
            admin.close();
        }
    }

    /** A store on its own client, as a separate relay process would have; closed after the test. */
    private DynamoDbOutboxStore store(DynamoDbClient client) {
        DynamoDbOutboxStore store = DynamoDbBackend.storeOn(client, tables).clock(clock).closeClient(true).build();
        closeables.add(store);
        return store;
    }

    private DynamoDbOutboxStore store(CallCounter counter) {
        return store(backend().newClient(counter));
    }

    private static LeaseRequest request(String relay, List<Integer> held) {
        return new LeaseRequest(relay, BUCKETS, LEASE, held);
    }

    private OutboxMessage message(int bucket) {
        return StoredMessages.rebuild(UUID.randomUUID(), bucket, "t", "k".getBytes(StandardCharsets.UTF_8),
                "v".getBytes(StandardCharsets.UTF_8), List.of(), null, clock.instant());
    }

    // ---------------------------------------------------------------------------------------
    // S4b quiet acquisition
    // ---------------------------------------------------------------------------------------

    /**
     * Three relays, each with its own client, call at the same moment in every round (a latch
     * releases them together), first until their shares are fair, then 20 rounds more. Once they
     * see the same membership they plan disjoint writes, so DynamoDB refuses none of them.
     */
    @Test
    void S4b_aConvergedFleetOfThreeMakesNoRefusedConditionalWritesOverTwentyRounds() throws Exception {
        List<String> relays = List.of("relay-1", "relay-2", "relay-3");
        List<DynamoDbOutboxStore> stores = relays.stream().map(r -> store(new CallCounter())).toList();
        Map<String, List<Integer>> held = new ConcurrentHashMap<>();
        relays.forEach(r -> held.put(r, List.of()));
        ExecutorService pool = Executors.newFixedThreadPool(relays.size());
        try {
            int convergenceRounds = 0;
            while (!fair(held)) {
                assertThat(++convergenceRounds).as("rounds to converge").isLessThanOrEqualTo(10);
                concurrentRound(pool, relays, stores, held);
                clock.advance(LEASE.dividedBy(10));
            }
            long refusedWhileConverging = refused(stores);
            Map<String, List<Integer>> converged = Map.copyOf(held);

            for (int i = 0; i < 20; i++) {
                clock.advance(LEASE.dividedBy(10));
                concurrentRound(pool, relays, stores, held);
                assertThat(held).as("round %d after convergence", i).isEqualTo(converged);
            }
            long refusedAfter = refused(stores) - refusedWhileConverging;
            System.out.printf("S4b: 3 relays converged in %d concurrent rounds with %d refused conditional writes;"
                    + " 20 rounds after convergence: %d refused, assignment %s%n", convergenceRounds,
                    refusedWhileConverging, refusedAfter, new java.util.TreeMap<>(converged));
            assertThat(refusedAfter).as("refused conditional writes in 20 rounds of a converged fleet of 3")
                    .isZero();
        } finally {
            pool.shutdownNow();
        }
    }

    private static void concurrentRound(ExecutorService pool, List<String> relays, List<DynamoDbOutboxStore> stores,
                                        Map<String, List<Integer>> held) throws Exception {
        CountDownLatch go = new CountDownLatch(1);
        List<Future<?>> calls = new ArrayList<>();
        for (int i = 0; i < relays.size(); i++) {
            String relay = relays.get(i);
            DynamoDbOutboxStore store = stores.get(i);
            calls.add(pool.submit(() -> {
                go.await();
                held.put(relay, store.acquireBucketLeases(request(relay, held.get(relay))));
                return null;
            }));
        }
        go.countDown();
        for (Future<?> call : calls) {
            call.get(120, TimeUnit.SECONDS);
        }
    }

    private static boolean fair(Map<String, List<Integer>> held) {
        TreeSet<Integer> union = new TreeSet<>();
        held.values().forEach(union::addAll);
        // Each relay at its own FairShare share (by rank), not merely sizes within one of each other:
        // sizes {2, 3, 3} in the wrong ranks still move a bucket in the next round.
        io.outbox.spi.support.FairShare shares = io.outbox.spi.support.FairShare.of(BUCKETS, held.keySet());
        return union.size() == BUCKETS && held.values().stream().mapToInt(List::size).sum() == BUCKETS
                && held.entrySet().stream().allMatch(e -> e.getValue().size() == shares.share(e.getKey()));
    }

    private static long refused(List<DynamoDbOutboxStore> stores) {
        return stores.stream().mapToLong(DynamoDbOutboxStore::refusedConditionalWrites).sum();
    }

    // ---------------------------------------------------------------------------------------
    // S5 fencing: a race between the snapshot and the write is refused, counted, not returned
    // ---------------------------------------------------------------------------------------

    /** Runs {@code race} once, right after the store read the fleet and before it writes. */
    private DynamoDbClient racingClient(Runnable race) {
        AtomicBoolean raced = new AtomicBoolean();
        return new DelegatingDynamoDbClient(backend().newClient()) {
            @Override
            public QueryResponse query(QueryRequest request) {
                QueryResponse response = super.query(request);
                boolean fleetSnapshot = request.tableName().equals(tables.coordinationTable())
                        && request.filterExpression() == null && request.keyConditionExpression().contains(":fleet");
                if (fleetSnapshot && raced.compareAndSet(false, true)) {
                    race.run();
                }
                return response;
            }
        };
    }

    @Test
    void S5_aClaimRacedByAnotherRelayIsRefusedCountedAndNotReturned() {
        DynamoDbOutboxStore b = store(new CallCounter());
        List<List<Integer>> bGot = new ArrayList<>();
        DynamoDbOutboxStore a = store(racingClient(() -> bGot.add(b.acquireBucketLeases(request("relay-b", List.of())))));

        List<Integer> aGot = a.acquireBucketLeases(request("relay-a", List.of()));

        // relay-a planned alone and tried all 8; relay-b, which saw relay-a's heartbeat, took its share first.
        assertThat(bGot.get(0)).hasSize(BUCKETS / 2);
        assertThat(aGot).doesNotContainAnyElementsOf(bGot.get(0)).hasSize(BUCKETS / 2);
        assertThat(a.refusedConditionalWrites()).isEqualTo(BUCKETS / 2);
        assertThat(b.refusedConditionalWrites()).isZero();
    }

    @Test
    void S5_aKeepOfALeaseThatChangedIsRefusedCountedAndNotReturned() {
        AtomicBoolean armed = new AtomicBoolean();
        DynamoDbOutboxStore a = store(racingClient(() -> { }));
        List<Integer> all = a.acquireBucketLeases(request("relay-a", List.of()));
        assertThat(all).hasSize(BUCKETS);
        DynamoDbOutboxStore a2 = store(racingClient(() -> {
            armed.set(true);
            admin.updateItem(r -> r.tableName(tables.coordinationTable()).key(CoordinationItems.leaseKey(0))
                    .updateExpression("SET #owner = :o, #expiresAt = :e")
                    .expressionAttributeNames(Map.of("#owner", "owner", "#expiresAt", "expiresAt"))
                    .expressionAttributeValues(Map.of(":o", AttributeValue.fromS("intruder"),
                            ":e", AttributeValue.fromN(Long.toString(clock.millis() + 10 * LEASE.toMillis())))));
        }));
        clock.advance(LEASE.dividedBy(3));

        List<Integer> kept = a2.acquireBucketLeases(request("relay-a", all));

        assertThat(armed).isTrue();
        assertThat(kept).containsExactlyElementsOf(all.subList(1, BUCKETS));
        assertThat(a2.refusedConditionalWrites()).isEqualTo(1);
    }

    // ---------------------------------------------------------------------------------------
    // S8 counters reveal a writer with more buckets
    // ---------------------------------------------------------------------------------------

    @Test
    void S8_aCounterAtOrAboveTheBucketCountIsFatalAndNamesTheBucket() {
        DynamoDbOutboxStore store = store(new CallCounter());
        store.writer().prepare(message(BUCKETS + 4)); // reserved, never sent: the counter alone reveals it
        assertThatThrownBy(() -> store.acquireBucketLeases(request("relay-a", List.of())))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("bucket(s) [" + (BUCKETS + 4) + "]").hasMessageContaining("outside [0, " + BUCKETS + ")");
        List<Integer> wider = store.acquireBucketLeases(new LeaseRequest("relay-a", BUCKETS + 5, LEASE, List.of()));
        assertThat(wider).hasSize(BUCKETS + 5);
    }

    // ---------------------------------------------------------------------------------------
    // Cost in calls
    // ---------------------------------------------------------------------------------------

    @Test
    void cost_acquireIsFiveCallsPlusOneUpdatePerLeaseWritten() {
        CallCounter calls = new CallCounter();
        DynamoDbOutboxStore store = store(calls);
        List<Integer> held = store.acquireBucketLeases(request("relay-a", List.of()));
        assertThat(calls.calls()).as("first acquire: claims (Queries: S8 below 0, S8 above, fleet, read-back)")
                .isEqualTo(Map.of("Query", 4, "PutItem", 1,
                "UpdateItem", BUCKETS));
        calls.reset();
        clock.advance(LEASE.dividedBy(3));
        store.acquireBucketLeases(request("relay-a", held));
        assertThat(calls.calls()).as("steady state: keeps").isEqualTo(Map.of("Query", 4, "PutItem", 1,
                "UpdateItem", BUCKETS));
        calls.reset();
        // A renewal in the keep's own millisecond would find the expiry already at now + lease and
        // pay a second UpdateItem to change it (S13); renewals run later than that.
        clock.advance(Duration.ofMillis(1));
        assertThat(((io.outbox.spi.LeaseRenewal) store).renewBucketLeases(request("relay-a", held))).isEqualTo(held);
        assertThat(calls.calls()).as("renewal").isEqualTo(Map.of("PutItem", 1, "UpdateItem", BUCKETS));
        calls.reset();
        long beforeSetBack = clock.millis();
        clock.setMillis(beforeSetBack - LEASE.toMillis() / 2);
        assertThat(((io.outbox.spi.LeaseRenewal) store).renewBucketLeases(request("relay-a", held))).isEqualTo(held);
        assertThat(calls.calls()).as("renewal with the clock set back: two UpdateItems per bucket, so the expiry changes")
                .isEqualTo(Map.of("PutItem", 1, "UpdateItem", 2 * BUCKETS));
        clock.setMillis(beforeSetBack);
        calls.reset();
        store.releaseBucketLeases("relay-a");
        assertThat(calls.calls()).as("release").isEqualTo(Map.of("Query", 1, "UpdateItem", BUCKETS,
                "DeleteItem", 1));
    }

    @Test
    void cost_probingIsOneQueryPerDistinctBucket() {
        CallCounter calls = new CallCounter();
        DynamoDbOutboxStore store = store(calls);
        store.writer().enqueue(List.of(message(2), message(5)));
        calls.reset();
        assertThat(store.bucketsWithPending(List.of(7, 6, 5, 4, 3, 2, 1, 0, 5))).containsExactly(2, 5);
        assertThat(calls.calls()).isEqualTo(Map.of("Query", BUCKETS));
        calls.reset();
        assertThat(store.bucketsWithPending(List.of())).isEmpty();
        assertThat(calls.calls()).isEmpty();
    }

    @Test
    void cost_enqueueNextBatchAndMarkPublished() {
        CallCounter calls = new CallCounter();
        DynamoDbOutboxStore store = store(calls);
        List<OutboxMessage> sixty = IntStream.range(0, 60).mapToObj(i -> message(i % 2 == 0 ? 1 : 3)).toList();
        store.writer().enqueue(sixty);
        assertThat(calls.calls()).as("enqueue: one increment per bucket, one transaction")
                .isEqualTo(Map.of("UpdateItem", 2, "TransactWriteItems", 1));
        calls.reset();
        List<Pending> batch = store.nextBatch(1, 30);
        assertThat(batch).hasSize(30);
        assertThat(calls.calls()).as("nextBatch").isEqualTo(Map.of("Query", 1));
        calls.reset();
        store.markPublished(1, batch);
        assertThat(calls.calls()).as("markPublished of 30").isEqualTo(Map.of("BatchWriteItem", 2));
        assertThat(store.nextBatch(1, 30)).isEmpty();
    }

    @Test
    void markPublished_retriesUnprocessedItemsUntilDone() {
        AtomicInteger batchCalls = new AtomicInteger();
        DynamoDbOutboxStore store = store(new DelegatingDynamoDbClient(backend().newClient()) {
            @Override
            public BatchWriteItemResponse batchWriteItem(BatchWriteItemRequest request) {
                // The first two calls process one request each and hand the rest back, as a throttled table does.
                if (batchCalls.incrementAndGet() > 2) {
                    return super.batchWriteItem(request);
                }
                String table = request.requestItems().keySet().iterator().next();
                List<WriteRequest> all = request.requestItems().get(table);
                super.batchWriteItem(BatchWriteItemRequest.builder().requestItems(Map.of(table, all.subList(0, 1)))
                        .build());
                return BatchWriteItemResponse.builder().unprocessedItems(Map.of(table, all.subList(1, all.size())))
                        .build();
            }
        });
        store.writer().enqueue(IntStream.range(0, 30).mapToObj(i -> message(4)).toList());
        store.markPublished(4, store.nextBatch(4, 30));
        assertThat(store.nextBatch(4, 30)).isEmpty();
        assertThat(batchCalls).as("25 + 5 deletes, the first chunk sent three times").hasValue(4);
    }

    // ---------------------------------------------------------------------------------------
    // Tables and expressions
    // ---------------------------------------------------------------------------------------

    @Test
    void tables_createSchemaIsIdempotentAndRefusesAnotherKeySchema() {
        DynamoDbBackend.storeOn(admin, tables).build().createSchema();
        DynamoDbOutboxOptions clash = DynamoDbBackend.uniqueTables();
        admin.createTable(r -> r.tableName(clash.coordinationTable()).billingMode(BillingMode.PAY_PER_REQUEST)
                .attributeDefinitions(DynamoDbOutboxTables.messagesTableRequest("x").attributeDefinitions())
                .keySchema(DynamoDbOutboxTables.messagesTableRequest("x").keySchema()));
        try {
            assertThatThrownBy(() -> DynamoDbBackend.storeOn(admin, clash).build().createSchema())
                    .isInstanceOf(OutboxMisconfigurationException.class)
                    .hasMessageContaining(clash.coordinationTable());
        } finally {
            DynamoDbBackend.dropTables(admin, clash);
        }
    }

    /** The backend checks reserved words, so the store's expression attribute names are exercised. */
    @Test
    void expressions_reservedWordsNeedAttributeNames() {
        for (String reserved : List.of("owner", "bucket", "key", "value", "partition")) {
            assertThatThrownBy(() -> admin.updateItem(r -> r.tableName(tables.coordinationTable())
                    .key(CoordinationItems.leaseKey(0)).updateExpression("SET " + reserved + " = :v")
                    .expressionAttributeValues(Map.of(":v", AttributeValue.fromS("x")))))
                    .as(reserved).isInstanceOf(DynamoDbException.class).hasMessageContaining("reserved");
        }
    }

    // ---------------------------------------------------------------------------------------
    // R6: absent tables are a misconfiguration, found at start-up and while running
    // ---------------------------------------------------------------------------------------

    @Test
    void R6_theProviderWithoutCreateTablesRefusesAbsentTablesNamingThemAndTheSetting() throws Exception {
        DynamoDbOutboxOptions absent = DynamoDbBackend.uniqueTables();
        closeables.add(() -> DynamoDbBackend.dropTables(admin, absent));
        Map<String, String> settings = backend().providerConfig(absent);
        assertThatThrownBy(() -> OutboxStores.open(DynamoDbOutboxStoreProvider.NAME, settings))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining(absent.messagesTable())
                .hasMessageContaining(absent.coordinationTable())
                .hasMessageContaining("do not exist")
                .hasMessageContaining("create.tables=true");
        admin.createTable(DynamoDbOutboxTables.messagesTableRequest(absent.messagesTable()));
        assertThatThrownBy(() -> OutboxStores.open(DynamoDbOutboxStoreProvider.NAME, settings))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageNotContaining(absent.messagesTable())
                .hasMessageContaining(absent.coordinationTable());
        admin.createTable(DynamoDbOutboxTables.coordinationTableRequest(absent.coordinationTable()));
        try (DynamoDbOutboxStore opened = (DynamoDbOutboxStore) OutboxStores.open(DynamoDbOutboxStoreProvider.NAME,
                settings)) {
            assertThat(opened.bucketsWithPending(List.of(0, 1))).isEmpty();
        }
    }

    @Test
    void R6_aTableWithAnotherKeySchemaIsRefusedAtStartUp() throws Exception {
        DynamoDbOutboxOptions other = DynamoDbBackend.uniqueTables();
        closeables.add(() -> DynamoDbBackend.dropTables(admin, other));
        admin.createTable(DynamoDbOutboxTables.coordinationTableRequest(other.messagesTable()));
        admin.createTable(DynamoDbOutboxTables.coordinationTableRequest(other.coordinationTable()));
        assertThatThrownBy(() -> DynamoDbBackend.storeOn(admin, other).build().verifySchema())
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining(other.messagesTable())
                .hasMessageContaining("key schema");
    }

    @Test
    void R6_tablesDeletedWhileRunningMakeStoreCallsAMisconfigurationNamingThem() {
        DynamoDbOutboxStore store = store(new CallCounter());
        assertThat(store.acquireBucketLeases(request("relay", List.of()))).hasSize(BUCKETS);
        DynamoDbBackend.dropTables(admin, tables);
        assertThatThrownBy(() -> store.nextBatch(0, 10))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining(tables.messagesTable())
                .hasMessageContaining("create.tables=true");
        assertThatThrownBy(() -> store.bucketsWithPending(List.of(0, 1, 2)))
                .isInstanceOf(OutboxMisconfigurationException.class);
        assertThatThrownBy(() -> store.acquireBucketLeases(request("relay", List.of())))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining(tables.coordinationTable());
        assertThatThrownBy(() -> store.renewBucketLeases(request("relay", List.of(0))))
                .isInstanceOf(OutboxMisconfigurationException.class);
    }
}
