package io.outbox.store.jdbc;

import io.outbox.OutboxMessage;
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
import io.outbox.spi.support.OutboxHeaderCodec;
import io.outbox.spi.support.StoreArguments;
import io.outbox.spi.support.StoredMessages;
import java.sql.BatchUpdateException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTransactionRollbackException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.ToIntFunction;
import javax.sql.DataSource;

/**
 * The outbox store on a relational database over JDBC: PostgreSQL, MySQL/MariaDB or H2
 * ({@link JdbcDialect}). It implements the store SPI and the capabilities C1
 * {@link LeaseRenewal}, C2 {@link PendingMetrics}, C3 {@link LeaseRelease} and C5
 * {@link ReadAhead} itself; C4 {@link DeadLetters} is its dead-letter table's
 * ({@link #deadLetters()}). Messages are written by {@link #writer()} on the application's own
 * connection (rule E4).
 *
 * <pre>{@code
 * JdbcOutboxStore store = JdbcOutboxStore.builder(dataSource).tablePrefix("outbox_").build();
 * store.createSchema();   // or run the shipped DDL with your migration tool
 * }</pre>
 *
 * <h2>Tables</h2>
 * Three tables named by {@link JdbcOutboxTables} (DDL per dialect in
 * {@link JdbcDialect#schemaResource()}): messages with an auto-increment {@code id} (the enqueue
 * order, S1) and a {@code (bucket, id)} key (the primary key on PostgreSQL and MySQL/MariaDB,
 * an index on H2); one lease row per bucket; one heartbeat row per
 * relay. Every time is a {@code BIGINT} of epoch milliseconds from the injected {@link Clock}
 * (S11), never the database's {@code now()}.
 *
 * <h2>Statements</h2>
 * <ul>
 *   <li>{@link #nextBatch}: {@code ... WHERE bucket = ? ORDER BY bucket, id LIMIT ?}, read in
 *       the order of the {@code (bucket, id)} index, stopping at the limit. When the count times
 *       the largest payload could exceed the byte budget (S1), the database bounds the bytes: the
 *       limited rows with their sizes ({@code OCTET_LENGTH} of key, value and headers), a running
 *       {@code SUM(...) OVER (ORDER BY id)} and row count, and only the rows within the budget (the
 *       first always), so no more than the budget crosses the wire or is held by the driver
 *       (PostgreSQL's driver holds a whole result in auto-commit). On PostgreSQL the columns ride
 *       through the window, one pass over the index with no join back; on MySQL/MariaDB, whose
 *       derived tables holding {@code BLOB}s cannot stay in the memory engine, the window sees only
 *       ids and sizes and the rows within the budget are joined back for their columns. H2,
 *       in this JVM, reads with the plain statement and stops at the budget row by row.</li>
 *   <li>{@link #nextBatchExcluding} (C5, the relay's read ahead): the same statement with
 *       {@code AND id NOT IN (...)} for the batch in flight (PostgreSQL: {@code AND NOT EXISTS
 *       (SELECT 1 FROM unnest(?) ...)} with the ids as one array, a merge anti-join). On H2, which
 *       compares every row with every id of a {@code NOT IN} list, and above {@value #DELETE_CHUNK}
 *       ids on MySQL/MariaDB, the {@code nextBatch} statement with the limit raised by the ids,
 *       whose rows are skipped by row id before they are decoded.</li>
 *   <li>{@link #markPublished}: {@code DELETE ... WHERE bucket = ? AND id IN (...)}, at most
 *       {@value #DELETE_CHUNK} ids per statement; on PostgreSQL one
 *       {@code DELETE ... WHERE bucket = ? AND id = ANY (?)} with the ids as an array.</li>
 *   <li>{@link #bucketsWithPending}: one statement, a {@code LIMIT 1} index seek per bucket joined
 *       with {@code UNION ALL}.</li>
 *   <li>{@link #acquireBucketLeases} runs the shared {@link LeaseAcquisition} recipe (planned by
 *       {@link LeasePlan}) over these statements: one statement with an index seek on each side
 *       of {@code [0, bucketCount)} for stray rows (S8; the DDL's {@code CHECK (bucket >= 0)}
 *       keeps negative buckets out of tables it created), the heartbeat upsert, one read of heartbeats and one of leases,
 *       missing lease rows inserted if absent, then one single-row guarded {@code UPDATE} per
 *       keep ({@code WHERE bucket = ? AND owner = me AND expires_at = seen}), release (same
 *       guard) and claim ({@code WHERE bucket = ? AND owner = seen AND expires_at = seen}, or
 *       {@code owner IS NULL} for a free lease: the value observed, never a clock comparison, S13),
 *       stale heartbeats deleted (fenced by the time seen), and the owned buckets read back.
 *       The database evaluates each guard atomically on its row, so no bucket is ever held by two
 *       relays (S5); a refused write is no error, the read-back says what the relay owns.</li>
 * </ul>
 * Every statement runs in auto-commit (the store switches a borrowed connection to auto-commit
 * and back if needed). The keeps, the releases and the claims of one call are each sent as one
 * JDBC batch, in ascending bucket order; a lease statement holds no lock beyond its own row, or
 * (where the driver runs a batch as one implicit transaction, as PostgreSQL's does) beyond its
 * batch's rows taken in ascending order, so lease writes cannot deadlock with each other at any
 * isolation level. Should a database still report a
 * lock conflict (a deadlock with another workload, a serialization failure under a
 * {@code SERIALIZABLE} default, a lock wait timeout), the lease operations are retried up to
 * {@value #ATTEMPTS} times from the start; every write is guarded, so a retry is safe. On
 * MySQL/MariaDB, whose default is {@code REPEATABLE READ}, {@code READ COMMITTED} is recommended
 * for the store's connections so that the relay's deletes take no gap locks that would make
 * writers' inserts wait; the provider's pool uses it.
 *
 * <h2>Payload limit</h2>
 * The store accepts payloads ({@link StoredMessages#payloadSize}) up to
 * {@link #maxPayloadBytes()}, {@value #DEFAULT_MAX_PAYLOAD_BYTES} bytes unless configured
 * otherwise; the writer refuses larger messages before writing anything (S10). The default leaves
 * about 48 KiB below Kafka's default {@code max.request.size} (1 MiB) and the broker's
 * {@code message.max.bytes} for the record's own overhead and the message-id header, so that
 * whatever the store accepts a default Kafka accepts too; raise it together with those Kafka
 * settings. A message Kafka refuses for good stalls its bucket until it is repaired or removed. A larger limit needs room in the database: on MySQL/MariaDB a
 * row must fit in {@code max_allowed_packet} (16 MiB on MariaDB, 64 MiB on MySQL 8 by default),
 * so keep the limit at least 64 KiB below it; PostgreSQL's {@code BYTEA} and H2's
 * {@code VARBINARY} hold up to 1 GB.
 *
 * <h2>Resources and threads</h2>
 * The store is immutable and thread-safe (S12): each call borrows its own connection from the
 * {@link DataSource} and returns it before it returns. {@link #close()} closes the data source
 * only when the store was built with {@link Builder#closeDataSource(boolean)} (as the provider
 * does for the pool it opens); a data source passed in by the application stays the
 * application's. Database errors surface as {@link JdbcOutboxException}, except an absent
 * table, column or schema: that is an {@link OutboxMisconfigurationException} naming it, which
 * stops a relay (rule R6) instead of being retried for ever.
 */
public final class JdbcOutboxStore implements CloseableOutboxStore, LeaseRenewal.Self, PendingMetrics.Self,
        LeaseRelease.Self, ReadAhead.Self, LeaseView.Self {

    /**
     * The default largest payload, in bytes: 1,000,000, which a Kafka producer and broker on their
     * default size limits (1 MiB) accept with the record overhead and the message-id header added.
     */
    public static final long DEFAULT_MAX_PAYLOAD_BYTES = 1_000_000;

    /** The most ids one {@code DELETE} of {@link #markPublished} names. */
    public static final int DELETE_CHUNK = 500;

    /** How often a lease operation is tried when the database reports a lock conflict. */
    public static final int ATTEMPTS = 3;

    /** The most buckets one probe statement of {@link #bucketsWithPending} names. */
    private static final int PROBE_CHUNK = 500;

    /** How to create absent tables, for error messages. */
    private static final String HOW_TO_CREATE = "create them with the DDL of JdbcDialect.createStatements or "
            + "JdbcOutboxStore.createSchema(), or set " + JdbcOutboxStoreProvider.CREATE_SCHEMA
            + "=true to have the store create them at start-up";

    private final DataSource dataSource;
    private final JdbcOutboxTables tables;
    private final JdbcDialect configuredDialect;
    private final Clock clock;
    private final LeaseAcquisition acquisition = new LeaseAcquisition();
    private final long maxPayloadBytes;
    private final boolean closeDataSource;
    private final JdbcOutboxWriter writer;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Built from the configured dialect, or from the first connection's metadata. */
    private volatile Sql sql;
    private final JdbcDeadLetters deadLetters;

    private JdbcOutboxStore(Builder builder) {
        this.dataSource = builder.dataSource;
        this.tables = builder.tables;
        this.configuredDialect = builder.dialect;
        this.clock = builder.clock;
        this.maxPayloadBytes = builder.maxPayloadBytes;
        this.closeDataSource = builder.closeDataSource;
        this.sql = configuredDialect == null ? null : new Sql(configuredDialect, tables);
        this.writer = new JdbcOutboxWriter(tables, maxPayloadBytes, configuredDialect);
        this.deadLetters = new JdbcDeadLetters(dataSource, tables, this::dialect, clock);
    }

    /**
     * Starts building a store on a data source.
     *
     * @param dataSource where the store borrows connections; not null. A pool is recommended
     *     (HikariCP, your application server's); the store never keeps a connection between calls.
     * @return a builder with the defaults: {@link JdbcOutboxTables#defaults()}, the dialect read
     *     from the first connection, the system UTC clock,
     *     {@value #DEFAULT_MAX_PAYLOAD_BYTES}-byte payloads, the data source left open on close
     * @throws NullPointerException if {@code dataSource} is null
     */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    /**
     * The data source the store borrows connections from.
     *
     * @return the data source
     */
    public DataSource dataSource() {
        return dataSource;
    }

    /**
     * The store's tables.
     *
     * @return the table names
     */
    public JdbcOutboxTables tables() {
        return tables;
    }

    /**
     * The largest payload the store accepts (S10).
     *
     * <p>What it counts: the serialized key, the serialized value and the headers as stored, encoded
     * with {@link io.outbox.spi.support.OutboxHeaderCodec}, which stores
     * {@value io.outbox.spi.support.OutboxHeaderCodec#EMPTY_ENCODED_SIZE} bytes for a message without
     * headers ({@link StoredMessages#payloadSize}); a larger message is refused at enqueue with
     * {@link io.outbox.OutboxPayloadTooLargeException}, whose message names the three parts. So a
     * message without headers holds at most this limit minus 5 bytes of key and value together
     * (1,000,000 by default: 999,995 bytes of key and value).
     *
     * @return the limit on {@link StoredMessages#payloadSize}, in bytes
     */
    public long maxPayloadBytes() {
        return maxPayloadBytes;
    }

    /**
     * The store's dialect: the configured one, or the one read from a connection's metadata
     * (borrowing a connection the first time if no call has yet).
     *
     * @return the dialect
     * @throws JdbcOutboxException if a connection is needed and cannot be had
     */
    public JdbcDialect dialect() {
        Sql known = sql;
        return known != null ? known.dialect : run("reading the database product", false, (c, s) -> s.dialect);
    }

    /**
     * The enqueue helper for this store's tables, payload limit and dialect (E4).
     *
     * @return the store's writer, the same instance on every call; immutable and thread-safe
     */
    public JdbcOutboxWriter writer() {
        return writer;
    }

    /**
     * Creates the tables and the index if they are absent: the statements of
     * {@link JdbcDialect#createStatements(JdbcOutboxTables)}, one at a time. Running it again, or
     * from several processes at once, changes nothing (a statement that loses a creation race
     * is tried once more). The schema, if one is configured, must exist.
     *
     * @throws OutboxMisconfigurationException if the configured schema does not exist
     * @throws JdbcOutboxException if a statement fails otherwise (no privilege, ...)
     */
    public void createSchema() {
        try {
            createTables();
        } catch (OutboxMisconfigurationException e) {
            throw new OutboxMisconfigurationException("creating the outbox tables failed: "
                    + oneLine(e.getCause() == null ? e.getMessage() : e.getCause().getMessage())
                    + (tables.schema() == null ? "" : "; schema " + tables.schema() + " has to exist: creating the "
                    + "tables does not create it"), e.getCause() == null ? e : e.getCause());
        }
    }

    private void createTables() {
        run("creating the outbox tables", false, (c, s) -> {
            for (String ddl : s.dialect.createStatements(tables)) {
                try (var statement = c.createStatement()) {
                    try {
                        statement.execute(ddl);
                    } catch (SQLException raced) {
                        // Two processes creating at once: PostgreSQL may report a duplicate type.
                        try {
                            statement.execute(ddl);
                        } catch (SQLException again) {
                            again.addSuppressed(raced);
                            throw again;
                        }
                    }
                }
            }
            return null;
        });
    }

    /**
     * Checks that every table {@link #createSchema()} makes (messages, leases, relays, and the dead
     * letters' two) exists and can serve the store's statements, so that a store on absent or
     * altered tables fails at start-up instead of on each call, or slowly: every column the store
     * reads and writes, of a usable type (binary columns large enough for
     * {@link #maxPayloadBytes()}, NULL allowed where the store writes it, {@code id} filled by the
     * database), and every key and index a statement needs. It reads the database's metadata, never
     * index names: an index counts when its leading columns are what a statement needs, such as
     * {@code (bucket, id)} for a bucket's batch, or when it is the primary key or a unique index on
     * exactly the columns whose uniqueness a statement relies on, such as a lease's {@code bucket}.
     * Reads no row. The provider calls it when {@value JdbcOutboxStoreProvider#CREATE_SCHEMA} is
     * off.
     *
     * @throws OutboxMisconfigurationException on one line, naming every absent table and how to
     *     create them ({@link #createSchema()}, or the provider setting
     *     {@value JdbcOutboxStoreProvider#CREATE_SCHEMA}{@code =true}), each table with an absent
     *     column or a column of an unusable type, and each missing key or index with its table, its
     *     columns and the DDL that creates it (from the statements {@link #createSchema()} runs);
     *     rule R6 makes it fatal
     * @throws JdbcOutboxException if the database cannot be reached or fails otherwise
     */
    public void verifySchema() {
        run("checking the outbox tables", false, (c, s) -> {
            JdbcTable.verify("outbox", c, s.dialect, s.dialect.tables(tables), maxPayloadBytes, HOW_TO_CREATE);
            return null;
        });
    }

    // ---------------------------------------------------------------------------------------
    // Leases: S4, S4b, S5, S6, S7, S8, S11; C1, C3
    // ---------------------------------------------------------------------------------------

    @Override
    public List<Integer> acquireBucketLeases(LeaseRequest request) {
        StoreArguments.requireRequest(request);
        return run("acquiring bucket leases for relay '" + request.relayId() + "'", true,
                (c, s) -> acquisition.acquire(request, clock, new JdbcLeases(c, s)));
    }

    /**
     * {@inheritDoc}
     *
     * <p>The two selects of the acquire recipe's snapshot, on one borrowed connection (C6); nothing
     * written.
     */
    @Override
    public LeaseTable leaseTable(int bucketCount) {
        LeaseTable.requireBucketCount(bucketCount);
        return run("reading the lease table", false, (c, s) -> {
            LeaseSnapshot snapshot = new JdbcLeases(c, s).readSnapshot(bucketCount);
            return LeaseTable.of(clock.millis(), snapshot.heartbeats(), snapshot.leases(), bucketCount);
        });
    }

    /**
     * The primitives of {@link LeaseAcquisition} on one borrowed connection, each statement in
     * auto-commit.
     */
    private final class JdbcLeases implements LeaseAcquisition.LeaseStore<SQLException> {
        private final Connection c;
        private final Sql s;

        JdbcLeases(Connection c, Sql s) {
            this.c = c;
            this.s = s;
        }

        /** S8: one statement, an index seek on each side of {@code [0, bucketCount)}. */
        @Override
        public List<StrayRows> strayRows(int bucketCount) throws SQLException {
            List<Integer> outside = new ArrayList<>(2);
            try (PreparedStatement probe = c.prepareStatement(s.bucketsOutside)) {
                probe.setInt(1, bucketCount);
                try (ResultSet row = probe.executeQuery()) {
                    while (row.next()) {
                        outside.add(row.getInt(1));
                    }
                }
            }
            return List.of(StrayRows.of("pending outbox messages", "table " + s.messages, outside));
        }

        @Override
        public void writeHeartbeat(String relayId, long nowMillis) throws SQLException {
            heartbeat(c, s, relayId, nowMillis);
        }

        @Override
        public LeaseSnapshot readSnapshot(int bucketCount) throws SQLException {
            Map<String, Long> heartbeats = new HashMap<>();
            try (PreparedStatement select = c.prepareStatement(s.selectHeartbeats);
                 ResultSet row = select.executeQuery()) {
                while (row.next()) {
                    heartbeats.put(s.dialect.getRelayId(row, 1), row.getLong(2));
                }
            }
            List<BucketLease> leases = new ArrayList<>();
            try (PreparedStatement select = c.prepareStatement(s.selectLeases)) {
                select.setInt(1, bucketCount);
                try (ResultSet row = select.executeQuery()) {
                    while (row.next()) {
                        leases.add(new BucketLease(row.getInt(1), s.dialect.getRelayId(row, 2), row.getLong(3)));
                    }
                }
            }
            return new LeaseSnapshot(heartbeats, leases);
        }

        /**
         * One batch: sent one by one, each insert was a round trip and, in auto-commit, a commit of
         * its own, and a first acquisition at 65,536 buckets spent 78 s of its 79 s on them on
         * PostgreSQL (a loaded 2-core machine). The inserts skip rows that exist; should one still
         * meet a row a concurrent relay inserted meanwhile (H2's merge can), they run again one at a
         * time, which is as good.
         */
        @Override
        public void createFreeLeases(List<Integer> buckets) throws SQLException {
            try {
                inBatch(c, s.insertLeaseIfAbsent, buckets, bucket -> bucket, (st, bucket) -> st.setInt(1, bucket));
            } catch (SQLException e) {
                if (!isDuplicateKey(e)) {
                    throw e;
                }
                forEach(c, s.insertLeaseIfAbsent, buckets, true, (st, bucket) -> st.setInt(1, bucket));
            }
        }

        @Override
        public void writeLeases(LeaseWrites writes) throws SQLException {
            String me = writes.relayId();
            // Each kind of write is one JDBC batch: one round trip for all the relay's keeps, say,
            // instead of one per bucket; every statement stays its own single-row guarded write.
            inBatch(c, s.keepLease, writes.keep(), keep -> keep.observed().bucket(), (st, keep) -> {
                st.setLong(1, keep.expiresAtMillis());
                bindFence(s, st, 2, keep.observed(), me);
            });
            inBatch(c, s.releaseLease, writes.release(), BucketLease::bucket,
                    (st, lease) -> bindFence(s, st, 1, lease, me));
            // S13: a claim is conditional on the exact owner and expiry observed.
            inBatch(c, s.claimFreeLease, writes.claim().stream().filter(l -> l.owner() == null).toList(),
                    BucketLease::bucket, (st, lease) -> {
                        s.dialect.setRelayId(st, 1, me);
                        st.setLong(2, writes.claimExpiresAtMillis());
                        st.setInt(3, lease.bucket());
                        st.setLong(4, lease.expiresAtMillis());
                    });
            inBatch(c, s.claimLease, writes.claim().stream().filter(l -> l.owner() != null).toList(),
                    BucketLease::bucket, (st, lease) -> {
                        s.dialect.setRelayId(st, 1, me);
                        st.setLong(2, writes.claimExpiresAtMillis());
                        bindFence(s, st, 3, lease, lease.owner());
                    });
        }

        @Override
        public void deleteStaleHeartbeats(Map<String, Long> stale) throws SQLException {
            forEach(c, s.deleteStaleHeartbeat, stale.entrySet(), false, (st, relay) -> {
                s.dialect.setRelayId(st, 1, relay.getKey());
                st.setLong(2, relay.getValue());
            });
        }

        @Override
        public List<Integer> readOwned(String relayId, long nowMillis, int bucketCount) throws SQLException {
            return owned(c, s, relayId, nowMillis, bucketCount);
        }
    }

    /** The fence of keep and release, from parameter {@code first} on: bucket, owner = me, expiry as seen. */
    private static void bindFence(Sql s, PreparedStatement st, int first, BucketLease lease, String me)
            throws SQLException {
        st.setInt(first, lease.bucket());
        s.dialect.setRelayId(st, first + 1, me);
        st.setLong(first + 2, lease.expiresAtMillis());
    }

    private static void heartbeat(Connection c, Sql s, String relayId, long now) throws SQLException {
        try (PreparedStatement upsert = c.prepareStatement(s.upsertHeartbeat)) {
            s.dialect.bindHeartbeat(upsert, relayId, now);
            upsert.executeUpdate();
        }
    }

    /** The buckets {@code relayId} holds at {@code now}, read back from the leases table. */
    private static List<Integer> owned(Connection c, Sql s, String relayId, long now, int bucketCount)
            throws SQLException {
        List<Integer> owned = new ArrayList<>();
        try (PreparedStatement select = c.prepareStatement(s.selectOwned)) {
            s.dialect.setRelayId(select, 1, relayId);
            select.setLong(2, now);
            select.setInt(3, bucketCount);
            try (ResultSet row = select.executeQuery()) {
                while (row.next()) {
                    owned.add(row.getInt(1));
                }
            }
        }
        return List.copyOf(owned);
    }

    @Override
    public List<Integer> renewBucketLeases(LeaseRequest request) {
        StoreArguments.requireRequest(request);
        return run("renewing bucket leases for relay '" + request.relayId() + "'", true, (c, s) -> {
            long now = clock.millis();
            String me = request.relayId();
            heartbeat(c, s, me, now);
            List<Integer> buckets = request.heldBuckets();
            for (int from = 0; from < buckets.size(); from += PROBE_CHUNK) {
                List<Integer> chunk = buckets.subList(from, Math.min(buckets.size(), from + PROBE_CHUNK));
                try (PreparedStatement renew = c.prepareStatement(s.renewLeases(chunk.size()))) {
                    renew.setLong(1, now + request.leaseDurationMillis());
                    s.dialect.setRelayId(renew, 2, me);
                    renew.setLong(3, now);
                    for (int i = 0; i < chunk.size(); i++) {
                        renew.setInt(4 + i, chunk.get(i));
                    }
                    renew.executeUpdate();
                }
            }
            BitSet asked = new BitSet(request.bucketCount());
            buckets.forEach(asked::set);
            return owned(c, s, me, now, request.bucketCount()).stream().filter(asked::get).toList();
        });
    }

    @Override
    public void releaseBucketLeases(String relayId) {
        Objects.requireNonNull(relayId, "relayId must not be null");
        run("releasing the bucket leases of relay '" + relayId + "'", true, (c, s) -> {
            try (PreparedStatement release = c.prepareStatement(s.releaseAllLeases)) {
                s.dialect.setRelayId(release, 1, relayId);
                release.executeUpdate();
            }
            try (PreparedStatement delete = c.prepareStatement(s.deleteHeartbeat)) {
                s.dialect.setRelayId(delete, 1, relayId);
                delete.executeUpdate();
            }
            return null;
        });
    }

    // ---------------------------------------------------------------------------------------
    // Messages: S1, S2, S3, S9, S10; C2
    // ---------------------------------------------------------------------------------------

    @Override
    public List<Integer> bucketsWithPending(List<Integer> buckets) {
        List<Integer> distinct = StoreArguments.requireBuckets(buckets);
        if (distinct.isEmpty()) {
            return List.of();
        }
        return run("probing buckets for pending messages", false, (c, s) -> {
            TreeSet<Integer> pending = new TreeSet<>();
            for (int from = 0; from < distinct.size(); from += PROBE_CHUNK) {
                List<Integer> chunk = distinct.subList(from, Math.min(distinct.size(), from + PROBE_CHUNK));
                try (PreparedStatement probe = c.prepareStatement(s.bucketsWithRows(chunk.size()))) {
                    for (int i = 0; i < chunk.size(); i++) {
                        probe.setInt(i + 1, chunk.get(i));
                    }
                    try (ResultSet row = probe.executeQuery()) {
                        while (row.next()) {
                            pending.add(row.getInt(1));
                        }
                    }
                }
            }
            return List.copyOf(pending);
        });
    }

    @Override
    public List<Pending> nextBatch(int bucket, int maxCount, long maxBytes) {
        StoreArguments.requireBucket(bucket);
        StoreArguments.requireMaxCount(maxCount);
        StoreArguments.requireMaxBytes(maxBytes);
        boolean bounded = boundInSql(maxCount, maxBytes);
        return run("reading a batch of bucket " + bucket, false, (c, s) -> {
            try (PreparedStatement select = c.prepareStatement(bounded ? s.selectBatchWithin(0) : s.selectBatch)) {
                select.setInt(1, bucket);
                select.setInt(2, maxCount);
                if (bounded) {
                    select.setLong(3, maxBytes);
                }
                return readBatch(s, select, bucket, maxCount, maxBytes, null);
            }
        });
    }

    /**
     * Whether the batch statement bounds the bytes in the database ({@link Sql#selectBatchWithin},
     * S1): when a batch of {@code maxCount} messages could exceed {@code maxBytes}, on PostgreSQL
     * and MySQL/MariaDB. H2 runs in this JVM and planned that statement as a nested loop (6 s a read
     * at 10,000 rows of a bucket); it reads with the plain statement and {@link #readBatch} stops at
     * the budget row by row, so no row past it is copied out of the database.
     */
    private boolean boundInSql(int maxCount, long maxBytes) {
        return budgetBinds(maxCount, maxBytes) && dialect() != JdbcDialect.H2;
    }

    /** Whether a batch of {@code maxCount} messages of the largest payload could exceed {@code maxBytes}. */
    private boolean budgetBinds(int maxCount, long maxBytes) {
        return maxPayloadBytes > maxBytes / maxCount;
    }

    /**
     * {@inheritDoc}
     *
     * <p>The batch statement with the row ids of {@code inFlight} left out in the query; entries
     * of {@code inFlight} read from another table are ignored.
     */
    @Override
    public List<Pending> nextBatchExcluding(int bucket, List<Pending> inFlight, int maxCount, long maxBytes) {
        StoreArguments.requireBucket(bucket);
        StoreArguments.requireMaxCount(maxCount);
        StoreArguments.requireMaxBytes(maxBytes);
        List<Long> ids = new ArrayList<>(Objects.requireNonNull(inFlight, "inFlight must not be null").size());
        for (Pending p : inFlight) {
            if (Objects.requireNonNull(p, "inFlight must not contain null").handle() instanceof Row row
                    && row.tables().equals(tables)) {
                ids.add(row.id());
            }
        }
        if (ids.isEmpty()) {
            return nextBatch(bucket, maxCount, maxBytes);
        }
        if (dialect() == JdbcDialect.H2 || (ids.size() > DELETE_CHUNK && dialect() != JdbcDialect.POSTGRESQL)) {
            return nextBatchSkipping(bucket, ids, maxCount, maxBytes); // more ids than one statement names, or H2
        }
        boolean bounded = boundInSql(maxCount, maxBytes);
        return run("reading ahead in bucket " + bucket, false, (c, s) -> {
            try (PreparedStatement select = c.prepareStatement(bounded ? s.selectBatchWithin(ids.size())
                    : s.selectBatchExcluding(ids.size()))) {
                int p = 1;
                select.setInt(p++, bucket);
                if (s.dialect == JdbcDialect.POSTGRESQL) {
                    select.setArray(p++, c.createArrayOf("bigint", ids.toArray()));
                } else {
                    for (long id : ids) {
                        select.setLong(p++, id);
                    }
                }
                select.setInt(p++, maxCount);
                if (bounded) {
                    select.setLong(p, maxBytes);
                }
                return readBatch(s, select, bucket, maxCount, maxBytes, null);
            }
        });
    }

    /**
     * The read ahead without a {@code NOT IN} list: the batch statement with its limit raised by
     * the ids in flight, whose rows are skipped by their row id before anything else of them is
     * read. For H2, which evaluates {@code id NOT IN (?, ...)} by comparing each row it scans with
     * every listed id (that cost more than the whole read of the batch; here each scanned row costs
     * one binary search), and for more ids than one MySQL/MariaDB statement names. The byte budget
     * is kept row by row: the read stops at the first row it refuses, and on MySQL/MariaDB the
     * driver streams the rows ({@code setFetchSize}) instead of holding the whole result.
     */
    private List<Pending> nextBatchSkipping(int bucket, List<Long> ids, int maxCount, long maxBytes) {
        long[] excluded = new long[ids.size()];
        for (int i = 0; i < excluded.length; i++) {
            excluded[i] = ids.get(i);
        }
        Arrays.sort(excluded);
        int limit = (int) Math.min(Integer.MAX_VALUE, (long) maxCount + excluded.length);
        return run("reading ahead in bucket " + bucket, false, (c, s) -> {
            try (PreparedStatement select = c.prepareStatement(s.selectBatch)) {
                select.setInt(1, bucket);
                select.setInt(2, limit);
                if (s.dialect == JdbcDialect.MYSQL && budgetBinds(maxCount, maxBytes)) {
                    select.setFetchSize((int) Math.max(1, Math.min(limit, maxBytes / maxPayloadBytes)));
                }
                return readBatch(s, select, bucket, maxCount, maxBytes, excluded);
            }
        });
    }

    /**
     * The rows of {@code select} as messages, at most {@code maxCount} and within {@code maxBytes}
     * (S1, {@link BatchBytes}: the first row always), leaving out the row ids in {@code skipped}
     * (sorted; null for none).
     */
    private List<Pending> readBatch(Sql s, PreparedStatement select, int bucket, int maxCount, long maxBytes,
                                    long[] skipped) throws SQLException {
        List<Pending> batch = new ArrayList<>(Math.min(maxCount, 1024));
        BatchBytes budget = new BatchBytes(maxBytes);
        try (ResultSet row = select.executeQuery()) {
            while (batch.size() < maxCount && row.next()) {
                if (skipped != null && Arrays.binarySearch(skipped, row.getLong(1)) >= 0) {
                    continue;
                }
                Pending read;
                try {
                    read = read(s, row, bucket);
                } catch (CorruptMessageException e) { // R12: the rows ahead of it still go out
                    throw new CorruptMessageException(bucket, e.messageId(), batch, e.getMessage(), e.getCause());
                }
                if (!budget.admit(read.message())) {
                    break;
                }
                batch.add(read);
            }
        }
        return List.copyOf(batch);
    }

    /** One row as a pending entry: the driver's fresh arrays become the message's (no copy), the row id its handle. */
    private Pending read(Sql s, ResultSet row, int bucket) throws SQLException {
        long id = row.getLong(1);
        UUID messageId = s.dialect.getMessageId(row, 2);
        String topic = row.getString(3);
        byte[] key = row.getBytes(4);
        byte[] value = row.getBytes(5);
        byte[] headers = row.getBytes(6);
        int partition = row.getInt(7);
        Integer partitionOrNull = row.wasNull() ? null : partition;
        Instant createdAt = Instant.ofEpochMilli(row.getLong(8));
        OutboxMessage message;
        try {
            message = StoredMessages.rebuild(messageId, bucket, topic, key, value, OutboxHeaderCodec.decode(headers),
                    partitionOrNull, createdAt);
        } catch (IllegalArgumentException e) {
            throw new CorruptMessageException(bucket, messageId, List.of(), "outbox message " + messageId + " (row id "
                    + id + " of bucket " + bucket + " in " + tables.messages() + ") cannot be decoded: "
                    + e.getMessage(), e);
        }
        return new Pending(message, new Row(tables, id));
    }

    /** The handle of a pending entry: its row id in the messages table it was read from (S2). */
    record Row(JdbcOutboxTables tables, long id) {
    }

    @Override
    public void markPublished(int bucket, List<Pending> published) {
        List<Row> rows = StoreArguments.requirePublished(bucket, published, Row.class,
                row -> row.tables().equals(tables), "the outbox table " + tables.messages());
        List<Long> ids = new ArrayList<>(rows.size());
        for (Row row : rows) {
            ids.add(row.id());
        }
        if (ids.isEmpty()) {
            return;
        }
        run("deleting published messages of bucket " + bucket, false, (c, s) -> {
            if (s.dialect == JdbcDialect.POSTGRESQL) {
                try (PreparedStatement delete = c.prepareStatement(s.deleteMessagesInArray())) {
                    delete.setInt(1, bucket);
                    delete.setArray(2, c.createArrayOf("bigint", ids.toArray()));
                    delete.executeUpdate();
                }
                return null;
            }
            for (int from = 0; from < ids.size(); from += DELETE_CHUNK) {
                List<Long> chunk = ids.subList(from, Math.min(ids.size(), from + DELETE_CHUNK));
                try (PreparedStatement delete = c.prepareStatement(s.deleteMessages(chunk.size()))) {
                    delete.setInt(1, bucket);
                    for (int i = 0; i < chunk.size(); i++) {
                        delete.setLong(i + 2, chunk.get(i));
                    }
                    delete.executeUpdate();
                }
            }
            return null;
        });
    }

    /**
     * {@inheritDoc}
     *
     * <p>One aggregate query, {@code SELECT COUNT(*), MIN(created_at)}, with the timeout passed
     * to {@link java.sql.Statement#setQueryTimeout(int)} in whole seconds, rounded up.
     *
     * @throws IllegalArgumentException if {@code timeout} is zero or negative
     */
    @Override
    public PendingSnapshot pendingMetrics(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout must not be null");
        if (timeout.isZero() || timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must be positive but was " + timeout);
        }
        long seconds = Math.min(Integer.MAX_VALUE, (timeout.toMillis() + 999) / 1000);
        return run("counting pending messages", false, (c, s) -> {
            try (PreparedStatement count = c.prepareStatement(s.pendingMetrics)) {
                count.setQueryTimeout((int) Math.max(1, seconds));
                try (ResultSet row = count.executeQuery()) {
                    row.next();
                    long pending = row.getLong(1);
                    long oldest = row.getLong(2);
                    return new PendingSnapshot(pending, row.wasNull() ? null : Instant.ofEpochMilli(oldest));
                }
            }
        });
    }

    /**
     * C4: the dead-letter table {@code <messages>_dead} and the failing heads' table
     * {@code <messages>_failing} beside the messages table; every change is one transaction.
     *
     * @return the store's dead letters
     */
    @Override
    public Optional<DeadLetters> deadLetters() {
        return Optional.of(deadLetters);
    }

    /**
     * Closes the data source if the store was built to own it
     * ({@link Builder#closeDataSource(boolean)}); otherwise does nothing. Idempotent.
     *
     * @throws IllegalStateException if closing the data source fails with a checked exception
     *     (its cause); unchecked ones propagate as they are
     */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true) && closeDataSource && dataSource instanceof AutoCloseable owned) {
            try {
                owned.close();
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException("closing the outbox store's data source failed", e);
            }
        }
    }

    @Override
    public String toString() {
        Sql known = sql;
        return "JdbcOutboxStore[" + tables + ", dialect=" + (known == null ? "detected" : known.dialect)
                + ", maxPayloadBytes=" + maxPayloadBytes + "]";
    }

    // ---------------------------------------------------------------------------------------
    // Plumbing
    // ---------------------------------------------------------------------------------------

    /** Work on one borrowed connection, in auto-commit. */
    @FunctionalInterface
    private interface Work<T> {
        T run(Connection connection, Sql sql) throws SQLException;
    }

    /** Binds one item's parameters. */
    @FunctionalInterface
    private interface Binder<T> {
        void bind(PreparedStatement statement, T item) throws SQLException;
    }

    private <T> T run(String what, boolean retryLockConflicts, Work<T> work) {
        for (int attempt = 1; ; attempt++) {
            try (Connection c = dataSource.getConnection()) {
                boolean autoCommit = c.getAutoCommit();
                if (!autoCommit) {
                    c.setAutoCommit(true);
                }
                try {
                    return work.run(c, sql(c));
                } finally {
                    if (!autoCommit) {
                        c.setAutoCommit(false);
                    }
                }
            } catch (SQLException e) {
                if (isMissingSchemaObject(e)) {
                    // Tables dropped or renamed after the start-up check: retrying cannot help (R6).
                    JdbcDialect dialect = sql != null ? sql.dialect : null;
                    throw new OutboxMisconfigurationException(what + " failed: an outbox table, column or schema "
                            + "does not exist (outbox tables " + tables.messages() + ", " + tables.leases() + ", "
                            + tables.relays() + (tables.schema() == null ? "" : " in schema " + tables.schema())
                            + "; dropped or renamed while the store was in use?): " + oneLine(e.getMessage())
                            + ". A relay stops on this; recreate the tables with the DDL of JdbcDialect."
                            + (dialect == null ? "<DIALECT>" : dialect.name()) + ".schemaScript(tables) (for the "
                            + "default table names also shipped as "
                            + (dialect == null ? "io/outbox/store/jdbc/schema-<dialect>.sql" : dialect.schemaResource())
                            + "), then restart the relay", e);
                }
                if (!retryLockConflicts || attempt >= ATTEMPTS || !isLockConflict(e)) {
                    throw new JdbcOutboxException(what + " failed (outbox tables " + tables.messages() + ", "
                            + tables.leases() + ", " + tables.relays() + ")", e);
                }
            }
        }
    }

    /** A driver's message on one line: PostgreSQL's, for one, adds lines such as "  Position: 23". */
    private static String oneLine(String message) {
        return message == null ? "" : message.strip().replaceAll("\\s*\\R\\s*", " ");
    }

    private Sql sql(Connection c) throws SQLException {
        Sql known = sql;
        if (known == null) {
            known = new Sql(JdbcDialect.detect(c), tables);
            sql = known; // a race builds equal instances; either is fine
        }
        return known;
    }

    /** Runs one statement per item, each on its own in auto-commit. */
    private static <T> void forEach(Connection c, String statement, Collection<T> items, boolean duplicatesAreFine,
                                    Binder<T> binder) throws SQLException {
        if (items.isEmpty()) {
            return;
        }
        try (PreparedStatement st = c.prepareStatement(statement)) {
            for (T item : items) {
                binder.bind(st, item);
                try {
                    st.executeUpdate();
                } catch (SQLException e) {
                    // A concurrent relay inserted the same lease row first: that is the goal.
                    if (!duplicatesAreFine || !isDuplicateKey(e)) {
                        throw e;
                    }
                }
            }
        }
    }

    /**
     * Runs {@code statement} once per item as one JDBC batch (one round trip where the driver
     * pipelines batches), in ascending bucket order: a driver that runs a batch in one implicit
     * transaction (PostgreSQL's) then takes its row locks in the order every other batch takes
     * them, so two relays' batches cannot deadlock. A failed batch throws the failing statement's
     * own exception when the driver reports it, so lock conflicts and missing tables are
     * recognised as for one statement.
     */
    private static <T> void inBatch(Connection c, String statement, Collection<T> items, ToIntFunction<T> bucket,
                                    Binder<T> binder) throws SQLException {
        if (items.isEmpty()) {
            return;
        }
        List<T> ordered = new ArrayList<>(items);
        ordered.sort(Comparator.comparingInt(bucket));
        try (PreparedStatement st = c.prepareStatement(statement)) {
            for (T item : ordered) {
                binder.bind(st, item);
                st.addBatch();
            }
            st.executeBatch();
        } catch (BatchUpdateException e) {
            SQLException cause = e.getNextException();
            if (cause == null || cause == e) {
                throw e;
            }
            cause.addSuppressed(e);
            throw cause;
        }
    }

    /** Deadlock, serialization failure or lock timeout: the statement had no effect; try again. */
    static boolean isLockConflict(SQLException e) {
        String state = e.getSQLState();
        return e instanceof SQLTransactionRollbackException
                || "40001".equals(state) || "40P01".equals(state)
                || e.getErrorCode() == 1205                              // MySQL/MariaDB lock wait timeout
                || e.getErrorCode() == 90131 || e.getErrorCode() == 50200; // H2 concurrent update, lock timeout
    }

    /**
     * An absent table, column or schema: PostgreSQL 42P01, 42703, 3F000; MySQL/MariaDB 1146, 1054,
     * 1049; H2 42102 to 42104, 42122, 90079; any driver's 42S02 (table) and 42S22 (column).
     */
    static boolean isMissingSchemaObject(SQLException e) {
        String state = e.getSQLState();
        int code = e.getErrorCode();
        return "42P01".equals(state) || "3F000".equals(state) || "42S02".equals(state) || isMissingColumn(e)
                || code == 1146 || code == 1049
                || code == 42102 || code == 42103 || code == 42104 || code == 90079;
    }

    private static boolean isMissingColumn(SQLException e) {
        String state = e.getSQLState();
        int code = e.getErrorCode();
        return "42703".equals(state) || "42S22".equals(state) || code == 1054 || code == 42122;
    }

    private static boolean isDuplicateKey(SQLException e) {
        return e.getSQLState() != null && e.getSQLState().startsWith("23");
    }

    static long requirePayloadLimit(long maxPayloadBytes) {
        if (maxPayloadBytes < 0) {
            throw new IllegalArgumentException("maxPayloadBytes must be >= 0 but was " + maxPayloadBytes);
        }
        return maxPayloadBytes;
    }

    /**
     * Builds a {@link JdbcOutboxStore}. Each setter validates its argument at once; not
     * thread-safe; {@link #build()} may be called more than once.
     */
    public static final class Builder {

        private final DataSource dataSource;
        private JdbcOutboxTables tables = JdbcOutboxTables.defaults();
        private JdbcDialect dialect;
        private Clock clock = Clock.systemUTC();
        private long maxPayloadBytes = DEFAULT_MAX_PAYLOAD_BYTES;
        private boolean closeDataSource;

        private Builder(DataSource dataSource) {
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource must not be null");
        }

        /**
         * The table names, schema included.
         *
         * @param tables the names; not null
         * @return this builder
         */
        public Builder tables(JdbcOutboxTables tables) {
            this.tables = Objects.requireNonNull(tables, "tables must not be null");
            return this;
        }

        /**
         * Names the tables {@code <prefix>messages}, {@code <prefix>leases} and
         * {@code <prefix>relays}, keeping the schema set so far.
         *
         * @param prefix the prefix; not null; empty or an identifier; default
         *     {@value JdbcOutboxTables#DEFAULT_PREFIX}
         * @return this builder
         * @throws IllegalArgumentException if the prefix is not a valid identifier
         */
        public Builder tablePrefix(String prefix) {
            this.tables = JdbcOutboxTables.withPrefix(prefix).inSchema(tables.schema());
            return this;
        }

        /**
         * The schema (MySQL/MariaDB: database) holding the tables, keeping their names.
         *
         * @param schema an identifier, or null for the connection's current schema (the default)
         * @return this builder
         * @throws IllegalArgumentException if the schema is not a valid identifier
         */
        public Builder schema(String schema) {
            this.tables = tables.inSchema(schema);
            return this;
        }

        /**
         * The SQL dialect.
         *
         * @param dialect the dialect, or null (the default) to read it from the first connection's
         *     metadata
         * @return this builder
         */
        public Builder dialect(JdbcDialect dialect) {
            this.dialect = dialect;
            return this;
        }

        /**
         * The clock all lease time and heartbeats come from (S11).
         *
         * @param clock the clock; not null; default the system UTC clock
         * @return this builder
         */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock must not be null");
            return this;
        }

        /**
         * The largest payload the store's writer accepts (S10). See the class documentation for
         * what each database can hold.
         *
         * @param maxPayloadBytes the limit on {@link StoredMessages#payloadSize} in bytes,
         *     {@code >= 0}; default {@value JdbcOutboxStore#DEFAULT_MAX_PAYLOAD_BYTES}
         * @return this builder
         * @throws IllegalArgumentException if {@code maxPayloadBytes < 0}
         */
        public Builder maxPayloadBytes(long maxPayloadBytes) {
            this.maxPayloadBytes = requirePayloadLimit(maxPayloadBytes);
            return this;
        }

        /**
         * Whether {@link JdbcOutboxStore#close()} also closes the data source (when it implements
         * {@link AutoCloseable}, as {@code HikariDataSource} does). Set it when the store is the
         * data source's only user.
         *
         * @param close true to close the data source with the store; default false
         * @return this builder
         */
        public Builder closeDataSource(boolean close) {
            this.closeDataSource = close;
            return this;
        }

        /**
         * Builds the store. Opens no connection: the dialect, unless set, is read on first use.
         *
         * @return the store
         */
        public JdbcOutboxStore build() {
            return new JdbcOutboxStore(this);
        }
    }
}
