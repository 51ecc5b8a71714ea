package io.outbox.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import io.outbox.OutboxMessage;
import io.outbox.OutboxPayloadTooLargeException;
import io.outbox.spi.LeaseRequest;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.OutboxStore;
import io.outbox.spi.OutboxStores;
import io.outbox.spi.Pending;
import io.outbox.spi.support.StoredMessages;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What the kit cannot say about a relational store, on one database: the enqueue helper inside a
 * business transaction (commit, rollback, a constraint violation), relays with separate pools
 * racing on fresh tables, exact relay-id comparison, chunked statements and the schema.
 */
abstract class JdbcDatabaseTestBase {

    private static final String TOPIC = "orders";
    private static final Duration LEASE = Duration.ofSeconds(30);

    private final List<String> prefixes = new ArrayList<>();
    private final List<HikariDataSource> pools = new ArrayList<>();
    private String prefix;
    private HikariDataSource pool;
    private JdbcOutboxStore store;
    private String orders;

    /** The database this run uses. */
    abstract TestDatabase database();

    /** The dialect the database must be detected as. */
    abstract JdbcDialect expectedDialect();

    @BeforeEach
    void createTables() throws SQLException {
        database().requireReachable();
        prefix = freshTables();
        pool = pool();
        store = JdbcOutboxStore.builder(pool).tablePrefix(prefix).build();
        orders = store.dialect().quote(prefix + "orders");
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE " + orders + " (id INTEGER NOT NULL PRIMARY KEY, item VARCHAR(50) NOT NULL)");
        }
    }

    @AfterEach
    void dropTables() throws SQLException {
        if (orders != null) {
            try (Connection c = database().connect(); Statement s = c.createStatement()) {
                s.execute("DROP TABLE IF EXISTS " + orders);
            }
        }
        pools.forEach(HikariDataSource::close);
        for (String p : prefixes) {
            database().dropTables(p);
        }
    }

    private String freshTables() {
        String p = TestDatabase.uniquePrefix();
        prefixes.add(p);
        database().createTables(p);
        return p;
    }

    private HikariDataSource pool() {
        HikariDataSource p = database().newPool(2);
        pools.add(p);
        return p;
    }

    private static OutboxMessage message(int bucket, String value) {
        return StoredMessages.rebuild(UUID.randomUUID(), bucket, TOPIC, ("k" + bucket).getBytes(StandardCharsets.UTF_8),
                value.getBytes(StandardCharsets.UTF_8), List.of(), null, Instant.parse("2030-01-01T00:00:00Z"));
    }

    private void insertOrder(Connection c, int id, String item) throws SQLException {
        try (PreparedStatement s = c.prepareStatement("INSERT INTO " + orders + " (id, item) VALUES (?, ?)")) {
            s.setInt(1, id);
            s.setString(2, item);
            s.executeUpdate();
        }
    }

    private int countOrders() throws SQLException {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement();
             ResultSet r = s.executeQuery("SELECT COUNT(*) FROM " + orders)) {
            r.next();
            return r.getInt(1);
        }
    }

    private List<UUID> pendingIds(int bucket) {
        return store.nextBatch(bucket, 10_000).stream().map(p -> p.message().messageId()).toList();
    }

    // ---------------------------------------------------------------------------------------
    // E4: the enqueue helper inside the caller's transaction
    // ---------------------------------------------------------------------------------------

    @Test
    void E4_aCommittedTransactionShowsTheBusinessRowAndItsMessages() throws SQLException {
        OutboxMessage first = message(0, "placed");
        OutboxMessage second = message(1, "paid");
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(false);
            insertOrder(c, 1, "book");
            store.writer().enqueue(c, first, second);
            c.commit();
        }
        assertThat(countOrders()).isEqualTo(1);
        assertThat(pendingIds(0)).containsExactly(first.messageId());
        assertThat(pendingIds(1)).containsExactly(second.messageId());
    }

    @Test
    void E4_aRolledBackTransactionLeavesNeitherTheBusinessRowNorItsMessages() throws SQLException {
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(false);
            insertOrder(c, 1, "book");
            store.writer().enqueue(c, List.of(message(0, "placed"), message(1, "paid")));
            c.rollback();
        }
        assertThat(countOrders()).isZero();
        assertThat(store.bucketsWithPending(List.of(0, 1))).isEmpty();
    }

    @Test
    void E4_aBusinessConstraintViolationInTheSameTransactionLeavesNoMessage() throws SQLException {
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(false);
            insertOrder(c, 7, "book");
            c.commit();
        }
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(false);
            try {
                store.writer().enqueue(c, message(3, "placed again"));
                assertThatThrownBy(() -> insertOrder(c, 7, "duplicate order"))
                        .as("the business table's primary key refuses the second order 7")
                        .isInstanceOf(SQLException.class);
            } finally {
                c.rollback();
            }
        }
        assertThat(countOrders()).isEqualTo(1);
        assertThat(store.bucketsWithPending(List.of(3))).as("the message enqueued before the violation").isEmpty();
    }

    @Test
    void E4_theWriterNeitherCommitsNorClosesNorChangesAutoCommit() throws SQLException {
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(false);
            store.writer().enqueue(c, message(2, "uncommitted"));
            assertThat(c.isClosed()).isFalse();
            assertThat(c.getAutoCommit()).isFalse();
            assertThat(store.bucketsWithPending(List.of(2))).as("invisible to the relay before the commit").isEmpty();
            c.rollback();
        }
        assertThat(store.bucketsWithPending(List.of(2))).isEmpty();
    }

    @Test
    void E4_theWriterOfAStoreWithoutADialectReadsItFromTheConnection() throws SQLException {
        JdbcOutboxWriter writer = JdbcOutboxStore.builder(pool).tablePrefix(prefix).maxPayloadBytes(100).build()
                .writer();
        assertThat(writer.maxPayloadBytes()).isEqualTo(100);
        OutboxMessage m = message(4, "standalone");
        try (Connection c = pool.getConnection()) {
            assertThat(JdbcDialect.detect(c)).isEqualTo(expectedDialect());
            c.setAutoCommit(false);
            writer.enqueue(c, m);
            c.commit();
        }
        assertThat(pendingIds(4)).containsExactly(m.messageId());
    }

    // ---------------------------------------------------------------------------------------
    // Leases on a real server
    // ---------------------------------------------------------------------------------------

    /**
     * S5 on fresh tables: relays with separate pools start at the same instant, all seeding the
     * lease rows at once; each bucket goes to one relay at most, and nobody fails.
     */
    @Test
    void S5_relaysWithSeparatePoolsRacingOnFreshTablesNeverShareABucket() throws Exception {
        int relays = 6;
        int buckets = 16;
        Clock clock = Clock.fixed(Instant.parse("2030-06-01T00:00:00Z"), ZoneOffset.UTC);
        ExecutorService threads = Executors.newFixedThreadPool(relays);
        try {
            for (int race = 0; race < 4; race++) {
                String racePrefix = freshTables();
                List<JdbcOutboxStore> stores = new ArrayList<>();
                for (int i = 0; i < relays; i++) {
                    stores.add(JdbcOutboxStore.builder(pool()).tablePrefix(racePrefix).clock(clock).build());
                }
                for (int round = 0; round < 2; round++) {
                    CyclicBarrier start = new CyclicBarrier(relays);
                    List<Future<List<Integer>>> results = new ArrayList<>();
                    for (int i = 0; i < relays; i++) {
                        JdbcOutboxStore relayStore = stores.get(i);
                        String relayId = "racer-" + i;
                        results.add(threads.submit(() -> {
                            start.await(30, TimeUnit.SECONDS);
                            return relayStore.acquireBucketLeases(LeaseRequest.of(relayId, buckets, LEASE));
                        }));
                    }
                    Map<Integer, String> owners = new HashMap<>();
                    for (int i = 0; i < relays; i++) {
                        for (int bucket : results.get(i).get(60, TimeUnit.SECONDS)) {
                            String other = owners.put(bucket, "racer-" + i);
                            assertThat(other).as("race %d round %d: bucket %d owned by racer-%d and %s", race, round,
                                    bucket, i, other).isNull();
                        }
                    }
                }
                try (Connection c = pool.getConnection(); Statement s = c.createStatement();
                     ResultSet r = s.executeQuery("SELECT COUNT(*) FROM "
                             + store.dialect().quote(racePrefix + "leases"))) {
                    r.next();
                    assertThat(r.getInt(1)).as("one lease row per bucket").isEqualTo(buckets);
                }
            }
        } finally {
            threads.shutdownNow();
        }
    }

    /** Relay ids are compared exactly: no case folding, trailing spaces count. */
    @Test
    void S5_relayIdsDifferingOnlyInCaseOrTrailingSpacesAreDifferentRelays() {
        Clock clock = Clock.fixed(Instant.parse("2030-06-01T00:00:00Z"), ZoneOffset.UTC);
        JdbcOutboxStore relays = JdbcOutboxStore.builder(pool).tablePrefix(prefix).clock(clock).build();
        List<Integer> all = IntStream.range(0, 4).boxed().toList();
        assertThat(relays.acquireBucketLeases(LeaseRequest.of("relay", 4, LEASE))).isEqualTo(all);
        assertThat(relays.acquireBucketLeases(LeaseRequest.of("Relay", 4, LEASE))).isEmpty();
        assertThat(relays.acquireBucketLeases(LeaseRequest.of("relay ", 4, LEASE))).isEmpty();
        assertThat(relays.renewBucketLeases(new LeaseRequest("RELAY", 4, LEASE, all))).isEmpty();
        relays.releaseBucketLeases("Relay");
        assertThat(relays.renewBucketLeases(new LeaseRequest("relay", 4, LEASE, all))).isEqualTo(all);
    }

    @Test
    void S8_theErrorNamesTheLowestBucketOutsideTheRange() throws SQLException {
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(false);
            store.writer().enqueue(c, message(3, "fine"), message(12, "outside"), message(9, "outside"),
                    message(12, "outside"));
            c.commit();
        }
        assertThatThrownBy(() -> store.acquireBucketLeases(LeaseRequest.of("relay", 8, LEASE)))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("bucket(s) [9] of table")
                .hasMessageContaining("outside [0, 8)")
                .hasMessageContaining(store.tables().messages());
        assertThat(store.acquireBucketLeases(LeaseRequest.of("relay", 13, LEASE))).hasSize(13);
    }

    // ---------------------------------------------------------------------------------------
    // Chunked statements, schema, resources
    // ---------------------------------------------------------------------------------------

    /** More rows than one JDBC batch and one DELETE take, in one transaction. */
    @Test
    void S2_largeBatchesAreWrittenAndDeletedInChunks() throws SQLException {
        List<OutboxMessage> many = IntStream.range(0, 2 * JdbcOutboxStore.DELETE_CHUNK + 3)
                .mapToObj(i -> message(5, "m" + i)).toList();
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(false);
            store.writer().enqueue(c, many);
            c.commit();
        }
        List<Pending> batch = store.nextBatch(5, many.size());
        assertThat(batch).extracting(p -> p.message().messageId())
                .containsExactlyElementsOf(many.stream().map(OutboxMessage::messageId).toList());
        store.markPublished(5, batch);
        assertThat(store.bucketsWithPending(List.of(5))).isEmpty();
    }

    /**
     * S1 on the wire: the statement that bounds a batch's bytes in the database returns only the
     * rows within the budget (the first always, alone when over it), a prefix in id order, with
     * and without the read ahead's exclusion, and the count still binds. The store uses it on
     * PostgreSQL and MySQL/MariaDB when the count times the largest payload could pass the budget.
     */
    @Test
    void S1_theBoundedReadReturnsOnlyTheRowsWithinTheBudgetFromTheDatabase() throws SQLException {
        // Sizes as BatchBytes counts them: key "k4" (2) + value + empty headers (5).
        int[] values = {93, 93, 93, 493, 93};
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(false);
            for (int v : values) {
                store.writer().enqueue(c, message(4, "x".repeat(v)), message(6, "y".repeat(600)));
            }
            c.commit();
        }
        List<Long> ids = store.nextBatch(4, 10).stream().map(p -> ((JdbcOutboxStore.Row) p.handle()).id()).toList();
        assertThat(ids).hasSize(values.length);

        assertThat(boundedRead(List.of(), 10, 250)).as("100 + 100 within 250, not a third")
                .isEqualTo(ids.subList(0, 2));
        assertThat(boundedRead(List.of(), 10, 300)).as("a message exactly at the budget fits")
                .isEqualTo(ids.subList(0, 3));
        assertThat(boundedRead(List.of(), 10, 50)).as("the first message always").isEqualTo(ids.subList(0, 1));
        assertThat(boundedRead(List.of(), 10, 800)).as("never a smaller message behind a refused one")
                .isEqualTo(ids.subList(0, 4));
        assertThat(boundedRead(List.of(), 3, Long.MAX_VALUE / 2)).as("the count binds").isEqualTo(ids.subList(0, 3));
        assertThat(boundedRead(ids.subList(0, 2), 10, 550)).as("after the batch in flight: 100, then 500 is over")
                .isEqualTo(ids.subList(2, 3));
        assertThat(boundedRead(ids.subList(0, 2), 10, 600)).isEqualTo(ids.subList(2, 4));
        assertThat(boundedRead(ids.subList(0, 3), 10, 100)).as("a first message over the budget, alone")
                .isEqualTo(ids.subList(3, 4));
    }

    /** The row ids {@link Sql#selectBatchWithin} returns for bucket 4, in the order returned. */
    private List<Long> boundedRead(List<Long> excluded, int limit, long budget) throws SQLException {
        Sql sql = new Sql(store.dialect(), JdbcOutboxTables.withPrefix(prefix));
        List<Long> read = new ArrayList<>();
        try (Connection c = pool.getConnection();
             PreparedStatement select = c.prepareStatement(sql.selectBatchWithin(excluded.size()))) {
            int p = 1;
            select.setInt(p++, 4);
            if (!excluded.isEmpty() && store.dialect() == JdbcDialect.POSTGRESQL) {
                select.setArray(p++, c.createArrayOf("bigint", excluded.toArray()));
            } else {
                for (long id : excluded) {
                    select.setLong(p++, id);
                }
            }
            select.setInt(p++, limit);
            select.setLong(p, budget);
            try (ResultSet row = select.executeQuery()) {
                while (row.next()) {
                    read.add(row.getLong(1));
                }
            }
        }
        return read;
    }

    /** More buckets than one probe statement names. */
    @Test
    void S3_bucketsWithPendingProbesMoreBucketsThanOneStatementNames() throws SQLException {
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(false);
            store.writer().enqueue(c, message(3, "a"), message(600, "b"), message(1099, "c"));
            c.commit();
        }
        List<Integer> asked = IntStream.range(0, 1100).boxed().toList();
        assertThat(store.bucketsWithPending(asked)).containsExactly(3, 600, 1099);
    }

    @Test
    void S10_withoutHeadersAValueOf999995BytesFitsTheDefaultLimitAndOneByteMoreIsRefusedSayingWhatCounts()
            throws SQLException {
        assertThat(store.maxPayloadBytes()).isEqualTo(1_000_000);
        OutboxMessage largest = StoredMessages.rebuild(UUID.randomUUID(), 3, TOPIC, null, new byte[999_995], List.of(),
                null, Instant.parse("2030-01-01T00:00:00Z"));
        OutboxMessage over = StoredMessages.rebuild(UUID.randomUUID(), 4, TOPIC, null, new byte[999_996], List.of(),
                null, Instant.parse("2030-01-01T00:00:00Z"));
        try (Connection c = pool.getConnection()) {
            store.writer().enqueue(c, largest);
            assertThatThrownBy(() -> store.writer().enqueue(c, over))
                    .isInstanceOf(OutboxPayloadTooLargeException.class)
                    .hasMessageContaining("payload of 1000001 bytes (key 0 + value 999996 + headers 5 as stored, "
                            + "5 for none), more than this store's limit of 1000000 bytes")
                    .hasMessageContaining("without headers, key and value may hold 999995 bytes together");
        }
        assertThat(store.nextBatch(3, 1)).singleElement().satisfies(p -> assertThat(p.message()).isEqualTo(largest));
        assertThat(pendingIds(4)).isEmpty();
    }

    @Test
    void createSchemaIsIdempotentAndTheDialectIsDetected() {
        store.createSchema();
        store.createSchema();
        assertThat(store.dialect()).isEqualTo(expectedDialect());
        assertThat(store.bucketsWithPending(List.of(0))).isEmpty();
    }

    // ---------------------------------------------------------------------------------------
    // R6: absent tables are a misconfiguration, found at start-up and while running
    // ---------------------------------------------------------------------------------------

    @Test
    void R6_theProviderWithoutCreateSchemaRefusesAbsentTablesNamingThemAndTheSetting() {
        String absent = TestDatabase.uniquePrefix();
        prefixes.add(absent);
        assertThatThrownBy(() -> OutboxStores.open(JdbcOutboxStoreProvider.NAME, database().providerConfig(absent)))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining(absent + "messages")
                .hasMessageContaining(absent + "leases")
                .hasMessageContaining(absent + "relays")
                .hasMessageContaining("do not exist")
                .hasMessageContaining("create.schema=true");
        database().createTables(absent);
        OutboxStore opened = OutboxStores.open(JdbcOutboxStoreProvider.NAME, database().providerConfig(absent));
        assertThat(opened.bucketsWithPending(List.of(0))).isEmpty();
        ((JdbcOutboxStore) opened).close();
    }

    @Test
    void R6_aTableWithoutAColumnTheStoreNeedsIsRefusedNamingTheTable() throws SQLException {
        JdbcOutboxTables names = JdbcOutboxTables.withPrefix(prefix);
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE " + store.dialect().quote(names.relays()));
            s.execute("CREATE TABLE " + store.dialect().quote(names.relays()) + " ("
                    + store.dialect().quote("relay_id") + " VARCHAR(100) NOT NULL PRIMARY KEY)");
        }
        assertThatThrownBy(store::verifySchema)
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining(names.relays())
                .hasMessageContaining("lacks a column")
                .hasMessageContaining("last_seen");
    }

    @Test
    void R6_tablesDroppedWhileRunningMakeEveryCallAMisconfigurationNamingTheTable() throws SQLException {
        store.verifySchema();
        database().dropTables(prefix);
        LeaseRequest request = LeaseRequest.of("relay", 4, LEASE);
        assertThatThrownBy(() -> store.acquireBucketLeases(request))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("does not exist")
                .hasMessageContaining(prefix + "messages")
                .hasMessageContaining("dropped or renamed while the store was in use?")
                .hasMessageContaining("A relay stops on this; recreate the tables with the DDL of JdbcDialect."
                        + store.dialect().name() + ".schemaScript(tables)")
                .hasMessageContaining(store.dialect().schemaResource())
                .hasMessageNotContaining("create.schema")
                .satisfies(e -> assertThat(e.getMessage()).as("one line, even with the driver's message in it")
                        .doesNotContain("\n", "\r"));
        assertThatThrownBy(() -> store.bucketsWithPending(List.of(0, 1)))
                .isInstanceOf(OutboxMisconfigurationException.class);
        assertThatThrownBy(() -> store.nextBatch(0, 10)).isInstanceOf(OutboxMisconfigurationException.class);
        assertThatThrownBy(() -> store.renewBucketLeases(request)).isInstanceOf(OutboxMisconfigurationException.class);
        assertThatThrownBy(store::verifySchema).isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining(prefix + "messages");
    }

    /** A store on the application's data source leaves it open on close. */
    @Test
    void closingAStoreLeavesTheApplicationsDataSourceOpen() throws SQLException {
        store.close();
        assertThat(pool.isClosed()).isFalse();
        try (Connection c = pool.getConnection()) {
            assertThat(c.isValid(5)).isTrue();
        }
        JdbcOutboxStore owning = JdbcOutboxStore.builder(pool()).tablePrefix(prefix).closeDataSource(true).build();
        owning.close();
        assertThat(((HikariDataSource) owning.dataSource()).isClosed()).isTrue();
    }
}
