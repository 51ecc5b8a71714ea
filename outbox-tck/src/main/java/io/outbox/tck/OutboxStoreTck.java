package io.outbox.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;
import static io.outbox.tck.KitRule.Binding.OPTIONAL;
import static io.outbox.tck.KitRule.Binding.REQUIRED;
import static io.outbox.tck.KitRule.Binding.STOCHASTIC;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.outbox.OutboxHeader;
import io.outbox.OutboxMessage;
import io.outbox.OutboxPayloadTooLargeException;
import io.outbox.spi.LeaseRequest;
import io.outbox.spi.LeaseTable;
import io.outbox.spi.LeaseView;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.OutboxStore;
import io.outbox.spi.OutboxStoreProvider;
import io.outbox.spi.OutboxStores;
import io.outbox.spi.Pending;
import io.outbox.spi.PendingMetrics;
import io.outbox.spi.PendingSnapshot;
import io.outbox.spi.ReadAhead;
import io.outbox.spi.support.BatchBytes;
import io.outbox.spi.support.BucketLease;
import io.outbox.spi.support.FairShare;
import io.outbox.spi.support.StoredMessages;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TimeZone;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The store compatibility kit: tests of every contract rule of {@link OutboxStore} (S1-S13 and
 * S4b), of the enqueue path (E4, E5), of discovery, of the relay rules a store's answers uphold
 * (R11's busy buckets, R12's corrupt rows, R14's takeover under churn), and of the optional
 * capabilities C1-C6. Every store, ours or yours, passes it.
 *
 * <h2>Using it</h2>
 * Extend this class in your store's test sources and implement the fixture methods:
 * <pre>{@code
 * class MyStoreTckTest extends OutboxStoreTck {
 *     protected void createStorage()                 { prefix = "tck_" + UUID...; createTables(prefix); }
 *     protected OutboxStore newStore(Clock clock)    { return new MyStore(newClient(), prefix, clock); }
 *     protected void enqueue(OutboxStore s, List<OutboxMessage> m)            { ...commit... }
 *     protected void enqueueAndRollBack(OutboxStore s, List<OutboxMessage> m) { ...roll back... }
 *     protected void insertRawRow(OutboxStore s, OutboxMessage m)             { ...any bucket... }
 *     protected long maxPayloadBytes()               { return MyStore.MAX_PAYLOAD_BYTES; }
 *     protected String providerName()                { return "my-store"; }
 *     protected Map<String, String> providerConfig() { return Map.of("url", ..., "prefix", prefix); }
 *     protected void dropStorage()                   { dropTables(prefix); }
 * }
 * }</pre>
 * Run it with JUnit Jupiter. Each test carries a {@link KitRule}: the rule it guards, how binding
 * it is, what it checks and where to look when it fails; its name says the binding and the rule.
 * {@code required_...} must pass; {@code stochastic_...} must pass too, but is a race that a broken
 * store fails often, not always; {@code optional_C1_...} runs only when the store offers the
 * capability (its accessor, {@link OutboxStore#leaseRenewal()} for C1, is not empty) and is
 * otherwise skipped with the reason. A failing test's message starts with its rule id and name
 * and ends with that hint, and at the end of the run the kit prints which rules passed, failed and
 * were skipped (and why) on standard output.
 *
 * <p>Every call the kit makes into the store or the fixture is bounded by
 * {@link TckEnvironment#callTimeout()}, and every loop by a count, so a store that blocks, loops or
 * never empties a bucket fails a rule in seconds instead of hanging the build. Lease time comes
 * from a {@link TckClock} the kit moves, so the kit is deterministic and fast; tune its sizes with
 * {@link #environment()}. {@link InMemoryOutboxStoreTck}, the fixture of the kit's reference store,
 * is the template for a store that is not JDBC.
 */
@ExtendWith({RuleHints.class, KitSummary.class})
public abstract class OutboxStoreTck extends DeadLetterRules {

    /** The topic of the messages the kit writes. */
    protected static final String TOPIC = "outbox-tck";

    /** In the S5 contention test, every relay pauses once per this many of its rounds. */
    private static final int PAUSE_PERIOD = 40;

    /** The least length of those pauses, in rounds: about two lease durations of simulated time. */
    private static final int PAUSE_ROUNDS = 12;

    /** How many runs of the S5 contention test may pass without a takeover before the kit doubts itself. */
    private static final int CONTENTION_ATTEMPTS = 3;

    /** Where the clock starts: a fixed instant far from the machine's own time (S11). */
    private static final Instant START = Instant.parse("2031-03-04T05:06:07.089Z");

    /** The setting named when a call runs out of time. */
    private static final String CALL_TIMEOUT = "TckEnvironment.callTimeout";

    private final List<OutboxStore> opened = new ArrayList<>();
    private final Map<OutboxStore, OutboxStore> unbounded = new IdentityHashMap<>();
    private TckClock clock;
    private TckEnvironment env;
    private OutboxStore store;
    private int sequence;

    // ---------------------------------------------------------------------------------------
    // The fixture a store implements
    // ---------------------------------------------------------------------------------------

    /**
     * Creates fresh, empty, isolated storage for one test (unique table or collection names, so
     * runs never clash). Called before each test. The default does nothing.
     *
     * @throws Exception on failure; the test then errors
     */
    protected void createStorage() throws Exception {
    }

    /**
     * Opens a new store instance over the storage {@link #createStorage()} made, bound to the
     * given clock for all lease time (S11). Each call must return an independent instance with
     * its own client or connection pool, as separate relay processes would have: the contention
     * tests race several of them. The kit closes instances that implement {@link AutoCloseable}.
     *
     * @param clock the clock the store must use; a {@link TckClock}
     * @return a new store over this test's storage
     * @throws Exception on failure
     */
    protected abstract OutboxStore newStore(Clock clock) throws Exception;

    /**
     * Enqueues messages through the backend's own transactional path (its enqueue helper inside a
     * native transaction, rule E4) and commits. The messages may belong to several buckets.
     * An error from the enqueue helper (for example {@link OutboxPayloadTooLargeException}) must
     * propagate, directly or as a cause.
     *
     * @param store a store made by {@link #newStore(Clock)}
     * @param messages the messages, in enqueue order
     * @throws Exception on failure
     */
    protected abstract void enqueue(OutboxStore store, List<OutboxMessage> messages) throws Exception;

    /**
     * Enqueues messages through the same transactional path as {@link #enqueue}, then rolls the
     * transaction back (abort, cancellation) instead of committing.
     *
     * @param store a store made by {@link #newStore(Clock)}
     * @param messages the messages
     * @throws Exception on failure
     */
    protected abstract void enqueueAndRollBack(OutboxStore store, List<OutboxMessage> messages) throws Exception;

    /**
     * Optional: enqueues messages through the transactional path like {@link #enqueue}, but leaves
     * the transaction open and returns it; the kit commits it later. The S2 test that needs it
     * ("a message committed late survives the deletion of a later one") is skipped, with that
     * reason, when the fixture does not implement it.
     *
     * @param store a store made by {@link #newStore(Clock)}
     * @param messages the messages
     * @return the open transaction
     * @throws Exception on failure
     */
    protected OpenTransaction beginEnqueue(OutboxStore store, List<OutboxMessage> messages) throws Exception {
        return Assumptions.abort("the fixture does not implement beginEnqueue(store, messages), so the kit cannot "
                + "hold a transaction open; optional fixture method");
    }

    /** A transaction left open by {@link #beginEnqueue}. */
    @FunctionalInterface
    public interface OpenTransaction {
        /**
         * Commits the transaction.
         *
         * @throws Exception on failure
         */
        void commit() throws Exception;
    }

    /**
     * Writes a message row as a writer with a different bucket count would, into whatever bucket
     * the message names, even one outside the relay's range (for S8). Include whatever
     * bookkeeping such a writer leaves (a sequence counter, say). The default enqueues the
     * message with {@link #enqueue}, which is right for a store whose enqueue helper accepts any
     * bucket {@code >= 0}.
     *
     * @param store a store made by {@link #newStore(Clock)}
     * @param message the message; its {@link OutboxMessage#bucket()} may be any value {@code >= 0}
     * @throws Exception on failure
     */
    protected void insertRawRow(OutboxStore store, OutboxMessage message) throws Exception {
        enqueue(store, List.of(message));
    }

    /**
     * Writes a message's row into the given bucket, which may be negative (an {@link OutboxMessage}
     * cannot carry one): what a foreign writer with a signed hash, or a hand-written SQL fix,
     * leaves behind (for the negative side of S8). Write it directly into the storage, with the
     * bookkeeping such a writer leaves (a sequence counter), bypassing any schema constraint
     * against it (a JDBC fixture may drop the {@code CHECK (bucket >= 0)} for this). The default
     * calls {@link #insertRawRow(OutboxStore, OutboxMessage)} when {@code bucket} is the message's
     * own and otherwise skips the test that needs it, with that reason.
     *
     * @param store a store made by {@link #newStore(Clock)}
     * @param message the message whose fields the row carries
     * @param bucket the bucket to store the row under; any value
     * @throws Exception on failure
     */
    protected void insertRawRow(OutboxStore store, OutboxMessage message, int bucket) throws Exception {
        if (bucket == message.bucket()) {
            insertRawRow(store, message);
            return;
        }
        Assumptions.abort("the fixture does not implement insertRawRow(store, message, bucket), so the kit cannot "
                + "write a row into bucket " + bucket + "; implement it to run the negative side of S8");
    }

    /**
     * The largest {@link StoredMessages#payloadSize} the store accepts (S10). The kit enqueues a
     * message of exactly this size, so keep it within what a test can allocate.
     *
     * @return the limit, in bytes
     */
    protected abstract long maxPayloadBytes();

    /**
     * The name the store's {@link OutboxStoreProvider} registers under.
     *
     * @return the provider name
     */
    protected abstract String providerName();

    /**
     * Settings for which {@link OutboxStores#open(String, Map)} opens a working store over this
     * test's storage.
     *
     * @return the provider settings
     */
    protected abstract Map<String, String> providerConfig();

    /**
     * Removes the storage of one test. Called after each test, after the kit closed its stores.
     * The default does nothing.
     *
     * @throws Exception on failure
     */
    protected void dropStorage() throws Exception {
    }

    /**
     * The kit's knobs. Override to slow down or shrink the contention tests for a slow backend.
     *
     * @return the environment; {@link TckEnvironment#defaults()} by default
     */
    protected TckEnvironment environment() {
        return TckEnvironment.defaults();
    }

    // ---------------------------------------------------------------------------------------
    // Lifecycle and helpers
    // ---------------------------------------------------------------------------------------

    /**
     * Sets up the storage and the clock before each test.
     *
     * @throws Exception when the fixture fails
     */
    @BeforeEach
    protected final void setUpKit() throws Exception {
        env = environment();
        clock = new TckClock(START);
        createStorage();
    }

    /**
     * Closes the stores the kit opened and drops the storage after each test.
     *
     * @throws Exception when the fixture fails
     */
    @AfterEach
    protected final void tearDownKit() throws Exception {
        Exception failure = null;
        for (OutboxStore s : opened) {
            if (s instanceof AutoCloseable closeable) {
                try {
                    closeable.close();
                } catch (Exception e) {
                    failure = e;
                }
            }
        }
        opened.clear();
        unbounded.clear();
        store = null;
        dropStorage();
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * The kit's clock; every store of a test shares it.
     *
     * @return the clock
     */
    protected final TckClock clock() {
        return clock;
    }

    /**
     * Opens a new store instance over this test's storage and remembers it for closing.
     *
     * @return the store
     * @throws Exception when the fixture fails
     */
    protected final OutboxStore openStore() throws Exception {
        return openStore(clock);
    }

    /**
     * A store the kit calls through a bounded view: every call returns within
     * {@link TckEnvironment#callTimeout()} or fails the test's rule. The fixture methods get the
     * store {@link #newStore} made, never the view.
     */
    private OutboxStore openStore(Clock storeClock) throws Exception {
        OutboxStore s = fixture("newStore(clock)", () -> newStore(storeClock));
        assertThat(s).as("newStore(clock) returned null").isNotNull();
        opened.add(s);
        OutboxStore view = BoundedCalls.bounded(OutboxStore.class, s, env.callTimeout(), CALL_TIMEOUT);
        unbounded.put(view, s);
        return view;
    }

    /** The store behind a view of {@link #openStore}, for the fixture methods. */
    private OutboxStore unbounded(OutboxStore view) {
        OutboxStore s = unbounded.get(view);
        return s == null ? view : s;
    }

    /** A fixture call within {@link TckEnvironment#callTimeout()}. */
    private <T> T fixture(String what, Callable<T> call) throws Exception {
        return BoundedCalls.call(env.callTimeout(), CALL_TIMEOUT, what, call);
    }

    @Override
    final void write(OutboxStore s, List<OutboxMessage> messages) throws Exception {
        fixture("enqueue(store, " + messages.size() + " messages)", () -> {
            enqueue(unbounded(s), messages);
            return null;
        });
    }

    private void writeAndRollBack(OutboxStore s, List<OutboxMessage> messages) throws Exception {
        fixture("enqueueAndRollBack(store, " + messages.size() + " messages)", () -> {
            enqueueAndRollBack(unbounded(s), messages);
            return null;
        });
    }

    private OpenTransaction writeOpen(OutboxStore s, List<OutboxMessage> messages) throws Exception {
        OpenTransaction open = fixture("beginEnqueue(store, " + messages.size() + " messages)",
                () -> beginEnqueue(unbounded(s), messages));
        return () -> fixture("the commit of beginEnqueue's transaction", () -> {
            open.commit();
            return null;
        });
    }

    private void writeRaw(OutboxStore s, OutboxMessage message) throws Exception {
        fixture("insertRawRow(store, message of bucket " + message.bucket() + ")", () -> {
            insertRawRow(unbounded(s), message);
            return null;
        });
    }

    private void writeRaw(OutboxStore s, OutboxMessage message, int bucket) throws Exception {
        fixture("insertRawRow(store, message, " + bucket + ")", () -> {
            insertRawRow(unbounded(s), message, bucket);
            return null;
        });
    }

    @Override
    final void corrupt(OutboxStore s, OutboxMessage message) throws Exception {
        fixture("corruptStoredHeaders(store, message)", () -> {
            corruptStoredHeaders(unbounded(s), message);
            return null;
        });
    }

    @Override
    final TckEnvironment kitEnvironment() {
        return env;
    }

    private OutboxStore store() throws Exception {
        if (store == null) {
            store = openStore();
        }
        return store;
    }

    private OutboxMessage message(int bucket) {
        int n = ++sequence;
        return StoredMessages.rebuild(UUID.randomUUID(), bucket, TOPIC,
                ("key-" + bucket).getBytes(StandardCharsets.UTF_8),
                ("value-" + n).getBytes(StandardCharsets.UTF_8), List.of(), null, clock.instant());
    }

    private List<OutboxMessage> messages(int bucket, int count) {
        return IntStream.range(0, count).mapToObj(i -> message(bucket)).toList();
    }

    private void enqueueEach(List<OutboxMessage> messages) throws Exception {
        for (OutboxMessage m : messages) {
            write(store(), List.of(m));
        }
    }

    private static List<UUID> ids(List<OutboxMessage> messages) {
        return messages.stream().map(OutboxMessage::messageId).toList();
    }

    /** The message ids of entries a store read, in their order. */
    private static List<UUID> readIds(List<Pending> read) {
        return ids(Pending.messages(read));
    }

    private List<Integer> allBuckets() {
        return IntStream.range(0, env.bucketCount()).boxed().toList();
    }

    /** Drains a bucket of at most {@code atMost} messages; see {@link KitChecks#drain}. */
    private static List<OutboxMessage> drain(OutboxStore s, int bucket, int atMost) {
        return KitChecks.drain(s, bucket, 50, atMost);
    }

    private void runConcurrently(List<? extends Callable<?>> tasks) throws Exception {
        KitThreads.runConcurrently(tasks, env.concurrencyTimeout());
    }

    private SimRelay relay(String id) throws Exception {
        return new SimRelay(id, openStore(), env);
    }

    /** A relay whose store runs on its own clock (S13). */
    private SimRelay relay(String id, Clock relayClock) throws Exception {
        return new SimRelay(id, openStore(relayClock), env);
    }

    /** One round: every relay acquires once, in random order; asserts nobody shares a bucket. */
    private Map<String, List<Integer>> round(List<SimRelay> relays, Random random) {
        List<SimRelay> order = new ArrayList<>(relays);
        Collections.shuffle(order, random);
        for (SimRelay r : order) {
            r.acquire();
        }
        Map<String, List<Integer>> owned = new LinkedHashMap<>();
        Map<Integer, String> owners = new HashMap<>();
        for (SimRelay r : relays) {
            owned.put(r.id, r.held);
            for (int b : r.held) {
                String other = owners.put(b, r.id);
                if (other != null) {
                    throw new RuleViolation(RuleViolation.S5, "bucket " + b + " is held by both " + other + " and "
                            + r.id + " after a round: " + owned);
                }
            }
        }
        return owned;
    }

    /** Fair means every relay holds exactly its {@link FairShare} share (S4): they then sum to the count. */
    private boolean isFair(Map<String, List<Integer>> owned) {
        FairShare shares = FairShare.of(env.bucketCount(), owned.keySet());
        return owned.entrySet().stream().allMatch(e -> e.getValue().size() == shares.share(e.getKey()));
    }

    private Map<String, List<Integer>> converge(String rule, List<SimRelay> relays, Random random, int maxRounds,
                                                long stepMillis, String situation) {
        Map<String, List<Integer>> owned = Map.of();
        for (int i = 0; i < maxRounds; i++) {
            owned = round(relays, random);
            if (isFair(owned)) {
                return owned;
            }
            clock.advanceMillis(stepMillis);
        }
        Map<String, Integer> expected = new TreeMap<>();
        FairShare shares = FairShare.of(env.bucketCount(), owned.keySet());
        owned.keySet().forEach(id -> expected.put(id, shares.share(id)));
        return fail("%s: %d relays did not converge to their fair shares %s of %d buckets within %d rounds (%s); "
                + "last: %s", rule, relays.size(), expected, env.bucketCount(), maxRounds, situation, owned);
    }

    // ---------------------------------------------------------------------------------------
    // S1 ordering
    // ---------------------------------------------------------------------------------------

    /**
     * A test of rule S1: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S1", binding = REQUIRED,
            checks = "nextBatch returns at most maxCount pending messages of the bucket, in enqueue order, and "
                    + "only that bucket's.",
            ifThisFails = "the batch query sorts by the enqueue sequence (auto-increment id, per-bucket "
                    + "counter), not by message id, time or insertion into an unordered map; the limit is "
                    + "applied after sorting; the query filters on the bucket.")
    public void required_S1_nextBatchReturnsAtMostMaxCountOldestFirst() throws Exception {
        List<OutboxMessage> three = new ArrayList<>();
        List<OutboxMessage> four = new ArrayList<>();
        for (int i = 0; i < 25; i++) {
            three.add(message(3));
            write(store(), List.of(three.get(i)));
            if (i % 5 == 0) {
                four.add(message(4));
                write(store(), List.of(four.get(four.size() - 1)));
            }
        }
        for (int max : new int[] {1, 2, 7, 25, 100}) {
            assertThat(readIds(store().nextBatch(3, max))).as("nextBatch(3, %d)", max)
                    .containsExactlyElementsOf(ids(three.subList(0, Math.min(max, three.size()))));
        }
        assertThat(readIds(store().nextBatch(4, 100))).as("nextBatch(4, 100): bucket 4 in enqueue order").containsExactlyElementsOf(ids(four));
        assertThat(store().nextBatch(5, 100)).as("an empty bucket").isEmpty();
    }

    /**
     * A test of rule S1: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S1", binding = REQUIRED,
            checks = "S1 with S2: draining buckets with varying batch sizes and partial acknowledgements yields "
                    + "every message exactly once, in enqueue order, whatever the transaction sizes were.",
            ifThisFails = "messages enqueued in one transaction keep their order; sequence numbers are reserved "
                    + "in enqueue order; deleting a prefix does not disturb the order of the rest.")
    public void required_S1_orderHoldsAcrossManyEnqueuesAndBatchSizes() throws Exception {
        Random random = new Random(1);
        int[] buckets = new TreeSet<>(List.of(0, env.bucketCount() / 2, env.bucketCount() - 1)).stream()
                .mapToInt(Integer::intValue).toArray();
        Map<Integer, List<UUID>> expected = new HashMap<>();
        int remaining = env.orderingMessages();
        while (remaining > 0) {
            int size = Math.min(remaining, 1 + random.nextInt(10));
            List<OutboxMessage> tx = new ArrayList<>();
            for (int i = 0; i < size; i++) {
                OutboxMessage m = message(buckets[random.nextInt(buckets.length)]);
                tx.add(m);
                expected.computeIfAbsent(m.bucket(), b -> new ArrayList<>()).add(m.messageId());
            }
            write(store(), tx);
            remaining -= size;
        }
        for (int bucket : buckets) {
            List<UUID> seen = new ArrayList<>();
            for (int guard = 0; guard < 10 * env.orderingMessages(); guard++) {
                int max = 1 + random.nextInt(40);
                List<Pending> batch = store().nextBatch(bucket, max);
                if (batch.isEmpty()) {
                    break;
                }
                assertThat(batch.size()).as("nextBatch(%d, %d) returned too many", bucket, max).isLessThanOrEqualTo(max);
                List<UUID> again = readIds(batch).stream().filter(seen::contains).toList();
                if (!again.isEmpty()) {
                    throw new RuleViolation(RuleViolation.S2, "nextBatch(" + bucket + ", " + max + ") returned "
                            + again + " again after markPublished of them");
                }
                int acked = random.nextInt(batch.size() + 1);
                store().markPublished(bucket, batch.subList(0, acked));
                seen.addAll(readIds(batch.subList(0, acked)));
            }
            assertThat(seen).as("bucket %d drained in enqueue order", bucket)
                    .containsExactlyElementsOf(expected.getOrDefault(bucket, List.of()));
        }
    }

    /**
     * A test of rule S1: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S1", binding = REQUIRED,
            checks = "nextBatch keeps the byte budget: the longest prefix of the bucket whose key, value and "
                    + "encoded header bytes (BatchBytes) add up to at most maxBytes, the first message always "
                    + "(alone when it alone is over the budget), never skipping a large message for smaller "
                    + "ones behind it; the count still binds; maxBytes below 1 is refused.",
            ifThisFails = "the read stops at the first message the budget refuses (new BatchBytes(maxBytes).admit "
                    + "per row, or a running SUM of OCTET_LENGTH in the query) instead of reading maxCount rows; "
                    + "sizes count key + value + headers as StoredMessages.payloadSize does, not the value "
                    + "alone; a message exactly at the budget fits; StoreArguments.requireMaxBytes checks the "
                    + "argument.")
    public void required_S1_nextBatchKeepsTheByteBudget() throws Exception {
        List<OutboxMessage> sized = List.of(sized(2, 10, 100, 0), sized(2, 0, 200, 2), sized(2, 30, 300, 1),
                sized(2, 10, 5_000, 0), sized(2, 0, 50, 0));
        enqueueEach(sized);
        long[] bytes = sized.stream().mapToLong(BatchBytes::of).toArray();
        long firstThree = bytes[0] + bytes[1] + bytes[2];
        Map<String, long[]> cases = new LinkedHashMap<>();
        cases.put("exactly the first message's bytes", new long[] {bytes[0], 1});
        cases.put("one byte less than the first message (read alone)", new long[] {bytes[0] - 1, 1});
        cases.put("1 byte (the first message alone)", new long[] {1, 1});
        cases.put("exactly the first two", new long[] {bytes[0] + bytes[1], 2});
        cases.put("one byte short of the first three", new long[] {firstThree - 1, 2});
        cases.put("the first three and less than the fourth (the small fifth is not taken in its place)",
                new long[] {firstThree + bytes[3] - 1, 3});
        cases.put("all five exactly", new long[] {firstThree + bytes[3] + bytes[4], 5});
        cases.put("no byte bound", new long[] {Long.MAX_VALUE, 5});
        for (Map.Entry<String, long[]> c : cases.entrySet()) {
            int expected = (int) c.getValue()[1];
            assertThat(readIds(store().nextBatch(2, 10, c.getValue()[0])))
                    .as("nextBatch(2, 10, %d): %s", c.getValue()[0], c.getKey())
                    .containsExactlyElementsOf(ids(sized.subList(0, expected)));
        }
        assertThat(readIds(store().nextBatch(2, 2, Long.MAX_VALUE))).as("nextBatch(2, 2, no byte bound): the count "
                + "binds").containsExactlyElementsOf(ids(sized.subList(0, 2)));
        KitChecks.published(store(), 2, store().nextBatch(2, 3, firstThree));
        assertThat(readIds(store().nextBatch(2, 10, bytes[4]))).as("nextBatch(2, 10, %d): the head of %d bytes, "
                + "read alone", bytes[4], bytes[3]).containsExactlyElementsOf(ids(sized.subList(3, 4)));
        assertThatThrownBy(() -> store().nextBatch(2, 10, 0)).as("nextBatch(2, 10, 0)")
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxBytes");
    }

    /** A message of a bucket with a key, a value and headers of these sizes ({@code keyBytes} 0: no key). */
    private OutboxMessage sized(int bucket, int keyBytes, int valueBytes, int headers) {
        List<OutboxHeader> list = new ArrayList<>();
        for (int i = 0; i < headers; i++) {
            list.add(OutboxHeader.of("h" + i, bytes(17L * (i + 1))));
        }
        return StoredMessages.rebuild(UUID.randomUUID(), bucket, TOPIC, keyBytes == 0 ? null : bytes(keyBytes),
                bytes(valueBytes), list, null, clock.instant());
    }

    /**
     * A test of rule S1: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S1", binding = REQUIRED,
            checks = "nextBatch refuses a negative bucket with IllegalArgumentException, as "
                    + "StoreArguments.requireBucket does.",
            ifThisFails = "nextBatch starts with StoreArguments.requireBucket(bucket) instead of running a query "
                    + "for a bucket no message can have.")
    public void required_S1_nextBatchRefusesANegativeBucket() throws Exception {
        assertThatThrownBy(() -> store().nextBatch(-1, 10)).as("nextBatch(-1, 10)")
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("-1");
        assertThatThrownBy(() -> store().nextBatch(Integer.MIN_VALUE, 10)).as("nextBatch(Integer.MIN_VALUE, 10)")
                .isInstanceOf(IllegalArgumentException.class);
    }

    /**
     * A test of rule S1: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S1", binding = REQUIRED,
            checks = "nextBatch refuses a maxCount below 1 with IllegalArgumentException, as "
                    + "StoreArguments.requireMaxCount does.",
            ifThisFails = "nextBatch calls StoreArguments.requireMaxCount(maxCount) instead of passing 0 or a "
                    + "negative limit to the database (where it may mean \"no limit\").")
    public void required_S1_nextBatchRefusesMaxCountBelowOne() throws Exception {
        write(store(), List.of(message(0)));
        assertThatThrownBy(() -> store().nextBatch(0, 0)).as("nextBatch(0, 0)")
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxCount");
        assertThatThrownBy(() -> store().nextBatch(0, -5)).as("nextBatch(0, -5)")
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxCount");
    }

    /**
     * A test of rule S1: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S1", binding = REQUIRED,
            checks = "a batch never holds more than maxCount messages even when transactions enqueued many "
                    + "messages at once, and it cuts across transaction boundaries.",
            ifThisFails = "the limit counts messages, not transactions or pages; the query's limit is maxCount "
                    + "exactly.")
    public void required_S1_batchNeverExceedsMaxCountWithMultiMessageTransactions() throws Exception {
        List<OutboxMessage> all = new ArrayList<>();
        for (int tx = 0; tx < 5; tx++) {
            List<OutboxMessage> batch = messages(1, 20);
            write(store(), batch);
            all.addAll(batch);
        }
        for (int max : new int[] {1, 3, 7, 19, 20, 21, 33, 40, 64, 99, 100, 101}) {
            assertThat(readIds(store().nextBatch(1, max))).as("nextBatch(1, %d) after 5 transactions of 20", max)
                    .containsExactlyElementsOf(ids(all.subList(0, Math.min(max, all.size()))));
        }
    }

    /**
     * A test of rule S1: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S1", binding = REQUIRED,
            checks = "nextBatch returns only the asked bucket's rows, even for buckets whose numbers share low "
                    + "bits or a remainder.",
            ifThisFails = "the query compares the bucket for equality, not modulo, prefix or range.")
    public void required_S1_nextBatchNeverReturnsAnotherBucketsRows() throws Exception {
        Map<Integer, List<UUID>> byBucket = new LinkedHashMap<>();
        for (int bucket : new int[] {1, 17, 33, 257, 1025, 65_537}) {
            List<OutboxMessage> ms = messages(bucket, 2);
            write(store(), ms);
            byBucket.put(bucket, ids(ms));
        }
        for (Map.Entry<Integer, List<UUID>> e : byBucket.entrySet()) {
            assertThat(readIds(store().nextBatch(e.getKey(), 100))).as("nextBatch(%d, 100)", e.getKey())
                    .containsExactlyElementsOf(e.getValue());
        }
    }

    /**
     * A test of rule S1: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S1", binding = REQUIRED,
            checks = "order is enqueue order, not creation time: messages created with clocks that disagree "
                    + "(several writer hosts) come back in the order they were enqueued.",
            ifThisFails = "the batch is sorted by the enqueue sequence (id, counter), not by createdAt or "
                    + "message id.")
    public void required_S1_orderIsEnqueueOrderNotCreationTime() throws Exception {
        List<OutboxMessage> enqueued = new ArrayList<>();
        long[] skews = {0, -60_000, 5_000, -3_600_000, 1, 86_400_000, -2};
        for (long skew : skews) {
            clock.advanceMillis(skew);
            OutboxMessage m = message(4);
            write(store(), List.of(m));
            enqueued.add(m);
        }
        assertThat(readIds(store().nextBatch(4, 100))).as("messages with creation times out of order")
                .containsExactlyElementsOf(ids(enqueued));
    }

    // ---------------------------------------------------------------------------------------
    // S2 deletion
    // ---------------------------------------------------------------------------------------

    /**
     * A test of rule S2: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S2", binding = REQUIRED,
            checks = "markPublished deletes exactly the acknowledged prefix; the rest of the batch, later "
                    + "messages and other buckets stay.",
            ifThisFails = "deletion is by the messages' native ids (or message ids), not by a range such as \"id "
                    + "<= last\"; it is scoped to the bucket; it does not delete the whole batch that was read.")
    public void required_S2_markPublishedDeletesExactlyThePrefix() throws Exception {
        List<OutboxMessage> one = messages(1, 10);
        List<OutboxMessage> two = messages(2, 3);
        enqueueEach(one);
        enqueueEach(two);
        List<Pending> batch = store().nextBatch(1, 10);
        assertThat(readIds(batch)).containsExactlyElementsOf(ids(one));
        List<OutboxMessage> later = messages(1, 2);
        enqueueEach(later);

        store().markPublished(1, batch.subList(0, 4));

        List<UUID> expected = new ArrayList<>(ids(one.subList(4, 10)));
        expected.addAll(ids(later));
        assertThat(readIds(store().nextBatch(1, 100))).as("bucket 1 after markPublished of its first 4: the other 6 and the 2 enqueued later").containsExactlyElementsOf(expected);
        assertThat(readIds(store().nextBatch(2, 100))).as("bucket 2, untouched by markPublished of bucket 1").containsExactlyElementsOf(ids(two));
    }

    /**
     * A test of rule S2: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S2", binding = REQUIRED,
            checks = "marking the same messages again, or a longer prefix that includes deleted ones, is safe "
                    + "and deletes nothing else; an empty list is a no-op.",
            ifThisFails = "a second delete of an already deleted row is not an error; no \"expected N rows "
                    + "deleted\" assertion inside the store.")
    public void required_S2_markPublishedIsIdempotent() throws Exception {
        List<OutboxMessage> one = messages(1, 6);
        enqueueEach(one);
        List<Pending> first = store().nextBatch(1, 6);
        store().markPublished(1, first.subList(0, 2));
        store().markPublished(1, first.subList(0, 2));
        store().markPublished(1, List.of());
        assertThat(readIds(store().nextBatch(1, 100))).as("bucket 1 after marking its first 2 twice and an empty list").containsExactlyElementsOf(ids(one.subList(2, 6)));
        store().markPublished(1, first.subList(0, 3));
        assertThat(readIds(store().nextBatch(1, 100))).as("bucket 1 after marking a prefix of 3 that holds the 2 deleted").containsExactlyElementsOf(ids(one.subList(3, 6)));
    }

    /**
     * A test of rule S2: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S2", binding = REQUIRED,
            checks = "markPublished refuses an entry the store did not read (a pending message with the right "
                    + "bucket and a real message id, but a handle the store never made) with "
                    + "IllegalArgumentException and deletes nothing, not even the messages of the same call "
                    + "that it did read.",
            ifThisFails = "markPublished calls StoreArguments.requirePublished with the class of the store's own "
                    + "handles (the native id its nextBatch puts beside each message) before deleting anything; "
                    + "deletion is never by message id alone.")
    public void required_S2_markPublishedRefusesAForeignMessage() throws Exception {
        List<OutboxMessage> one = messages(1, 3);
        write(store(), one);
        List<Pending> batch = store().nextBatch(1, 10);
        Pending foreign = new Pending(one.get(2), new ForeignHandle(one.get(2).messageId()));
        List<Pending> mixed = List.of(batch.get(0), batch.get(1), foreign);
        assertThatThrownBy(() -> store().markPublished(1, mixed))
                .as("markPublished(1, [read, read, a stored message with a handle the store never made])")
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(one.get(2).messageId().toString());
        assertThat(readIds(store().nextBatch(1, 10))).as("every message is still pending after the refused call")
                .containsExactlyElementsOf(ids(one));
    }

    /**
     * A test of rule S2: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S2", binding = REQUIRED,
            checks = "markPublished refuses a message read from another bucket than the one named, and a "
                    + "negative bucket, with IllegalArgumentException, and deletes nothing.",
            ifThisFails = "markPublished calls StoreArguments.requirePublished(bucket, ...), which compares each "
                    + "message's bucket with the argument; the delete is scoped to the named bucket.")
    public void required_S2_markPublishedRefusesAnotherBucketsMessage() throws Exception {
        List<OutboxMessage> one = messages(1, 2);
        List<OutboxMessage> two = messages(2, 2);
        write(store(), one);
        write(store(), two);
        List<Pending> batchOfTwo = store().nextBatch(2, 10);
        assertThatThrownBy(() -> store().markPublished(1, batchOfTwo))
                .as("markPublished(1, messages read from bucket 2)")
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bucket 2");
        assertThatThrownBy(() -> store().markPublished(-1, List.of()))
                .as("markPublished(-1, [])").isInstanceOf(IllegalArgumentException.class);
        assertThat(readIds(store().nextBatch(1, 10))).as("bucket 1 after the refused call")
                .containsExactlyElementsOf(ids(one));
        assertThat(readIds(store().nextBatch(2, 10))).as("bucket 2 after the refused call")
                .containsExactlyElementsOf(ids(two));
    }

    /**
     * A test of rule S2: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S2", binding = REQUIRED,
            checks = "a message whose transaction reserved its place first but committed last survives the "
                    + "deletion of a later message that was published before it became visible. (Needs the "
                    + "optional fixture method beginEnqueue.)",
            ifThisFails = "deletion names the published rows (native ids or message ids); it must never delete a "
                    + "range such as seq <= last published, which also removes a lower sequence committed late.")
    public void required_S2_markPublishedSparesAMessageCommittedLate() throws Exception {
        OutboxMessage slow = message(1);
        OpenTransaction open = writeOpen(store(), List.of(slow));
        OutboxMessage fast = message(1);
        write(store(), List.of(fast));
        List<Pending> batch = store().nextBatch(1, 10);
        assertThat(readIds(batch)).as("only the committed message is visible").containsExactly(fast.messageId());
        open.commit();
        store().markPublished(1, batch);
        assertThat(readIds(store().nextBatch(1, 10))).as("the message committed late")
                .containsExactly(slow.messageId());
    }

    // ---------------------------------------------------------------------------------------
    // S3 pending probe
    // ---------------------------------------------------------------------------------------

    /**
     * A test of rule S3: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S3", binding = REQUIRED,
            checks = "bucketsWithPending returns exactly the asked buckets that hold rows, ascending, distinct; "
                    + "an emptied bucket disappears at once.",
            ifThisFails = "the probe filters on the given buckets only; results are sorted; it reads committed "
                    + "data (no stale cache); an empty input returns an empty list.")
    public void required_S3_bucketsWithPendingIsExact() throws Exception {
        int n = env.bucketCount() * 2;
        Random random = new Random(3);
        TreeSet<Integer> withRows = new TreeSet<>();
        for (int b = 0; b < n; b++) {
            if (random.nextBoolean()) {
                withRows.add(b);
                write(store(), messages(b, 1 + random.nextInt(3)));
            }
        }
        withRows.add(n - 1);
        write(store(), messages(n - 1, 1));
        List<Integer> everything = new ArrayList<>(IntStream.range(0, n).boxed().toList());
        Collections.shuffle(everything, random);
        assertThat(store().bucketsWithPending(everything)).as("every bucket asked, shuffled").containsExactlyElementsOf(withRows);
        List<Integer> some = everything.subList(0, n / 2);
        assertThat(store().bucketsWithPending(some)).as("half of the buckets, shuffled")
                .containsExactlyElementsOf(withRows.stream().filter(some::contains).toList());
        assertThat(store().bucketsWithPending(List.of())).as("no bucket asked").isEmpty();
        assertThat(store().bucketsWithPending(List.of(n + 5))).as("a bucket without rows").isEmpty();
        int first = withRows.first();
        int last = withRows.last();
        assertThat(store().bucketsWithPending(List.of(last, first, last, first)))
                .as("repeated buckets in the input come back once, ascending")
                .containsExactlyElementsOf(new TreeSet<>(List.of(first, last)));

        int emptied = withRows.first();
        drain(store(), emptied, 10);
        withRows.remove(emptied);
        assertThat(store().bucketsWithPending(everything)).as("after bucket %d was drained", emptied).containsExactlyElementsOf(withRows);
    }

    /**
     * A test of rule S3: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S3", binding = REQUIRED,
            checks = "bucketsWithPending refuses a negative bucket, a null list and a null element, as "
                    + "StoreArguments.requireBuckets does, rather than ignoring them.",
            ifThisFails = "bucketsWithPending starts with StoreArguments.requireBuckets(buckets) (which also "
                    + "sorts and deduplicates).")
    public void required_S3_bucketsWithPendingRefusesANegativeBucket() throws Exception {
        write(store(), List.of(message(0)));
        assertThatThrownBy(() -> store().bucketsWithPending(List.of(0, -1)))
                .as("bucketsWithPending([0, -1])").isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("-1");
        assertThatThrownBy(() -> store().bucketsWithPending(null))
                .as("bucketsWithPending(null)").isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> store().bucketsWithPending(Arrays.asList(0, null)))
                .as("bucketsWithPending([0, null])").isInstanceOf(NullPointerException.class);
    }

    // ---------------------------------------------------------------------------------------
    // S4, S4b lease acquisition
    // ---------------------------------------------------------------------------------------

    /**
     * A test of rule S4: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S4", binding = REQUIRED,
            checks = "a relay alone acquires every bucket, and the answer is read back from the store: a second "
                    + "store instance sees the same owner.",
            ifThisFails = "lease rows are created (seeded) when missing; the returned list comes from the store, "
                    + "ascending; leases are visible across clients (no per-instance cache).")
    public void required_S4_aLoneRelayAcquiresEveryBucket() throws Exception {
        SimRelay a = relay("relay-a");
        assertThat(a.acquire()).containsExactlyElementsOf(allBuckets());
        SimRelay b = relay("relay-b");
        assertThat(b.acquire()).as("a second relay while relay-a holds everything").isEmpty();
        SimRelay aElsewhere = new SimRelay("relay-a", openStore(), env);
        aElsewhere.held = a.held;
        assertThat(aElsewhere.acquire()).as("relay-a's leases read through another store instance")
                .isNotEmpty().isSubsetOf(allBuckets());
    }

    /**
     * A test of rule S4: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S4", binding = REQUIRED,
            checks = "when a second relay joins, the first releases its excess and the second claims it; the two "
                    + "end with fair, disjoint shares covering every bucket.",
            ifThisFails = "heartbeats are recorded on every acquire and read by the others; the excess is "
                    + "released (owner cleared), not kept; claims take free or expired leases only; LeasePlan "
                    + "is used as documented.")
    public void required_S4_excessIsReleasedToAJoiningRelay() throws Exception {
        SimRelay a = relay("relay-a");
        SimRelay b = relay("relay-b");
        a.acquire();
        b.acquire();
        long step = env.leaseDuration().toMillis() / 20;
        clock.advanceMillis(step);
        a.acquire();
        FairShare shares = FairShare.of(env.bucketCount(), List.of(a.id, b.id));
        assertThat(a.held).as("relay-a after relay-b joined").hasSize(shares.share(a.id));
        clock.advanceMillis(step);
        b.acquire();
        assertThat(b.held).as("relay-b after relay-a released").hasSize(shares.share(b.id));
        Set<Integer> union = new TreeSet<>(a.held);
        union.addAll(b.held);
        assertThat(union).containsExactlyElementsOf(allBuckets());
    }

    /**
     * A test of rule S4: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S4", binding = REQUIRED,
            checks = "lease rows outside [0, bucketCount) (left by relays configured with more buckets) are "
                    + "neither an error nor returned: a relay only ever gets buckets in its range.",
            ifThisFails = "the read-back filters on bucket < bucketCount; S8 is about pending message rows (and "
                    + "sequence counters), not lease rows.")
    public void required_S4_onlyBucketsInRangeAreReturned() throws Exception {
        int n = env.bucketCount();
        OutboxStore s = openStore();
        List<Integer> wide = s.acquireBucketLeases(LeaseRequest.of("relay-wide", n * 2, env.leaseDuration()));
        assertThat(wide).as("relay-wide with %d buckets", n * 2).hasSize(n * 2);
        clock.advanceMillis(1);
        List<Integer> narrow = s.acquireBucketLeases(new LeaseRequest("relay-wide", n, env.leaseDuration(), List.of()));
        assertThat(narrow).as("the same relay with %d buckets", n).isNotEmpty()
                .allSatisfy(b -> assertThat(b).isBetween(0, n - 1));
    }

    /**
     * A test of rule S4b: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S4b", binding = REQUIRED,
            checks = "relays that pass back the buckets they held keep exactly those buckets round after round; "
                    + "nothing moves in a stable fleet.",
            ifThisFails = "keep writes extend the caller's own leases (owner = me, the expiry last seen) instead "
                    + "of re-claiming; heldBuckets is passed to LeasePlan; renewals do not reset ownership.")
    public void required_S4b_heldBucketsAreKeptRoundAfterRound() throws Exception {
        List<SimRelay> relays = List.of(relay("r-1"), relay("r-2"), relay("r-3"));
        Random random = new Random(4);
        long step = env.leaseDuration().toMillis() / 10;
        Map<String, List<Integer>> converged = converge("S4b", relays, random, 6, step, "three relays joining");
        for (int i = 0; i < 10; i++) {
            clock.advanceMillis(step);
            assertThat(round(relays, random)).as("round %d after convergence", i).isEqualTo(converged);
        }
    }

    /**
     * A test of rule R11: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "R11", binding = REQUIRED,
            checks = "An acquisition keeps the caller's busy buckets (LeaseRequest.busyBuckets) even above its "
                    + "fair share, so a rebalance never takes a bucket from a relay while it publishes it; once "
                    + "they are idle the next call gives the excess up and a peer claims it.",
            ifThisFails = "the store plans from the request it was given (so busyBuckets reaches LeasePlan); "
                    + "every lease in the plan's keep list is extended; nothing the plan keeps is released.")
    public void required_R11_busyBucketsAreKeptAboveTheShareUntilTheyAreIdle() throws Exception {
        int n = env.bucketCount();
        assumeTrue(n >= 2, "needs at least 2 buckets");
        Duration lease = env.leaseDuration();
        OutboxStore a = openStore();
        OutboxStore b = openStore();
        List<Integer> all = allBuckets();
        List<Integer> heldA = a.acquireBucketLeases(LeaseRequest.of("relay-a", n, lease));
        assertThat(heldA).as("R11: a lone relay owns every bucket").isEqualTo(all);
        clock.advanceMillis(1);
        assertThat(b.acquireBucketLeases(LeaseRequest.of("relay-b", n, lease)))
                .as("R11: every bucket is leased to relay-a").isEmpty();
        clock.advanceMillis(1);

        heldA = a.acquireBucketLeases(new LeaseRequest("relay-a", n, lease, heldA, all));
        assertThat(heldA).as("R11: relay-a keeps every busy bucket although relay-b joined").isEqualTo(all);
        clock.advanceMillis(1);
        assertThat(b.acquireBucketLeases(LeaseRequest.of("relay-b", n, lease)))
                .as("R11: no busy bucket can be claimed by a peer").isEmpty();
        clock.advanceMillis(1);

        heldA = a.acquireBucketLeases(new LeaseRequest("relay-a", n, lease, heldA, List.of()));
        int shareA = FairShare.of(n, Set.of("relay-a", "relay-b")).share("relay-a");
        assertThat(heldA).as("R11: once idle, relay-a gives up what is above its share").hasSize(shareA);
        clock.advanceMillis(1);
        assertThat(b.acquireBucketLeases(LeaseRequest.of("relay-b", n, lease)))
                .as("R11: relay-b claims the buckets relay-a gave up").hasSize(n - shareA)
                .doesNotContainAnyElementsOf(heldA);
    }

    // ---------------------------------------------------------------------------------------
    // S5 exclusivity
    // ---------------------------------------------------------------------------------------

    /**
     * A test of rule S5: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S5", binding = STOCHASTIC,
            checks = "under real contention no bucket is ever held by two relays with unexpired leases. Each of "
                    + "several relays has its own store instance and thread; they acquire (and renew, with C1) "
                    + "for hundreds of rounds while the shared clock runs and relays pause long enough to lose "
                    + "their leases. A ledger records when each relay believed it held each bucket (from the "
                    + "return of a call until the lease duration after its start, cut short by its next call) "
                    + "and fails on any overlap between two relays.",
            ifThisFails = "every lease transition is one atomic conditional write whose condition the database "
                    + "evaluates (claim: owner and expiry as observed; keep and release: owner = me and expiry "
                    + "= the value read); the read-back only returns leases with owner = me and expiry > now; "
                    + "nothing is decided on data read earlier in the call without a condition on the write.")
    public void stochastic_S5_noBucketIsEverHeldByTwoRelaysUnderContention() throws Exception {
        int relayCount = env.contentionRelays();
        int rounds = env.contentionRounds();
        List<SimRelay> relays = new ArrayList<>();
        for (int i = 0; i < relayCount; i++) {
            relays.add(relay("contender-" + i));
        }
        LeaseLedger ledger = new LeaseLedger();
        // A run in which no bucket changed hands exercised no takeover: run again, at most three times.
        for (int attempt = 0; attempt < CONTENTION_ATTEMPTS && ledger.handovers() == 0; attempt++) {
            contend(relays, ledger, rounds, 100 + attempt * relayCount);
        }
        List<String> violations = ledger.violations();
        assertThat(violations).as("S5: buckets held by two relays at once (%d violations)", violations.size())
                .isEmpty();
        assertThat(ledger.handovers()).as("kit self-check, not a store fault: in %d runs no bucket changed hands, so "
                + "the contention test exercised no takeover; raise contentionRounds", CONTENTION_ATTEMPTS).isPositive();
    }

    /** One run of the S5 contention: every relay on its own thread for {@code rounds} rounds. */
    private void contend(List<SimRelay> relays, LeaseLedger ledger, int rounds, int seed) throws Exception {
        int relayCount = relays.size();
        long lease = env.leaseDuration().toMillis();
        long maxStep = Math.max(2, lease / (relayCount * 3L));
        List<Callable<Void>> tasks = new ArrayList<>();
        for (int i = 0; i < relayCount; i++) {
            SimRelay r = relays.get(i);
            Random random = new Random(seed + i);
            int pauseAt = i * PAUSE_PERIOD / relayCount;
            tasks.add(() -> {
                int pause = 0;
                for (int round = 0; round < rounds; round++) {
                    if (round % PAUSE_PERIOD == pauseAt) {
                        pause = PAUSE_ROUNDS + random.nextInt(3 * relayCount); // long enough to lose leases
                    }
                    if (pause > 0) {
                        pause--;
                        clock.advanceMillis(random.nextInt((int) maxStep));
                        Thread.yield();
                        continue;
                    }
                    long start = clock.millis();
                    ledger.endBeliefs(r.id, start);
                    List<Integer> owned = r.acquire();
                    ledger.believe(r.id, owned, clock.millis(), start + lease);
                    if (r.store.leaseRenewal().isPresent() && random.nextInt(3) == 0) {
                        long renewStart = clock.millis();
                        ledger.endBeliefs(r.id, renewStart);
                        List<Integer> renewed = r.renew();
                        assertThat(renewed).isSubsetOf(owned);
                        ledger.believe(r.id, renewed, clock.millis(), renewStart + lease);
                        r.held = renewed;
                    }
                    clock.advanceMillis(random.nextInt((int) maxStep));
                    if (pause == 0 && random.nextInt(12) == 0) {
                        pause = 3 + random.nextInt(3 * relayCount);
                    }
                }
                return null;
            });
        }
        runConcurrently(tasks);
        ledger.endAll(clock.millis());
    }

    /**
     * A test of rule S5: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S5", binding = REQUIRED,
            checks = "S5, S13: a relay that keeps its leases while its clock was set back never shortens them "
                    + "and still changes them: it keeps its share, a peer gets none of it, and the holder, its "
                    + "clock back to normal, still holds it.",
            ifThisFails = "the keep write sets expiry to LeasePlan.renewedExpiry(observed) (max(stored + 1, now "
                    + "+ duration)), not to now + duration nor to max(stored, now + duration).")
    public void required_S5_keepingALeaseNeverShortensIt() throws Exception {
        long lease = env.leaseDuration().toMillis();
        SimRelay a = relay("relay-a");
        SimRelay b = relay("relay-b");
        long t0 = clock.millis();
        a.acquire();
        assertThat(b.acquire()).as("relay-b's first look").isEmpty();
        FairShare shares = FairShare.of(env.bucketCount(), List.of(a.id, b.id));
        clock.setMillis(t0 - lease / 3);
        List<Integer> aKept = a.acquire();
        assertThat(aKept).as("relay-a keeps its share with its clock set back").hasSize(shares.share(a.id));
        clock.setMillis(t0 + lease - 1);
        assertThat(b.acquire()).as("relay-b takes its share, none of relay-a's kept leases")
                .hasSize(shares.share(b.id)).doesNotContainAnyElementsOf(aKept);
        assertThat(a.acquire()).as("relay-a, its clock back to normal, still holds its share")
                .containsExactlyElementsOf(aKept);
    }

    /**
     * A test of rule S5: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S5", binding = REQUIRED,
            checks = "keeping a lease changes and extends it, so a peer that watches it takes it only a lease "
                    + "duration after the last keep it saw, not when the original lease would have run out.",
            ifThisFails = "every acquire writes the keep for each lease the relay keeps (no \"still fresh, skip "
                    + "the write\" shortcut), with LeasePlan.renewedExpiry.")
    public void required_S5_keepingALeaseExtendsIt() throws Exception {
        long lease = env.leaseDuration().toMillis();
        SimRelay a = relay("relay-a");
        SimRelay b = relay("relay-b");
        long t0 = clock.millis();
        a.acquire();
        assertThat(b.acquire()).as("relay-b's first look").isEmpty();
        FairShare shares = FairShare.of(env.bucketCount(), List.of(a.id, b.id));
        clock.setMillis(t0 + lease / 4);
        List<Integer> aKept = a.acquire();
        assertThat(aKept).as("relay-a keeps its share").hasSize(shares.share(a.id));
        long t1 = t0 + lease + lease / 4 - 1;
        clock.setMillis(t1);
        assertThat(b.acquire()).as("relay-b a lease duration after its first look: relay-a kept its share since")
                .hasSize(shares.share(b.id)).doesNotContainAnyElementsOf(aKept);
        // relay-a stops: relay-b first saw its kept leases at t1.
        clock.setMillis(t1 + lease - 1);
        assertThat(b.acquire()).as("relay-b before the kept leases stayed unchanged for a lease duration")
                .doesNotContainAnyElementsOf(aKept);
        clock.setMillis(t1 + lease);
        assertThat(b.acquire()).as("relay-b once they did").containsExactlyElementsOf(allBuckets());
    }

    /**
     * A test of rule S5: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S5", binding = REQUIRED,
            checks = "a relay returns only leases that last a lease duration from the start of its call: one of its "
                    + "own leases that it judged expired during the call (time passed between its reads of the "
                    + "clock) and left to a peer is not returned, though its stored expiry is still ahead of the "
                    + "time the call began; the peer then takes it and no bucket has two holders.",
            ifThisFails = "the answer is the leases this call kept or claimed, as the read-back confirms them (owner "
                    + "= me), not every lease whose owner is me and whose expiry is later than the call's first "
                    + "reading of the clock.")
    public void required_S5_aLeaseJudgedExpiredDuringTheCallIsNotReturned() throws Exception {
        long lease = env.leaseDuration().toMillis();
        SimRelay a = relay("relay-a");
        SimRelay b = relay("relay-b");
        long t0 = clock.millis();
        assertThat(a.acquire()).as("relay-a alone takes every bucket").containsExactlyElementsOf(allBuckets());
        assertThat(b.acquire()).as("relay-b's first look").isEmpty();
        // relay-a's next call begins 1 ms before its leases run out and reads the clock again only
        // after they did: it judges them expired and plans half of them for relay-b.
        long aStart = t0 + lease - 1;
        clock.setMillis(aStart);
        List<Integer> aHeld;
        clock.tickOnEveryRead(2);
        try {
            aHeld = a.acquire();
        } finally {
            clock.tickOnEveryRead(0);
        }
        clock.setMillis(t0 + lease + 10);
        List<Integer> bHeld = b.acquire();
        FairShare shares = FairShare.of(env.bucketCount(), List.of(a.id, b.id));
        assertThat(bHeld).as("relay-b, a lease duration after it saw relay-a's leases unchanged, takes its share")
                .hasSize(shares.share(b.id));
        assertThat(bHeld).as("buckets relay-a was told at %d it holds until %d, which relay-b took at %d", aStart,
                aStart + lease, t0 + lease + 10).doesNotContainAnyElementsOf(aHeld);
    }

    /**
     * A test of rule S5: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S5", binding = STOCHASTIC,
            checks = "when every lease and heartbeat has expired and all relays acquire at the same instant, no "
                    + "bucket is returned to two of them. Relays see different memberships (each sees only the "
                    + "heartbeats written before its read), plan overlapping claims, and only the database's "
                    + "conditional writes keep them apart. Like the contention test this is a race: a store "
                    + "without conditional claims fails it often, not always.",
            ifThisFails = "the claim is a conditional write (owner and expiry as observed) evaluated by the "
                    + "database; the read-back comes from the store, not from the writes the relay planned.")
    public void stochastic_S5_simultaneousClaimsAfterMassExpiryNeverGrantABucketTwice() throws Exception {
        int relayCount = env.contentionRelays();
        int rounds = Math.max(20, env.contentionRounds() / 4);
        long lease = env.leaseDuration().toMillis();
        List<SimRelay> relays = new ArrayList<>();
        for (int i = 0; i < relayCount; i++) {
            relays.add(relay("simultaneous-" + i));
        }
        CyclicBarrier start = new CyclicBarrier(relayCount);
        CyclicBarrier done = new CyclicBarrier(relayCount,
                () -> clock.advanceMillis(lease + 1));
        List<Map<Integer, String>> owners = Collections.synchronizedList(new ArrayList<>());
        List<String> violations = Collections.synchronizedList(new ArrayList<>());
        for (int round = 0; round < rounds; round++) {
            owners.add(new ConcurrentHashMap<>());
        }
        List<Callable<Void>> tasks = new ArrayList<>();
        for (SimRelay r : relays) {
            tasks.add(() -> {
                for (int round = 0; round < rounds; round++) {
                    start.await(env.concurrencyTimeout().toMillis(), TimeUnit.MILLISECONDS);
                    List<Integer> owned;
                    try {
                        owned = r.acquire();
                    } catch (RuntimeException | AssertionError e) {
                        start.reset(); // release the other relays at once instead of at the timeout
                        done.reset();
                        throw e;
                    }
                    for (int b : owned) {
                        String other = owners.get(round).putIfAbsent(b, r.id);
                        if (other != null) {
                            violations.add("round " + round + ": bucket " + b + " returned to " + other
                                    + " and " + r.id);
                        }
                    }
                    done.await(env.concurrencyTimeout().toMillis(), TimeUnit.MILLISECONDS);
                }
                return null;
            });
        }
        runConcurrently(tasks);
        assertThat(violations).as("S5: buckets granted to two relays at once").isEmpty();
    }

    // ---------------------------------------------------------------------------------------
    // S13 liveness by observed change: clocks offset and set forward or back
    // ---------------------------------------------------------------------------------------

    /** The clock skew of the S13 rules: 60 s, or six lease durations when that is more. */
    private long skewMillis() {
        return Math.max(60_000L, 6 * env.leaseDuration().toMillis());
    }

    /**
     * One S13 round: each relay acquires once, in the order given, with the shared clock advanced
     * by a quarter lease duration before the round (the relays' renew interval); after every call
     * the caller's buckets must be disjoint from every other relay's latest answer.
     */
    private void skewRound(List<SimRelay> order, String what, int round) {
        clock.advanceMillis(Math.max(1, env.leaseDuration().toMillis() / 4));
        for (SimRelay r : order) {
            List<Integer> mine = r.acquire();
            for (SimRelay other : order) {
                if (other != r) {
                    List<Integer> shared = new ArrayList<>(mine);
                    shared.retainAll(other.held);
                    assertThat(shared).as("S13 %s, round %d: buckets %s and %s hold at once (%s vs %s)", what, round,
                            r.id, other.id, mine, other.held).isEmpty();
                }
            }
        }
    }

    private void assertFairShares(List<SimRelay> relays, String what, int round) {
        FairShare shares = FairShare.of(env.bucketCount(), relays.stream().map(r -> r.id).toList());
        Set<Integer> union = new TreeSet<>();
        for (SimRelay r : relays) {
            assertThat(r.held).as("S13 %s, round %d: %s's share", what, round, r.id).hasSize(shares.share(r.id));
            union.addAll(r.held);
        }
        assertThat(union).as("S13 %s, round %d: every bucket held", what, round).containsExactlyElementsOf(allBuckets());
    }

    /**
     * A test of rule S13: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S13", binding = REQUIRED,
            checks = "two relays whose clocks are 60 s apart (each way round) acquire for hundreds of rounds: "
                    + "they converge to fair shares, keep them, and never hold one bucket at once.",
            ifThisFails = "acquire goes through LeaseAcquisition (one instance per store, liveness by observed "
                    + "change); no claim, share or read-back compares this relay's clock with a timestamp "
                    + "another relay wrote; the claim is conditional on the owner and expiry observed.")
    public void required_S13_relaysWithClocksFarApartKeepFairSharesAndNeverShareABucket() throws Exception {
        int rounds = Math.max(200, env.contentionRounds());
        int settle = 12;
        for (long offset : List.of(skewMillis(), -skewMillis())) {
            String what = "peer clock " + (offset > 0 ? "ahead" : "behind") + " by " + Math.abs(offset) + " ms";
            String tag = offset > 0 ? "ahead" : "behind";
            SimRelay a = relay("skew-a-" + tag);
            SimRelay b = relay("skew-b-" + tag, new SkewedClock(clock, offset));
            List<SimRelay> both = List.of(a, b);
            Random random = new Random(13 + offset);
            for (int round = 0; round < rounds; round++) {
                List<SimRelay> order = new ArrayList<>(both);
                Collections.shuffle(order, random);
                skewRound(order, what, round);
                if (round >= settle) {
                    assertFairShares(both, what, round);
                }
            }
            // The next pair starts on a clean table: these two give their leases back by stopping
            // and letting the new pair take over, which the settle rounds allow for.
        }
    }

    /**
     * A test of rule S13: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S13", binding = REQUIRED,
            checks = "a relay whose clock jumps forward, then back, by 60 s mid-run (calls alternating with its "
                    + "peer's) neither takes its peer's buckets nor loses its own.",
            ifThisFails = "expiry is judged by observed change, elapsed time counted on the caller's clock "
                    + "between its own calls (a step back counting as none); keeps and heartbeats always change "
                    + "the stored value (max(stored + 1, ...)); the caller's own read-back and keeps do not "
                    + "depend on other relays' timestamps.")
    public void required_S13_aClockJumpNeitherStealsNorLosesLeases() throws Exception {
        SkewedClock jumpy = new SkewedClock(clock, 0);
        SimRelay a = relay("steady");
        SimRelay b = relay("jumpy", jumpy);
        List<SimRelay> order = List.of(a, b);
        for (int round = 0; round < 12; round++) {
            skewRound(order, "before the jump", round);
        }
        assertFairShares(order, "before the jump", 12);
        List<Integer> aHeld = a.held;
        List<Integer> bHeld = b.held;
        for (long jump : List.of(skewMillis(), -2 * skewMillis(), skewMillis())) {
            jumpy.jump(jump);
            String what = "jumpy's clock moved by " + jump + " ms";
            for (int round = 0; round < 40; round++) {
                skewRound(order, what, round);
                assertThat(a.held).as("S13 %s, round %d: steady keeps its buckets", what, round)
                        .containsExactlyElementsOf(aHeld);
                assertThat(b.held).as("S13 %s, round %d: jumpy keeps its buckets", what, round)
                        .containsExactlyElementsOf(bHeld);
            }
        }
    }

    /**
     * A test of rule S13: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S13", binding = REQUIRED,
            checks = "S13, S6: a relay whose clock is far ahead of or behind a dead relay's takes over the dead "
                    + "relay's buckets exactly one lease duration of its own clock after it first saw their "
                    + "last value, whatever timestamps the dead relay wrote.",
            ifThisFails = "a lease and heartbeat count as expired once unchanged for one lease duration since "
                    + "the caller first observed them, regardless of the expiry stored; claims of a held but "
                    + "stale lease are conditional on the observed owner and expiry, not on expiresAt <= now.")
    public void required_S13_aDeadRelaysBucketsAreTakenOverWithinALeaseDurationOfObservation() throws Exception {
        long lease = env.leaseDuration().toMillis();
        for (long offset : List.of(skewMillis(), -skewMillis())) {
            String tag = offset > 0 ? "ahead" : "behind";
            SimRelay dead = relay("dying-" + tag, new SkewedClock(clock, -offset));
            SimRelay survivor = relay("survivor-" + tag, new SkewedClock(clock, offset));
            List<SimRelay> both = List.of(dead, survivor);
            for (int round = 0; round < 12; round++) {
                skewRound(both, "survivor " + tag, round);
            }
            assertFairShares(both, "survivor " + tag, 12);
            clock.advanceMillis(1);
            dead.acquire(); // its last call
            long seen = clock.millis();
            assertThat(survivor.acquire()).as("survivor (clock %s) right after the last call", tag)
                    .doesNotContainAnyElementsOf(dead.held);
            clock.setMillis(seen + lease - 1);
            assertThat(survivor.acquire()).as("survivor (clock %s) one millisecond before a lease duration of "
                    + "observation", tag).doesNotContainAnyElementsOf(dead.held);
            clock.setMillis(seen + lease);
            assertThat(survivor.acquire()).as("survivor (clock %s) after a lease duration of observation", tag)
                    .containsExactlyElementsOf(allBuckets());
        }
    }

    // ---------------------------------------------------------------------------------------
    // S6 takeover, S7 fairness and stability
    // ---------------------------------------------------------------------------------------

    /**
     * A test of rule S6: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S6", binding = REQUIRED,
            checks = "S6, S13: the buckets of a relay that stops calling pass to the live relays one lease "
                    + "duration (of their own clock) after they first saw its last writes, and not one "
                    + "millisecond earlier.",
            ifThisFails = "acquire goes through LeaseAcquisition with one instance per store (it remembers what "
                    + "each relay observed); a silent relay's heartbeat stops counting once unchanged for one "
                    + "lease duration; the claim of a lease judged expired is conditional on the owner and "
                    + "expiry observed, not on expiresAt <= now.")
    public void required_S6_aStoppedRelaysBucketsAreTakenOverAfterTheLeaseDuration() throws Exception {
        long lease = env.leaseDuration().toMillis();
        SimRelay a = relay("relay-a");
        SimRelay b = relay("relay-b");
        Random random = new Random(6);
        converge("S6", List.of(a, b), random, 6, lease / 10, "two relays");
        long lastCall = clock.millis();
        b.acquire();
        List<Integer> bBuckets = b.held;
        // relay-b stops. relay-a first sees its last writes now; for a lease duration it must not get them.
        assertThat(a.acquire()).as("relay-a right after relay-b's last call").doesNotContainAnyElementsOf(bBuckets);
        clock.setMillis(lastCall + lease - 1);
        assertThat(a.acquire()).as("relay-a before relay-b's leases expire").doesNotContainAnyElementsOf(bBuckets);
        clock.setMillis(lastCall + lease);
        assertThat(a.acquire()).as("relay-a once relay-b's leases expired").containsExactlyElementsOf(allBuckets());
    }

    /**
     * A test of rule S6: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S6", binding = REQUIRED,
            checks = "a lease stops counting at its expiry instant: a relay acquiring exactly then (its own "
                    + "leases unchanged for a lease duration since it wrote them), with a peer alive, gets its "
                    + "fair share afresh and not its expired leases back.",
            ifThisFails = "the answer holds only leases this call kept or claimed (LeaseAcquisition does so), and "
                    + "the read-back keeps only leases with expiresAt > now (strictly), by the caller's own clock.")
    public void required_S6_aLeaseStopsCountingAtItsExpiryInstant() throws Exception {
        long lease = env.leaseDuration().toMillis();
        SimRelay a = relay("relay-a");
        SimRelay b = relay("relay-b");
        long t0 = clock.millis();
        assertThat(a.acquire()).containsExactlyElementsOf(allBuckets());
        assertThat(b.acquire()).as("relay-b's first look").isEmpty();
        clock.setMillis(t0 + lease - 1);
        assertThat(b.acquire()).as("relay-b while relay-a's leases run").isEmpty();
        clock.setMillis(t0 + lease);
        List<Integer> aAtExpiry = a.acquire();
        FairShare shares = FairShare.of(env.bucketCount(), List.of(a.id, b.id));
        assertThat(aAtExpiry).as("relay-a at the instant its leases expired, relay-b alive").hasSize(shares.share(a.id));
        assertThat(b.acquire()).as("relay-b after relay-a took its share").hasSize(shares.share(b.id))
                .doesNotContainAnyElementsOf(aAtExpiry);
    }

    /**
     * A test of rule S7: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S7", binding = REQUIRED,
            checks = "as relays join one at a time (up to one more than there are buckets) and then leave one at "
                    + "a time, the live relays converge within a few rounds to shares that differ by at most "
                    + "one and cover every bucket, and a converged fleet keeps its assignment.",
            ifThisFails = "every relay uses LeasePlan (shares from live heartbeats, preferred ranges, planned "
                    + "claims); stale heartbeats stop counting after one lease duration; released and expired "
                    + "buckets are claimable; an idle round writes nothing that moves a bucket.")
    public void required_S7_fairSharesConvergeAsRelaysJoinAndLeave() throws Exception {
        long lease = env.leaseDuration().toMillis();
        Random random = new Random(7);
        List<SimRelay> live = new ArrayList<>();
        for (int k = 1; k <= env.bucketCount() + 1; k++) {
            live.add(relay(String.format("relay-%02d", random.nextInt(100)) + "-" + k));
            Map<String, List<Integer>> converged = converge("S7", live, random, 6, lease / 20, k + " relays after a join");
            clock.advanceMillis(lease / 20);
            assertThat(round(live, random)).as("S7: stable after %d relays converged", k).isEqualTo(converged);
        }
        while (live.size() > 1) {
            live.remove(random.nextInt(live.size()));
            Map<String, List<Integer>> converged = converge("S7", live, random, 12, lease / 4,
                    live.size() + " relays after one stopped");
            clock.advanceMillis(lease / 4);
            assertThat(round(live, random)).as("S7: stable with %d relays", live.size()).isEqualTo(converged);
        }
    }

    // ---------------------------------------------------------------------------------------
    // R14 takeover under churn
    // ---------------------------------------------------------------------------------------

    /**
     * A test of rule R14: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "R14", binding = REQUIRED,
            checks = "under churn (a peer that dies, then newcomers that each claim their share and die right "
                    + "after, their heartbeats still claiming shares), every bucket reaches the live veteran "
                    + "within two lease durations of losing its last live holder.",
            ifThisFails = "acquire goes through LeaseAcquisition (one instance per store), whose plan gives new "
                    + "buckets only to relays seen renewing and lets a relay take a bucket left claimable for a "
                    + "quarter lease duration; the store's claim writes whatever lease the plan lists, also "
                    + "above the caller's share; nothing is released that the plan keeps.")
    public void required_R14_deadRelaysSharesAndDeadClaimersClaimsReachALiveRelayWithinTwoLeaseDurations()
            throws Exception {
        long lease = env.leaseDuration().toMillis();
        long step = Math.max(1, lease / 4);
        SimRelay veteran = relay("r14-veteran-m");
        SimRelay dying = relay("r14-dying-b");
        converge("R14", List.of(veteran, dying), new Random(14), 6, step, "two relays before the churn");
        UnownedSpans spans = new UnownedSpans(env.bucketCount());
        List<SimRelay> live = new ArrayList<>(List.of(veteran));
        spans.observe(live, clock.millis()); // the dying relay made its last call: its buckets have no live holder
        Map<SimRelay, Integer> calls = new HashMap<>();
        int churnRounds = (int) (4 * lease / step);
        int rounds = churnRounds + (int) (3 * lease / step) + 2;
        for (int round = 0; round < rounds; round++) {
            clock.advanceMillis(step);
            if (round < churnRounds) {
                live.add(relay("r14-young-" + (round % 2 == 0 ? "a" : "z") + round));
            }
            for (SimRelay r : List.copyOf(live)) {
                r.acquire();
                if (r != veteran && calls.merge(r, 1, Integer::sum) == 2) {
                    live.remove(r); // dies right after its second call, with whatever it claimed
                }
                spans.observe(live, clock.millis());
            }
            assertThat(spans.longest()).as("R14, round %d after the first death: %s", round, spans)
                    .isLessThanOrEqualTo(2 * lease);
        }
        assertThat(veteran.held).as("R14: the veteran, alone at the end").containsExactlyElementsOf(allBuckets());
    }

    /** Per bucket, how long it has had no live holder (by the relays' latest answers), and the longest such span. */
    private static final class UnownedSpans {
        private final long[] since;
        private long longest;
        private int longestBucket = -1;

        UnownedSpans(int bucketCount) {
            since = new long[bucketCount];
            Arrays.fill(since, -1);
        }

        void observe(List<SimRelay> live, long now) {
            boolean[] owned = new boolean[since.length];
            for (SimRelay r : live) {
                r.held.forEach(b -> owned[b] = true);
            }
            for (int b = 0; b < since.length; b++) {
                if (!owned[b] && since[b] < 0) {
                    since[b] = now;
                } else if (owned[b]) {
                    since[b] = -1;
                }
                if (since[b] >= 0 && now - since[b] > longest) {
                    longest = now - since[b];
                    longestBucket = b;
                }
            }
        }

        long longest() {
            return longest;
        }

        @Override
        public String toString() {
            return "longest unowned span " + longest + " ms, bucket " + longestBucket;
        }
    }

    // ---------------------------------------------------------------------------------------
    // S8 misconfiguration, S9 no expiry, S10 fidelity, S11 clock, S12 thread safety
    // ---------------------------------------------------------------------------------------

    /**
     * A test of rule S8: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S8", binding = REQUIRED,
            checks = "pending rows in a bucket at or above bucketCount, which the relay can never claim (a "
                    + "writer configured with a larger bucket count), make acquireBucketLeases throw "
                    + "OutboxMisconfigurationException naming the bucket, instead of leaving them unpublished "
                    + "forever.",
            ifThisFails = "acquire goes through LeaseAcquisition.acquire and the store's strayRows probes for "
                    + "rows (or counters) with bucket >= bucketCount; the exception type is "
                    + "OutboxMisconfigurationException, not a generic one the relay would retry.")
    public void required_S8_rowsOutsideTheBucketRangeAreFatal() throws Exception {
        SimRelay a = relay("relay-a");
        write(a.store, List.of(message(env.bucketCount() - 1)));
        assertThat(a.acquire()).as("rows in range are fine").isNotEmpty();
        writeRaw(a.store, message(env.bucketCount()));
        assertThatThrownBy(a::acquire).as("a row in bucket %d, just outside [0, %d)", env.bucketCount(),
                env.bucketCount()).isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining(String.valueOf(env.bucketCount()));

        SimRelay b = relay("relay-b");
        int far = env.bucketCount() * 100 + 7;
        writeRaw(b.store, message(far));
        assertThatThrownBy(b::acquire).as("rows in buckets %d and %d, outside [0, %d)", env.bucketCount(), far,
                env.bucketCount()).isInstanceOf(OutboxMisconfigurationException.class);
    }

    /**
     * A test of rule S8: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S8", binding = REQUIRED,
            checks = "S8, the other side: a pending row in a negative bucket (a foreign writer with a signed "
                    + "hash, a hand-written fix) makes acquireBucketLeases throw "
                    + "OutboxMisconfigurationException naming the bucket. Needs the fixture's insertRawRow.",
            ifThisFails = "the store's strayRows looks below 0 as well as at and above bucketCount (an index "
                    + "seek on each side); the lease read-back and the plan never treat a negative bucket as "
                    + "bucket 0.")
    public void required_S8_rowsBelowBucketZeroAreFatal() throws Exception {
        SimRelay a = relay("relay-a");
        write(a.store, List.of(message(0)));
        assertThat(a.acquire()).as("rows in range are fine").isNotEmpty();
        writeRaw(a.store, message(0), -1);
        assertThatThrownBy(a::acquire).as("a row in bucket -1, just below [0, %d)", env.bucketCount())
                .isInstanceOf(OutboxMisconfigurationException.class).hasMessageContaining("-1");

        SimRelay b = relay("relay-b");
        writeRaw(b.store, message(1), Integer.MIN_VALUE);
        assertThatThrownBy(b::acquire).as("rows in buckets -1 and %d", Integer.MIN_VALUE)
                .isInstanceOf(OutboxMisconfigurationException.class);
    }

    /**
     * A test of rule S9: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S9", binding = REQUIRED,
            checks = "pending rows never expire: after a long time, with leases long gone, they are still there "
                    + "in order.",
            ifThisFails = "no TTL attribute or index on pending messages, no cleanup job, no filter on createdAt "
                    + "in nextBatch.")
    public void required_S9_pendingRowsNeverExpire() throws Exception {
        int bucket = env.bucketCount() - 1;
        List<OutboxMessage> pending = messages(bucket, 3);
        write(store(), pending);
        SimRelay a = relay("relay-a");
        a.acquire();
        clock.advance(Duration.ofDays(400));
        a.acquire();
        assertThat(readIds(store().nextBatch(bucket, 10))).as("rows after 400 days").containsExactlyElementsOf(ids(pending));
        assertThat(store().bucketsWithPending(allBuckets())).as("pending buckets after 400 days").containsExactly(bucket);
    }

    /**
     * A test of rule S10: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S10", binding = REQUIRED,
            checks = "topic, key, value (null and empty are different), headers (order, repeats, null and empty "
                    + "values, non-ASCII names), partition, message id and creation time (milliseconds) come "
                    + "back exactly as enqueued.",
            ifThisFails = "nullable binary columns/attributes for key and value (an empty binary must not become "
                    + "null, e.g. DynamoDB refuses empty binary sets but not empty binary values); headers "
                    + "stored with OutboxHeaderCodec or in an order-preserving structure; createdAt stored with "
                    + "millisecond precision in UTC; partition stored as nullable.")
    public void required_S10_everyFieldRoundTripsExactly() throws Exception {
        clock.advanceMillis(123);
        byte[] allBytes = new byte[256];
        for (int i = 0; i < 256; i++) {
            allBytes[i] = (byte) i;
        }
        List<OutboxHeader> headers = List.of(OutboxHeader.ofUtf8("trace", "t-1"), OutboxHeader.of("dup", new byte[] {1}),
                OutboxHeader.of("dup", null), OutboxHeader.of("dup", new byte[0]), OutboxHeader.of("", allBytes),
                OutboxHeader.of("größe-名前-\uD83D\uDE00", new byte[] {0}));
        String longTopic = "t".repeat(OutboxMessage.MAX_TOPIC_LENGTH);
        List<OutboxMessage> originals = List.of(
                StoredMessages.rebuild(UUID.randomUUID(), 1, TOPIC, null, null, List.of(), null, clock.instant()),
                StoredMessages.rebuild(UUID.randomUUID(), 1, TOPIC, new byte[0], new byte[0], List.of(), null,
                        clock.instant().plusMillis(1)),
                StoredMessages.rebuild(UUID.randomUUID(), 1, longTopic, allBytes.clone(), allBytes.clone(), headers, 0,
                        clock.instant().plusMillis(2)),
                StoredMessages.rebuild(UUID.randomUUID(), 1, "a.b_c-D", new byte[] {0}, null, headers.subList(1, 3),
                        Integer.MAX_VALUE, Instant.parse("1999-12-31T23:59:59.999Z")),
                StoredMessages.rebuild(UUID.randomUUID(), 1, TOPIC, null, new byte[] {-1}, List.of(), 17,
                        Instant.parse("2106-02-07T06:28:16.001Z")));
        write(store(), originals);
        List<Pending> read = store().nextBatch(1, 10);
        assertThat(read).hasSize(originals.size());
        for (int i = 0; i < originals.size(); i++) {
            OutboxMessage expected = originals.get(i);
            OutboxMessage actual = read.get(i).message();
            assertThat(actual.messageId()).as("message id of message %d (enqueue order kept?)", i)
                    .isEqualTo(expected.messageId());
            assertThat(actual.topic()).as("topic of message %d", i).isEqualTo(expected.topic());
            assertThat(actual.key()).as("key of message %d", i).isEqualTo(expected.key());
            assertThat(actual.value()).as("value of message %d", i).isEqualTo(expected.value());
            assertThat(actual.headers()).as("headers of message %d", i).containsExactlyElementsOf(expected.headers());
            assertThat(actual.partition()).as("partition of message %d", i).isEqualTo(expected.partition());
            assertThat(actual.createdAt()).as("createdAt of message %d", i).isEqualTo(expected.createdAt());
            assertThat(actual.bucket()).as("bucket of message %d", i).isEqualTo(1);
            assertThat(actual).as("message %d round-trips exactly", i).isEqualTo(expected);
        }
    }

    /**
     * A test of rule S10: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S10", binding = REQUIRED,
            checks = "a message whose payload is exactly the largest the store declares is accepted and "
                    + "round-trips, wherever the bytes are: all in the value, all in the key, or all in one "
                    + "header; each with the longest topic and an explicit partition, so the store's own fields "
                    + "take their largest size too.",
            ifThisFails = "the declared limit matches the real one (column types, document or item size minus "
                    + "the store's own fields at their largest); no field has a smaller limit of its own (a key "
                    + "column of 64 KiB, say); the limit compares StoredMessages.payloadSize(message) with >, "
                    + "not >=.")
    public void required_S10_theLargestDeclaredPayloadRoundTripsInEveryField() throws Exception {
        long limit = maxPayloadBytes();
        String topic = "t".repeat(OutboxMessage.MAX_TOPIC_LENGTH);
        int emptyHeaders = 5; // the encoded empty header list
        List<OutboxMessage> largest = List.of(
                StoredMessages.rebuild(UUID.randomUUID(), 0, topic, null, bytes(limit - emptyHeaders), List.of(),
                        Integer.MAX_VALUE, clock.instant()),
                StoredMessages.rebuild(UUID.randomUUID(), 0, topic, bytes(limit - emptyHeaders), null, List.of(),
                        Integer.MAX_VALUE, clock.instant()),
                // one header "h": 5 + (4 + 1) + (4 + n) bytes of encoding
                StoredMessages.rebuild(UUID.randomUUID(), 0, topic, null, null,
                        List.of(OutboxHeader.of("h", bytes(limit - emptyHeaders - 9))), Integer.MAX_VALUE,
                        clock.instant()));
        String[] where = {"the value", "the key", "one header"};
        for (int i = 0; i < largest.size(); i++) {
            OutboxMessage m = largest.get(i);
            assertThat(StoredMessages.payloadSize(m)).isEqualTo(limit);
            write(store(), List.of(m));
            List<Pending> read = store().nextBatch(0, 1);
            assertThat(read).as("the largest payload in %s", where[i]).hasSize(1);
            assertThat(read.get(0).message()).as("the largest payload in %s round-trips exactly", where[i])
                    .isEqualTo(m);
            KitChecks.published(store(), 0, read);
        }
    }

    private static byte[] bytes(long length) {
        if (length < 0 || length > Integer.MAX_VALUE - 16) {
            throw new IllegalStateException("maxPayloadBytes() cannot be tested: a field of " + length + " bytes");
        }
        byte[] b = new byte[(int) length];
        new Random(length).nextBytes(b);
        return b;
    }

    /**
     * A test of rule S10: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S10", binding = REQUIRED,
            checks = "createdAt is an instant, not a local time: it round-trips while the writer and the reader "
                    + "run with different default time zones.",
            ifThisFails = "createdAt is stored as epoch milliseconds or a zone-aware type, never converted "
                    + "through the JVM's or the session's default time zone.")
    public void required_S10_createdAtIgnoresTheDefaultTimeZone() throws Exception {
        TimeZone original = TimeZone.getDefault();
        OutboxMessage m = message(2);
        try {
            TimeZone.setDefault(TimeZone.getTimeZone("America/New_York"));
            write(store(), List.of(m));
            TimeZone.setDefault(TimeZone.getTimeZone("Asia/Tokyo"));
            List<Pending> read = store().nextBatch(2, 1);
            assertThat(read).hasSize(1);
            assertThat(read.get(0).message().createdAt()).as("createdAt written in New York, read in Tokyo")
                    .isEqualTo(m.createdAt());
        } finally {
            TimeZone.setDefault(original);
        }
    }

    /**
     * A test of rule S10: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S10", binding = REQUIRED,
            checks = "one byte more than the declared limit fails at enqueue with a clear error, and nothing of "
                    + "that transaction is written, not even its other, small messages.",
            ifThisFails = "the enqueue helper calls StoredMessages.requirePayloadAtMost(message, limit) for "
                    + "every message before it writes anything; the error propagates (as "
                    + "OutboxPayloadTooLargeException or its cause) so the caller's transaction rolls back.")
    public void required_S10_oneByteOverTheLimitFailsAndWritesNothing() throws Exception {
        OutboxMessage small = message(0);
        OutboxMessage tooLarge = StoredMessages.rebuild(UUID.randomUUID(), 1, TOPIC, null,
                bytes(maxPayloadBytes() + 1 - 5), List.of(), null, clock.instant());
        Throwable thrown = null;
        try {
            write(store(), List.of(small, tooLarge));
        } catch (Throwable t) {
            thrown = t;
        }
        assertThat(thrown).as("enqueue of a message one byte over the limit").isNotNull();
        assertThat(KitThreads.rootCauseOfType(thrown, OutboxPayloadTooLargeException.class))
                .as("an OutboxPayloadTooLargeException in the cause chain of %s", thrown).isNotNull();
        assertThat(store().bucketsWithPending(allBuckets())).as("nothing written").isEmpty();
    }

    /**
     * A test of rule S11: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S11", binding = REQUIRED,
            checks = "lease time comes from the injected clock only. Leases behave by the kit's clock set "
                    + "decades away from the machine's time, in both directions.",
            ifThisFails = "no System.currentTimeMillis(), Instant.now(), database now() or server-side time in "
                    + "lease logic; expiry and heartbeats are stored as epoch milliseconds computed from the "
                    + "clock given to the store.")
    public void required_S11_leaseTimeComesFromTheInjectedClock() throws Exception {
        long lease = env.leaseDuration().toMillis();
        // The past first: moving forward, everything written in 2001 has long expired by 2101.
        for (Instant at : List.of(Instant.parse("2001-01-01T00:00:00Z"), Instant.parse("2101-01-01T00:00:00Z"))) {
            clock.setMillis(at.toEpochMilli());
            SimRelay a = relay("relay-a-" + at.getEpochSecond());
            SimRelay b = relay("relay-b-" + at.getEpochSecond());
            a.acquire(); // its first look: the leases of the previous leg have not expired to it yet
            long t = at.toEpochMilli() + lease;
            clock.setMillis(t);
            assertThat(a.acquire()).as("relay-a at %s", at).containsExactlyElementsOf(allBuckets());
            assertThat(b.acquire()).as("relay-b's first look at %s", at).isEmpty();
            clock.setMillis(t + lease - 1);
            assertThat(b.acquire()).as("relay-b just before expiry at %s", at).isEmpty();
            clock.setMillis(t + lease);
            assertThat(b.acquire()).as("relay-b at expiry at %s", at).containsExactlyElementsOf(allBuckets());
        }
    }

    /**
     * A test of rule S12: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "S12", binding = STOCHASTIC,
            checks = "one store instance serves concurrent callers: several threads drain their own buckets "
                    + "while others acquire and renew leases, all through the same instance.",
            ifThisFails = "no shared mutable state without synchronization (a shared JDBC connection, a "
                    + "non-thread-safe cache, reused statement objects); each call borrows its own connection "
                    + "or session.")
    public void stochastic_S12_oneStoreInstanceServesConcurrentCallers() throws Exception {
        OutboxStore shared = store();
        int buckets = Math.min(4, env.bucketCount());
        Map<Integer, List<UUID>> expected = new HashMap<>();
        for (int b = 0; b < buckets; b++) {
            List<OutboxMessage> ms = messages(b, 60);
            for (int i = 0; i < ms.size(); i += 10) {
                write(shared, ms.subList(i, i + 10));
            }
            expected.put(b, ids(ms));
        }
        Map<Integer, List<UUID>> drained = new ConcurrentHashMap<>();
        List<Callable<Void>> tasks = new ArrayList<>();
        for (int b = 0; b < buckets; b++) {
            int bucket = b;
            tasks.add(() -> {
                drained.put(bucket, ids(KitChecks.drain(shared, bucket, 7, expected.get(bucket).size())));
                return null;
            });
        }
        for (String id : List.of("relay-x", "relay-y")) {
            tasks.add(() -> {
                SimRelay r = new SimRelay(id, shared, env);
                for (int i = 0; i < 30; i++) {
                    r.acquire();
                    if (shared.leaseRenewal().isPresent()) {
                        r.held = r.renew();
                    }
                }
                return null;
            });
        }
        runConcurrently(tasks);
        for (int b = 0; b < buckets; b++) {
            assertThat(drained.get(b)).as("bucket %d drained concurrently", b).containsExactlyElementsOf(expected.get(b));
        }
    }

    // ---------------------------------------------------------------------------------------
    // E4 enqueue path and discovery
    // ---------------------------------------------------------------------------------------

    /**
     * A test of rule E4: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "E4", binding = REQUIRED,
            checks = "an enqueue whose transaction rolls back leaves nothing behind; a later committed enqueue "
                    + "shows only its own messages.",
            ifThisFails = "the enqueue helper writes through the caller's transaction (connection, session, "
                    + "transact-write request) and never commits on its own or uses a separate connection.")
    public void required_E4_aRolledBackEnqueueLeavesNothing() throws Exception {
        writeAndRollBack(store(), List.of(message(0), message(1), message(0)));
        assertThat(store().bucketsWithPending(allBuckets())).as("after rollback").isEmpty();
        assertThat(store().nextBatch(0, 10)).as("bucket 0 after rollback").isEmpty();
        OutboxMessage committed = message(1);
        write(store(), List.of(committed));
        assertThat(store().bucketsWithPending(allBuckets())).as("after one committed enqueue").containsExactly(1);
        assertThat(readIds(store().nextBatch(1, 10))).as("bucket 1 holds only the committed message").containsExactly(committed.messageId());
    }

    /**
     * A test of rule E5: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "E5", binding = STOCHASTIC,
            checks = "writers enqueueing concurrently, each with its own store instance, into one bucket lose "
                    + "nothing, and each writer's messages keep their order.",
            ifThisFails = "the per-bucket sequence is reserved with one atomic increment (an auto-increment "
                    + "column, $inc, ADD), never computed as \"max + 1\" or cached; no unique-key collision is "
                    + "swallowed.")
    public void stochastic_E5_concurrentWritersLoseNothingAndKeepTheirOrder() throws Exception {
        int writers = env.contentionRelays();
        int perWriter = 60;
        List<List<OutboxMessage>> written = new ArrayList<>();
        List<OutboxStore> stores = new ArrayList<>();
        for (int w = 0; w < writers; w++) {
            written.add(messages(3, perWriter));
            stores.add(openStore());
        }
        List<Callable<Void>> tasks = new ArrayList<>();
        for (int w = 0; w < writers; w++) {
            OutboxStore s = stores.get(w);
            List<OutboxMessage> mine = written.get(w);
            tasks.add(() -> {
                for (OutboxMessage m : mine) {
                    write(s, List.of(m));
                }
                return null;
            });
        }
        runConcurrently(tasks);
        List<UUID> drained = ids(drain(store(), 3, writers * perWriter));
        assertThat(drained).as("messages of %d concurrent writers", writers).doesNotHaveDuplicates()
                .hasSize(writers * perWriter);
        for (int w = 0; w < writers; w++) {
            List<UUID> mine = ids(written.get(w));
            assertThat(drained.stream().filter(mine::contains).toList()).as("writer %d's messages in its order", w)
                    .containsExactlyElementsOf(mine);
        }
    }

    /**
     * A test of rule discovery: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "discovery", binding = REQUIRED,
            checks = "Discovery: the store's provider is found by name through java.util.ServiceLoader, and the "
                    + "store it opens works on this test's storage. * It also refuses an unknown setting.",
            ifThisFails = "the provider is registered in META-INF/services/io.outbox.spi.OutboxStoreProvider "
                    + "(with @AutoService(OutboxStoreProvider.class)); name() returns the documented name; "
                    + "create accepts the documented settings.")
    public void required_discovery_providerIsFoundByName() throws Exception {
        OutboxStoreProvider provider = OutboxStores.provider(providerName());
        assertThat(provider.name()).isEqualTo(providerName());
        OutboxMessage m = message(env.bucketCount() - 1);
        write(store(), List.of(m));
        OutboxStore opened = fixture("OutboxStores.open(providerName(), providerConfig())",
                () -> OutboxStores.open(providerName(), providerConfig()));
        try {
            OutboxStore discovered = BoundedCalls.bounded(OutboxStore.class, opened, env.callTimeout(), CALL_TIMEOUT);
            assertThat(discovered.bucketsWithPending(allBuckets()))
                    .as("the store opened by name sees this test's storage").containsExactly(m.bucket());
        } finally {
            if (opened instanceof AutoCloseable closeable) {
                fixture("close() of the store opened by name", () -> {
                    closeable.close();
                    return null;
                });
            }
        }
        Map<String, String> misspelt = new HashMap<>(providerConfig());
        misspelt.put("no.such.setting", "x");
        assertThatThrownBy(() -> fixture("OutboxStores.open with a misspelt setting",
                () -> OutboxStores.open(providerName(), misspelt)))
                .as("an unknown setting is refused (validate with OutboxStoreConfig.parse)")
                .isInstanceOf(OutboxMisconfigurationException.class).hasMessageContaining("no.such.setting");
    }

    // ---------------------------------------------------------------------------------------
    // C1 renewal, C2 pending metrics, C3 release
    // ---------------------------------------------------------------------------------------

    /** The capability an accessor of the store returns, or the test skipped with the reason. */
    private static <T> T assumeCapability(Optional<T> capability, String name, String rule) {
        assumeTrue(capability.isPresent(), "the store offers no " + name + " (" + rule + "): its accessor is empty; "
                + "optional");
        return capability.get();
    }

    /** A handle no store makes: an entry carrying it was not read by the store under test. */
    private record ForeignHandle(UUID messageId) {
    }

    /**
     * A test of rule C1: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "C1", binding = OPTIONAL,
            checks = "renewal extends the caller's unexpired leases and refreshes its heartbeat: a peer can take "
                    + "neither the buckets nor a share while the caller keeps renewing.",
            ifThisFails = "renewal updates the heartbeat; the renewal write is conditional on owner = me and "
                    + "expiry > now and sets expiry to max(expiry, now + duration).")
    public void optional_C1_renewalExtendsLeasesAndRefreshesTheHeartbeat() throws Exception {
        assumeCapability(store().leaseRenewal(), "LeaseRenewal", "C1");
        long lease = env.leaseDuration().toMillis();
        SimRelay a = relay("relay-a");
        a.acquire();
        for (int i = 0; i < 3; i++) {
            clock.advanceMillis(lease - 1);
            assertThat(a.renew()).as("renewal %d", i).containsExactlyElementsOf(allBuckets());
        }
        SimRelay b = relay("relay-b");
        assertThat(b.acquire()).as("relay-b while relay-a renews").isEmpty();
    }

    /**
     * A test of rule C1: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "C1", binding = OPTIONAL,
            checks = "renewal reports a lease as lost once it expired or another relay took it, and does not "
                    + "take it back.",
            ifThisFails = "renewal only touches leases with owner = me and expiry > now; it returns only the "
                    + "buckets its conditional writes succeeded on.")
    public void optional_C1_renewalReportsLostLeases() throws Exception {
        assumeCapability(store().leaseRenewal(), "LeaseRenewal", "C1");
        long lease = env.leaseDuration().toMillis();
        SimRelay a = relay("relay-a");
        SimRelay b = relay("relay-b");
        a.acquire();
        assertThat(b.acquire()).as("relay-b's first look").isEmpty();
        clock.advanceMillis(lease);
        assertThat(a.renew()).as("renewal at expiry").isEmpty();
        // The renewal refreshed relay-a's heartbeat: relay-b takes its own share of the expired leases.
        assertThat(b.acquire()).as("relay-b after relay-a's leases expired")
                .hasSize(FairShare.of(env.bucketCount(), List.of(a.id, b.id)).share(b.id));
        assertThat(a.renew()).as("renewal after relay-b took over").isEmpty();
    }

    /**
     * A test of rule C1: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "C1", binding = OPTIONAL,
            checks = "a renewal with the clock set back never shortens a lease.",
            ifThisFails = "the renewal sets expiry to max(stored expiry, now + duration).")
    public void optional_C1_renewalNeverShortensALease() throws Exception {
        assumeCapability(store().leaseRenewal(), "LeaseRenewal", "C1");
        long lease = env.leaseDuration().toMillis();
        SimRelay a = relay("relay-a");
        SimRelay b = relay("relay-b");
        long t0 = clock.millis();
        a.acquire();
        assertThat(b.acquire()).as("relay-b's first look").isEmpty();
        clock.setMillis(t0 - lease / 3);
        assertThat(a.renew()).as("renewal with the clock set back").containsExactlyElementsOf(allBuckets());
        clock.setMillis(t0 + lease - 1);
        assertThat(b.acquire()).as("relay-b: the renewal with the clock set back changed relay-a's leases").isEmpty();
        assertThat(a.renew()).as("relay-a, its clock back to normal: the renewal did not shorten its leases")
                .containsExactlyElementsOf(allBuckets());
    }

    /**
     * A test of rule C1: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "C1", binding = OPTIONAL,
            checks = "a relay that only renews (during a long publish, for two lease durations) still counts as "
                    + "live: every renewal changes its heartbeat, so a joining relay's arrival shrinks the others' "
                    + "shares as it should.",
            ifThisFails = "renewal writes the relay's heartbeat too, to a new value each time "
                    + "(max(stored + 1, now)), never a constant.")
    public void optional_C1_renewalKeepsTheRelayCountedAsLive() throws Exception {
        assumeCapability(store().leaseRenewal(), "LeaseRenewal", "C1");
        long lease = env.leaseDuration().toMillis();
        SimRelay a = relay("relay-a");
        SimRelay b = relay("relay-b");
        converge("C1", List.of(a, b), new Random(11), 6, lease / 10, "two relays");
        for (int i = 0; i < 5; i++) {
            clock.advanceMillis(lease / 2);
            a.acquire();
            assertThat(b.renew()).as("relay-b renewing, step %d", i).isEqualTo(b.held);
        }
        SimRelay c = relay("relay-c");
        c.acquire();
        FairShare shares = FairShare.of(env.bucketCount(), List.of(a.id, b.id, c.id));
        assertThat(a.acquire()).as("relay-a's share with relay-b (renewing only) and relay-c alive")
                .hasSize(shares.share(a.id));
    }

    /**
     * A test of rule C2: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "C2", binding = OPTIONAL,
            checks = "the pending metrics count every pending message in every bucket and name the oldest "
                    + "creation time; an empty store reports zero and no time.",
            ifThisFails = "the count is over all buckets, not just leased ones; the minimum is over createdAt in "
                    + "milliseconds; deleted rows are not counted.")
    public void optional_C2_pendingMetricsCountEveryBucketAndFindTheOldest() throws Exception {
        PendingMetrics metrics = assumeCapability(store().pendingMetrics(), "PendingMetrics", "C2");
        Duration timeout = Duration.ofSeconds(10);
        assertThat(metrics.pendingMetrics(timeout)).isEqualTo(new PendingSnapshot(0, null));
        OutboxMessage newest = message(1);
        clock.advanceMillis(-5_000);
        OutboxMessage oldest = message(0);
        clock.advanceMillis(2_000);
        OutboxMessage middle = message(env.bucketCount() - 1);
        write(store(), List.of(newest, oldest, middle));
        assertThat(metrics.pendingMetrics(timeout)).as("three messages in three buckets")
                .isEqualTo(new PendingSnapshot(3, oldest.createdAt()));
        drain(store(), 0, 10);
        assertThat(metrics.pendingMetrics(timeout)).as("after bucket 0 was drained")
                .isEqualTo(new PendingSnapshot(2, middle.createdAt()));
        clock.advanceMillis(-10_000);
        OutboxMessage olderBehind = message(1);
        write(store(), List.of(olderBehind));
        assertThat(metrics.pendingMetrics(timeout)).as("the oldest is second in its bucket, not at its head")
                .isEqualTo(new PendingSnapshot(3, olderBehind.createdAt()));
    }

    /**
     * A test of rule C3: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "C3", binding = OPTIONAL,
            checks = "a relay that releases its leases on a graceful stop hands its buckets over at once, and "
                    + "its heartbeat no longer counts.",
            ifThisFails = "release clears the owner of every lease the relay holds and deletes its heartbeat row.")
    public void optional_C3_releaseHandsBucketsOverAtOnce() throws Exception {
        assumeCapability(store().leaseRelease(), "LeaseRelease", "C3");
        SimRelay a = relay("relay-a");
        SimRelay b = relay("relay-b");
        converge("C3", List.of(a, b), new Random(33), 6, env.leaseDuration().toMillis() / 10, "two relays");
        a.store.leaseRelease().orElseThrow().releaseBucketLeases(a.id);
        assertThat(b.acquire()).as("relay-b right after relay-a released").containsExactlyElementsOf(allBuckets());
    }

    /**
     * A test of rule C3: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "C3", binding = OPTIONAL,
            checks = "release is fenced by owner: leases another relay took over are left alone.",
            ifThisFails = "the release write's condition includes owner = the releasing relay.")
    public void optional_C3_releaseIsFencedByOwner() throws Exception {
        assumeCapability(store().leaseRelease(), "LeaseRelease", "C3");
        SimRelay a = relay("relay-a");
        SimRelay b = relay("relay-b");
        a.acquire();
        assertThat(b.acquire()).as("relay-b's first look").isEmpty();
        clock.advance(env.leaseDuration());
        assertThat(b.acquire()).as("relay-b after relay-a's leases expired").containsExactlyElementsOf(allBuckets());
        a.store.leaseRelease().orElseThrow().releaseBucketLeases(a.id);
        SimRelay c = relay("relay-c");
        assertThat(c.acquire()).as("relay-c: relay-b's leases survived relay-a's release").isEmpty();
        assertThat(b.acquire()).as("relay-b after relay-c joined keeps its share")
                .hasSize(FairShare.of(env.bucketCount(), List.of(b.id, c.id)).share(b.id));
    }

    /**
     * A test of rule C5: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "C5", binding = OPTIONAL,
            checks = "the read ahead keeps nextBatch's byte budget (S1) for the messages after the batch in "
                    + "flight, which counts against nothing: the first of them always, alone when over the budget.",
            ifThisFails = "the budget is applied to the rows left after the exclusion, not to the rows of the "
                    + "batch in flight; the read stops at the first message the budget refuses.")
    public void optional_C5_readAheadKeepsTheByteBudget() throws Exception {
        ReadAhead ahead = assumeCapability(store().readAhead(), "ReadAhead", "C5");
        List<OutboxMessage> sized = List.of(sized(5, 0, 400, 0), sized(5, 0, 400, 0), sized(5, 8, 100, 1),
                sized(5, 0, 100, 0), sized(5, 0, 3_000, 0));
        enqueueEach(sized);
        long[] bytes = sized.stream().mapToLong(BatchBytes::of).toArray();
        List<Pending> inFlight = store().nextBatch(5, 2, Long.MAX_VALUE);
        assertThat(readIds(ahead.nextBatchExcluding(5, inFlight, 10, bytes[2] + bytes[3])))
                .as("read ahead within the bytes of messages 2 and 3").containsExactlyElementsOf(ids(sized.subList(2, 4)));
        assertThat(readIds(ahead.nextBatchExcluding(5, inFlight, 10, bytes[2] + bytes[3] - 1)))
                .as("one byte short").containsExactlyElementsOf(ids(sized.subList(2, 3)));
        List<Pending> twoAndThree = ahead.nextBatchExcluding(5, inFlight, 10, bytes[2] + bytes[3]);
        KitChecks.published(store(), 5, inFlight);
        assertThat(readIds(ahead.nextBatchExcluding(5, twoAndThree, 10, 1)))
                .as("read ahead over a budget of 1 byte: the message of %d bytes alone", bytes[4])
                .containsExactlyElementsOf(ids(sized.subList(4, 5)));
        assertThatThrownBy(() -> ahead.nextBatchExcluding(5, List.of(), 10, 0)).as("maxBytes 0")
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxBytes");
    }

    /**
     * A test of rule C5: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "C5", binding = OPTIONAL,
            checks = "the read ahead returns what nextBatch would return with the batch in flight deleted, while "
                    + "that batch is still pending, and markPublished deletes the older batch and the one read "
                    + "ahead each alone.",
            ifThisFails = "the query leaves out the row ids of inFlight (id NOT IN (...)) in the order and limit "
                    + "of nextBatch; ids no longer pending change nothing; an empty inFlight is nextBatch; "
                    + "markPublished accepts a batch that is not the latest one read; arguments are checked "
                    + "with StoreArguments.")
    public void optional_C5_readAheadLeavesOutTheBatchInFlight() throws Exception {
        ReadAhead ahead = assumeCapability(store().readAhead(), "ReadAhead", "C5");
        List<OutboxMessage> three = new ArrayList<>();
        for (int i = 0; i < 25; i++) {
            three.add(message(3));
            if (i % 5 == 0) {
                write(store(), List.of(message(4)));
            }
        }
        write(store(), three);
        assertThat(readIds(ahead.nextBatchExcluding(3, List.of(), 10))).as("nothing in flight: nextBatch(3, 10)")
                .containsExactlyElementsOf(ids(three.subList(0, 10)));
        List<Pending> first = store().nextBatch(3, 10);
        List<Pending> second = ahead.nextBatchExcluding(3, first, 10);
        assertThat(readIds(second)).as("read ahead of messages 0-9: messages 10-19 of bucket 3")
                .containsExactlyElementsOf(ids(three.subList(10, 20)));
        assertThat(readIds(ahead.nextBatchExcluding(3, second, 10)))
                .as("read ahead of messages 10-19 while 0-9 are still pending: 0-9 (left out, not read after)")
                .containsExactlyElementsOf(ids(three.subList(0, 10)));
        KitChecks.published(store(), 3, first);
        assertThat(readIds(ahead.nextBatchExcluding(3, first, 10))).as("read ahead of a batch already deleted")
                .containsExactlyElementsOf(ids(three.subList(10, 20)));
        assertThat(readIds(ahead.nextBatchExcluding(3, second, 10))).as("read ahead of messages 10-19 after 0-9 were "
                + "deleted").containsExactlyElementsOf(ids(three.subList(20, 25)));
        KitChecks.published(store(), 3, second);
        assertThat(readIds(store().nextBatch(3, 100))).as("after deleting the batch read ahead")
                .containsExactlyElementsOf(ids(three.subList(20, 25)));
        assertThat(store().nextBatch(4, 100)).as("bucket 4 untouched").hasSize(5);
        assertThatThrownBy(() -> ahead.nextBatchExcluding(-1, List.of(), 10)).as("a negative bucket")
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ahead.nextBatchExcluding(3, List.of(), 0)).as("maxCount 0")
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxCount");
        assertThatThrownBy(() -> ahead.nextBatchExcluding(3, null, 10)).as("a null inFlight")
                .isInstanceOf(NullPointerException.class);
    }

    /**
     * A test of rule C6: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "C6", binding = OPTIONAL,
            checks = "the lease table shows, for every bucket, the owner and expiry the relays' acquires wrote, "
                    + "and every relay's heartbeat, as stored: an expired lease keeps its owner, a bucket never "
                    + "leased is free; the read writes nothing.",
            ifThisFails = "leaseTable reads the acquire recipe's snapshot (LeaseStore.readSnapshot) and builds the "
                    + "table with LeaseTable.of(clock.millis(), ...) from the store's own clock; it writes no "
                    + "heartbeat and creates no lease row.")
    public void optional_C6_leaseTableShowsOwnersExpiriesAndHeartbeats() throws Exception {
        LeaseView view = assumeCapability(store().leaseView(), "LeaseView", "C6");
        int n = env.bucketCount();
        LeaseTable empty = view.leaseTable(n);
        assertThat(empty.heartbeats()).as("C6: no relay has called yet").isEmpty();
        assertThat(empty.leases()).as("C6: every bucket free before any acquire").hasSize(n)
                .allSatisfy(lease -> assertThat(lease.owner()).isNull());
        assertThat(empty.readAtMillis()).as("C6: read at the store's clock (S11)").isEqualTo(clock.millis());
        SimRelay a = relay("relay-a");
        SimRelay b = relay("relay-b");
        converge("C6", List.of(a, b), new Random(66), 6, env.leaseDuration().toMillis() / 10, "two relays");
        long afterAcquires = clock.millis();
        LeaseTable table = view.leaseTable(n);
        assertThat(table.heartbeats().keySet()).as("C6: the relays alive").containsExactly(a.id, b.id);
        assertThat(table.heartbeats().values()).as("C6: heartbeats written by the store's clock")
                .allSatisfy(seen -> assertThat(seen).isBetween(START.toEpochMilli(), afterAcquires + 1_000));
        for (int bucket = 0; bucket < n; bucket++) {
            BucketLease lease = table.leases().get(bucket);
            String owner = a.held.contains(bucket) ? a.id : b.held.contains(bucket) ? b.id : null;
            assertThat(lease.bucket()).as("C6: the lease at index %d", bucket).isEqualTo(bucket);
            assertThat(lease.owner()).as("C6: bucket %d's owner", bucket).isEqualTo(owner);
            assertThat(lease.expiresAtMillis()).as("C6: bucket %d's expiry", bucket)
                    .isGreaterThan(afterAcquires).isLessThanOrEqualTo(afterAcquires + env.leaseDuration().toMillis() + 1);
        }
        assertThat(view.leaseTable(n)).as("C6: a second read, nothing changed in between: the read wrote nothing")
                .isEqualTo(table);
        assertThat(view.leaseTable(1).leases()).as("C6: a smaller bucket count shows only its buckets")
                .containsExactly(table.leases().get(0));
        clock.advance(env.leaseDuration().plusSeconds(1));
        LeaseTable later = view.leaseTable(n);
        assertThat(later.leases()).as("C6: expired leases keep their owners, as stored").isEqualTo(table.leases());
        assertThat(later.readAtMillis()).as("C6: read at the store's clock").isEqualTo(clock.millis());
        assertThat(later.leases()).allSatisfy(lease -> assertThat(lease.isClaimable(later.readAtMillis())).isTrue());
        assertThatThrownBy(() -> view.leaseTable(0)).as("C6: bucket count 0")
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bucketCount");
    }

}
