package io.outbox.tck;

import static io.outbox.tck.KitRule.Binding.REQUIRED;
import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.InboxRetention;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The inbox compatibility kit: one test per inbox rule (I1: the marker commits with the
 * consumer's business effect, exactly one first delivery per id and consumer under any
 * concurrency; I2: markers leave only through retention older than the window). Every store's
 * inbox passes it.
 *
 * <h2>Using it</h2>
 * Extend this class in the store's test sources and implement {@link #open}: it returns an
 * {@link InboxFixture} over the test's storage with its own connection pool or client, whose
 * {@link InboxFixture#deliver deliver} runs one consumer transaction the way an application would:
 * <pre>{@code
 * begin a transaction on the fixture's own connection / session / transaction items
 *   first = inbox.firstDelivery(tx, consumer, messageId)
 *   if (first) write one business effect for (consumer, messageId) in the same transaction
 *   hold the transaction open for holdOpen
 * commit, or roll back
 * return first
 * }</pre>
 * Test names say how binding each test is and which rule it guards ({@code required_I1_...}).
 * Time for markers and retention comes from a {@link TckClock} the kit moves; only the
 * concurrency tests take wall-clock time, bounded by {@link #concurrencyTimeout()}.
 *
 * <p>Each test carries a {@link KitRule}: its rule, what it checks and where to look when it fails;
 * a failure's message starts with the rule id and ends with that hint.
 */
@ExtendWith({RuleHints.class, KitSummary.class})
public abstract class InboxTck {

    /** The retention window the kit configures (simulated time). */
    protected static final Duration RETENTION = Duration.ofHours(1);

    /** The cleanup batch size the kit configures. */
    protected static final int BATCH_SIZE = 3;

    /** The setting named when a call runs out of time. */
    private static final String CALL_TIMEOUT = "InboxTck.callTimeout()";

    /** Where the clock starts: a fixed instant far from the machine's own time. */
    private static final Instant START = Instant.parse("2032-05-06T07:08:09.010Z");

    private final List<InboxFixture> opened = new ArrayList<>();
    private TckClock clock;
    private InboxFixture inbox;

    /** How a delivery's transaction ends. */
    public enum Ending {
        /** Commit: the marker and the effect become durable. */
        COMMIT,
        /** Roll back (abort, cancel): neither the marker nor the effect may remain. */
        ROLL_BACK
    }

    /**
     * One inbox over the test's storage, with its own connection pool or client, as a consumer
     * process would have. Its methods may be called from several threads at once.
     */
    public interface InboxFixture {

        /**
         * Runs one consumer transaction: the inbox's {@code firstDelivery} for
         * {@code (consumer, messageId)}, one business effect in the same transaction when it says
         * first, a pause of {@code holdOpen} inside the transaction, then the ending. A
         * transient conflict the backend reports (a write conflict, a serialization failure, a
         * deadlock, a {@code TransactionConflict} cancellation) is retried from the start, as an
         * application must; the answer is the one of the attempt that ended the transaction. On a
         * backend that decides at commit (DynamoDB), the answer is known only then: false when the
         * marker's condition failed.
         *
         * @param consumer the consumer name
         * @param messageId the message id
         * @param ending commit or roll back
         * @param holdOpen how long to keep the transaction open after the inbox call; may be zero
         * @return whether the inbox said first delivery
         * @throws Exception on an unexpected failure
         */
        boolean deliver(String consumer, UUID messageId, Ending ending, Duration holdOpen) throws Exception;

        /**
         * Whether a committed marker exists, read outside any transaction.
         *
         * @param consumer the consumer name
         * @param messageId the message id
         * @return true if it exists
         * @throws Exception on failure
         */
        boolean hasMarker(String consumer, UUID messageId) throws Exception;

        /**
         * How many business effects for {@code (consumer, messageId)} are committed.
         *
         * @param consumer the consumer name
         * @param messageId the message id
         * @return the count
         * @throws Exception on failure
         */
        long effects(String consumer, UUID messageId) throws Exception;

        /**
         * The inbox's retention side, configured as {@link #open} was told.
         *
         * @return the inbox's cleanup
         */
        InboxRetention retention();

        /**
         * Closes the fixture's pool or client. The default does nothing.
         *
         * @throws Exception on failure
         */
        default void close() throws Exception {
        }
    }

    // ---------------------------------------------------------------------------------------
    // The fixture a store implements
    // ---------------------------------------------------------------------------------------

    /**
     * Creates fresh, isolated storage for one test: the inbox table or collection (through the
     * inbox's own schema method) and a place for business effects, with unique names. The default
     * does nothing.
     *
     * @throws Exception on failure
     */
    protected void createStorage() throws Exception {
    }

    /**
     * Opens an inbox over this test's storage with its own pool or client.
     *
     * @param clock the clock for markers and the cleanup's cutoff; a {@link TckClock}
     * @param retention the retention window to configure
     * @param cleanupBatchSize the cleanup batch size to configure
     * @return a new fixture; the kit closes it
     * @throws Exception on failure
     */
    protected abstract InboxFixture open(Clock clock, Duration retention, int cleanupBatchSize) throws Exception;

    /**
     * Removes the storage of one test, after the kit closed its fixtures. The default does nothing.
     *
     * @throws Exception on failure
     */
    protected void dropStorage() throws Exception {
    }

    /**
     * How many consumers, each with its own fixture, race for one message id.
     *
     * @return at least 2; 8 by default
     */
    protected int concurrentConsumers() {
        return 8;
    }

    /**
     * How many message ids the concurrency test races for, one after another.
     *
     * @return at least 1; 10 by default
     */
    protected int concurrencyRounds() {
        return 10;
    }

    /**
     * How long a racing delivery keeps its transaction open after the inbox call, so that the
     * others meet it in flight.
     *
     * @return 20 ms by default
     */
    protected Duration holdOpen() {
        return Duration.ofMillis(20);
    }

    /**
     * The wall-clock limit for one concurrent round.
     *
     * @return 60 s by default
     */
    protected Duration concurrencyTimeout() {
        return Duration.ofSeconds(60);
    }

    /**
     * The wall-clock limit for one call into the fixture or the inbox: a call that takes longer
     * fails the test's rule, naming the call, instead of hanging the build.
     *
     * @return 10 s by default
     */
    protected Duration callTimeout() {
        return Duration.ofSeconds(10);
    }

    // ---------------------------------------------------------------------------------------
    // Lifecycle
    // ---------------------------------------------------------------------------------------

    /**
     * Creates the storage and the clock before each test.
     *
     * @throws Exception when the fixture fails
     */
    @BeforeEach
    protected final void setUpInboxKit() throws Exception {
        clock = new TckClock(START);
        createStorage();
    }

    /**
     * Closes the fixtures and drops the storage after each test.
     *
     * @throws Exception when the fixture fails
     */
    @AfterEach
    protected final void tearDownInboxKit() throws Exception {
        Exception failure = null;
        for (InboxFixture f : opened) {
            try {
                f.close();
            } catch (Exception e) {
                failure = e;
            }
        }
        opened.clear();
        inbox = null;
        dropStorage();
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * The kit's clock.
     *
     * @return the clock every fixture of a test shares
     */
    protected final TckClock clock() {
        return clock;
    }

    /** A fixture the kit calls through a bounded view: every call returns within {@link #callTimeout()}. */
    private InboxFixture openFixture() throws Exception {
        InboxFixture f = BoundedCalls.call(callTimeout(), CALL_TIMEOUT, "open(clock, retention, batchSize)",
                () -> open(clock, RETENTION, BATCH_SIZE));
        assertThat(f).as("open(clock, retention, batchSize) returned null").isNotNull();
        opened.add(f);
        return BoundedCalls.bounded(InboxFixture.class, f, callTimeout(), CALL_TIMEOUT);
    }

    private InboxFixture inbox() throws Exception {
        if (inbox == null) {
            inbox = openFixture();
        }
        return inbox;
    }

    private boolean deliver(String consumer, UUID id) throws Exception {
        return inbox().deliver(consumer, id, Ending.COMMIT, Duration.ZERO);
    }

    // ---------------------------------------------------------------------------------------
    // I1
    // ---------------------------------------------------------------------------------------

    /**
     * A test of rule I1: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception on a fixture failure
     */
    @Test
    @KitRule(id = "I1", binding = REQUIRED,
            checks = "the first delivery of an id says first and commits the marker with the effect; every later "
                    + "one says repeat and adds no effect.",
            ifThisFails = "that the insert-if-absent reports \"inserted\" from the statement's own result "
                    + "(update count, upserted id, condition outcome), not from a read before it; that the "
                    + "marker is written on the caller's transaction (connection, session, transaction items) "
                    + "and not on a connection of its own.")
    public void required_I1_firstDeliveryOnceThenRepeats() throws Exception {
        UUID id = UUID.randomUUID();
        assertThat(deliver("billing", id)).as("first delivery of %s", id).isTrue();
        assertThat(inbox().hasMarker("billing", id)).as("marker committed").isTrue();
        for (int i = 0; i < 3; i++) {
            assertThat(deliver("billing", id)).as("repeat %d of %s", i + 1, id).isFalse();
        }
        assertThat(inbox().effects("billing", id)).as("business effects of %s", id).isEqualTo(1);
        UUID other = UUID.randomUUID();
        assertThat(deliver("billing", other)).as("another id is a first delivery").isTrue();
    }

    /**
     * A test of rule I1: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception on a fixture failure
     */
    @Test
    @KitRule(id = "I1", binding = REQUIRED,
            checks = "many consumers of the same name, each with its own connection or client, deliver the same "
                    + "id at the same time, each holding its transaction open for a moment: exactly one commits "
                    + "a first delivery, and exactly one effect exists.",
            ifThisFails = "that \"first\" comes from one atomic insert-if-absent guarded by a unique key on "
                    + "(consumer, message id), never a check-then-insert; that a transaction meeting another's "
                    + "uncommitted marker waits for it (or fails with a conflict the application retries) "
                    + "instead of inserting beside it; that a duplicate-key error raised by such a race is read "
                    + "as a repeat, not as a failure; that the backend really detects write conflicts between "
                    + "transactions (an emulator that lets the last commit win cannot pass this test).")
    public void required_I1_concurrentDeliveriesOfOneIdHaveExactlyOneFirst() throws Exception {
        int consumers = concurrentConsumers();
        List<InboxFixture> fixtures = new ArrayList<>();
        for (int i = 0; i < consumers; i++) {
            fixtures.add(openFixture());
        }
        for (int round = 0; round < concurrencyRounds(); round++) {
            UUID id = UUID.randomUUID();
            List<Callable<Boolean>> tasks = new ArrayList<>();
            for (InboxFixture f : fixtures) {
                tasks.add(() -> f.deliver("shipping", id, Ending.COMMIT, holdOpen()));
            }
            List<Boolean> answers = runConcurrently(tasks);
            assertThat(answers.stream().filter(b -> b).count())
                    .as("first deliveries of %s among %d concurrent consumers (round %d): %s", id, consumers, round,
                            answers)
                    .isEqualTo(1);
            assertThat(fixtures.get(0).effects("shipping", id)).as("business effects of %s", id).isEqualTo(1);
            assertThat(fixtures.get(0).hasMarker("shipping", id)).as("marker of %s", id).isTrue();
        }
    }

    /**
     * A test of rule I1: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception on a fixture failure
     */
    @Test
    @KitRule(id = "I1", binding = REQUIRED,
            checks = "a delivery whose transaction rolls back leaves neither marker nor effect, and the next "
                    + "delivery of the id is a first one.",
            ifThisFails = "that the marker is written inside the caller's transaction (not in auto-commit, not "
                    + "on another connection, not outside the session's transaction, not by a separate request "
                    + "before the caller's transaction items).")
    public void required_I1_rollbackLeavesNoMarker() throws Exception {
        UUID id = UUID.randomUUID();
        assertThat(inbox().deliver("billing", id, Ending.ROLL_BACK, Duration.ZERO))
                .as("the inbox says first inside the transaction that will roll back").isTrue();
        assertThat(inbox().hasMarker("billing", id)).as("marker after rollback").isFalse();
        assertThat(inbox().effects("billing", id)).as("effects after rollback").isZero();
        assertThat(deliver("billing", id)).as("the delivery after the rollback is the first").isTrue();
        assertThat(inbox().effects("billing", id)).isEqualTo(1);
    }

    /**
     * A test of rule I1: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception on a fixture failure
     */
    @Test
    @KitRule(id = "I1", binding = REQUIRED,
            checks = "while one consumer's transaction holds the marker and then rolls back, a second consumer "
                    + "delivering the same id concurrently ends up with the first delivery.",
            ifThisFails = "that a transaction meeting an uncommitted marker waits for the other transaction's "
                    + "outcome (or retries on a conflict) rather than answering \"repeat\" from a marker that "
                    + "never commits.")
    public void required_I1_concurrentDeliveryAfterARollbackIsFirst() throws Exception {
        InboxFixture first = openFixture();
        InboxFixture second = openFixture();
        UUID id = UUID.randomUUID();
        Duration hold = holdOpen().multipliedBy(10);
        List<Boolean> answers = runConcurrently(List.of(
                () -> first.deliver("billing", id, Ending.ROLL_BACK, hold),
                () -> {
                    Thread.sleep(hold.toMillis() / 4);
                    return second.deliver("billing", id, Ending.COMMIT, Duration.ZERO);
                }));
        assertThat(answers.get(1)).as("the committing delivery after a rolled-back one (answers %s)", answers)
                .isTrue();
        assertThat(second.effects("billing", id)).as("effects of %s", id).isEqualTo(1);
    }

    /**
     * A test of rule I1: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception on a fixture failure
     */
    @Test
    @KitRule(id = "I1", binding = REQUIRED,
            checks = "markers are per consumer name: the same id counts once for each consumer.",
            ifThisFails = "that the unique key is (consumer, message id), not the message id alone; that "
                    + "consumer names are compared exactly (a case-insensitive collation on MySQL/MariaDB makes "
                    + "\"Billing\" and \"billing\" one consumer).")
    public void required_I1_sameIdCountsOncePerConsumerName() throws Exception {
        UUID id = UUID.randomUUID();
        assertThat(deliver("billing", id)).isTrue();
        assertThat(deliver("shipping", id)).as("another consumer name gets its own first delivery").isTrue();
        assertThat(deliver("Billing", id)).as("names differ by case: another consumer").isTrue();
        assertThat(deliver("billing", id)).isFalse();
        assertThat(deliver("shipping", id)).isFalse();
        assertThat(inbox().effects("billing", id)).isEqualTo(1);
        assertThat(inbox().effects("shipping", id)).isEqualTo(1);
    }

    // ---------------------------------------------------------------------------------------
    // I2
    // ---------------------------------------------------------------------------------------

    /**
     * A test of rule I2: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception on a fixture failure
     */
    @Test
    @KitRule(id = "I2", binding = REQUIRED,
            checks = "the cleanup deletes exactly the markers older than the window (strictly: a marker exactly "
                    + "one window old stays); a repeat of a deleted marker is accepted again, one of a kept "
                    + "marker is not.",
            ifThisFails = "that seenAt comes from the injected clock, in epoch milliseconds; that the cutoff is "
                    + "now - retention with a strict <; that the cleanup never deletes by anything else than "
                    + "age.")
    public void required_I2_retentionDeletesOnlyOldMarkers() throws Exception {
        UUID old = UUID.randomUUID();
        UUID young = UUID.randomUUID();
        assertThat(deliver("billing", old)).isTrue();
        clock.advance(RETENTION.dividedBy(2));
        assertThat(deliver("billing", young)).isTrue();
        clock.advance(RETENTION.dividedBy(2));
        assertThat(inbox().retention().deleteExpired()).as("deleted when the old marker is exactly one window old")
                .isZero();
        clock.advanceMillis(1);
        assertThat(inbox().retention().deleteExpired()).as("deleted when the old marker is older than the window")
                .isEqualTo(1);
        assertThat(inbox().hasMarker("billing", old)).as("old marker").isFalse();
        assertThat(inbox().hasMarker("billing", young)).as("young marker").isTrue();
        assertThat(deliver("billing", young)).as("a repeat within the window").isFalse();
        assertThat(deliver("billing", old)).as("a repeat after the window is accepted again").isTrue();
    }

    /**
     * A test of rule I2: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception on a fixture failure
     */
    @Test
    @KitRule(id = "I2", binding = REQUIRED,
            checks = "one cleanup batch deletes at most the batch size; deleteExpired goes on batch by batch "
                    + "until every expired marker is gone, and leaves the young ones.",
            ifThisFails = "that a batch is bounded (LIMIT, a page size) and returns the count it deleted; that "
                    + "the loop stops on a batch smaller than the batch size.")
    public void required_I2_cleanupRunsInBoundedBatches() throws Exception {
        List<UUID> old = new ArrayList<>();
        for (int i = 0; i < 2 * BATCH_SIZE + 1; i++) {
            UUID id = UUID.randomUUID();
            old.add(id);
            assertThat(deliver(i % 2 == 0 ? "billing" : "shipping", id)).isTrue();
        }
        clock.advance(RETENTION.plusSeconds(1));
        UUID young = UUID.randomUUID();
        assertThat(deliver("billing", young)).isTrue();
        InboxRetention retention = inbox().retention();
        assertThat(retention.cleanupBatchSize()).isEqualTo(BATCH_SIZE);
        assertThat(retention.deleteExpiredBatch()).as("first batch").isEqualTo(BATCH_SIZE);
        assertThat(retention.deleteExpired()).as("the rest").isEqualTo(BATCH_SIZE + 1);
        assertThat(retention.deleteExpiredBatch()).as("nothing left to delete").isZero();
        for (int i = 0; i < old.size(); i++) {
            assertThat(inbox().hasMarker(i % 2 == 0 ? "billing" : "shipping", old.get(i))).isFalse();
        }
        assertThat(inbox().hasMarker("billing", young)).isTrue();
    }

    /**
     * A test of rule I2: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception on a fixture failure
     */
    @Test
    @KitRule(id = "I2", binding = REQUIRED,
            checks = "two cleanups running at once, each with its own connection or client, delete every expired "
                    + "marker exactly once between them, and only those.",
            ifThisFails = "that the count a batch returns is what the database deleted (an update count, a "
                    + "deleted count, a condition that passed), not what a read before it found.")
    public void required_I2_concurrentCleanupsDeleteEachMarkerOnce() throws Exception {
        int expired = 4 * BATCH_SIZE + 1;
        for (int i = 0; i < expired; i++) {
            assertThat(deliver("billing", UUID.randomUUID())).isTrue();
        }
        clock.advance(RETENTION.plusSeconds(1));
        UUID young = UUID.randomUUID();
        assertThat(deliver("billing", young)).isTrue();
        InboxFixture a = openFixture();
        InboxFixture b = openFixture();
        List<Long> deleted = runConcurrently(List.of(() -> a.retention().deleteExpired(),
                () -> b.retention().deleteExpired()));
        assertThat(deleted.get(0) + deleted.get(1)).as("markers deleted by the two cleanups %s", deleted)
                .isEqualTo(expired);
        assertThat(inbox().retention().deleteExpired()).as("left after both").isZero();
        assertThat(inbox().hasMarker("billing", young)).isTrue();
    }

    /**
     * A test of rule I2: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception on a fixture failure
     */
    @Test
    @KitRule(id = "I2", binding = REQUIRED,
            checks = "markers leave only through the cleanup: without it, a repeat long after the window is "
                    + "still refused.",
            ifThisFails = "that the store sets no time-to-live of its own (a TTL index, a DynamoDB TTL "
                    + "attribute, an expiring key) and that firstDelivery does not treat an old marker as "
                    + "absent.")
    public void required_I2_markersStayUntilTheCleanupRemovesThem() throws Exception {
        UUID id = UUID.randomUUID();
        assertThat(deliver("billing", id)).isTrue();
        clock.advance(RETENTION.multipliedBy(100));
        assertThat(deliver("billing", id)).as("a repeat long after the window, with no cleanup run").isFalse();
        assertThat(inbox().hasMarker("billing", id)).isTrue();
    }

    /** Starts every task at once on its own thread; returns their answers in task order. */
    private <T> List<T> runConcurrently(List<? extends Callable<T>> tasks) throws Exception {
        return KitThreads.runConcurrently(tasks, concurrencyTimeout());
    }
}
