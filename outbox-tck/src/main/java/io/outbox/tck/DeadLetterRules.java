package io.outbox.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static io.outbox.tck.KitRule.Binding.OPTIONAL;
import static io.outbox.tck.KitRule.Binding.REQUIRED;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.outbox.OutboxHeader;
import io.outbox.OutboxMessage;
import io.outbox.spi.CorruptMessageException;
import io.outbox.spi.DeadLetter;
import io.outbox.spi.DeadLetterConflictException;
import io.outbox.spi.DeadLetterFailure;
import io.outbox.spi.DeadLetters;
import io.outbox.spi.HeadFailure;
import io.outbox.spi.OutboxStore;
import io.outbox.spi.Pending;
import io.outbox.spi.PendingMetrics;
import io.outbox.spi.support.StoredMessages;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The kit's rules for capability C4 {@link DeadLetters} and for a store's report of one corrupt
 * row (rule R12). {@link OutboxStoreTck} extends this class, so every store's kit run includes
 * them; the C4 rules are skipped, with the reason, for a store without the capability.
 *
 * <p>Each test carries a {@link KitRule}: its rule, what it checks and where to look when it fails.
 */
public abstract class DeadLetterRules {

    private static final String TOPIC = "outbox-tck-dead";

    private int sequence;

    /**
     * Opens a store over this test's storage; {@link OutboxStoreTck#openStore()}.
     *
     * @return the store
     * @throws Exception when the fixture fails
     */
    protected abstract OutboxStore openStore() throws Exception;

    /**
     * Enqueues and commits; {@link OutboxStoreTck#enqueue(OutboxStore, List)}.
     *
     * @param store the store
     * @param messages the messages
     * @throws Exception on failure
     */
    protected abstract void enqueue(OutboxStore store, List<OutboxMessage> messages) throws Exception;

    /**
     * The kit's clock; {@link OutboxStoreTck#clock()}.
     *
     * @return the clock
     */
    protected abstract TckClock clock();

    /**
     * Enqueues through the fixture within the kit's call time limit.
     *
     * @param store a store of {@link #openStore()}
     * @param messages the messages
     * @throws Exception on failure
     */
    abstract void write(OutboxStore store, List<OutboxMessage> messages) throws Exception;

    /**
     * Corrupts a stored message through the fixture within the kit's call time limit.
     *
     * @param store a store of {@link #openStore()}
     * @param message a pending message
     * @throws Exception on failure
     */
    abstract void corrupt(OutboxStore store, OutboxMessage message) throws Exception;

    /**
     * The kit's knobs.
     *
     * @return the environment of this test
     */
    abstract TckEnvironment kitEnvironment();

    /**
     * Optional: replaces the stored header blob of a pending message with bytes the header codec
     * refuses (for example a single byte {@code 0x7f}, an unknown version), as a bad migration or
     * a disk error would leave it. The R12 test that needs it is skipped, with that reason, when
     * the fixture does not implement it.
     *
     * @param store a store of this test
     * @param message a pending message of that store
     * @throws Exception on failure
     */
    protected void corruptStoredHeaders(OutboxStore store, OutboxMessage message) throws Exception {
        Assumptions.abort("the fixture does not implement corruptStoredHeaders(store, message); optional");
    }

    private static DeadLetters deadLettersOf(OutboxStore store) {
        assumeTrue(store.deadLetters().isPresent(), "the store offers no DeadLetters (C4): its accessor is empty; "
                + "optional");
        return store.deadLetters().get();
    }

    private OutboxMessage message(int bucket, String text) {
        int n = ++sequence;
        return StoredMessages.rebuild(UUID.randomUUID(), bucket, TOPIC,
                ("key-" + bucket).getBytes(StandardCharsets.UTF_8), (text + "-" + n).getBytes(StandardCharsets.UTF_8),
                List.of(OutboxHeader.of("h", new byte[] {1, 2, 3}), OutboxHeader.of("n", null)), null,
                clock().instant());
    }

    private DeadLetterFailure failure(String reason) {
        Instant now = clock().instant();
        return new DeadLetterFailure(reason, "org.apache.kafka.common.errors.RecordTooLargeException", 3,
                now.minusSeconds(30), now, "relay-tck");
    }

    private static List<UUID> ids(List<Pending> read) {
        return read.stream().map(p -> p.message().messageId()).toList();
    }

    private static void assertSameBytes(DeadLetter d, OutboxMessage m) {
        assertThat(d.messageId()).isEqualTo(m.messageId());
        assertThat(d.bucket()).isEqualTo(m.bucket());
        assertThat(d.topic()).isEqualTo(m.topic());
        assertThat(d.key()).isEqualTo(m.key());
        assertThat(d.value()).isEqualTo(m.value());
        assertThat(d.headers()).isEqualTo(StoredMessages.encodedHeaders(m));
        assertThat(d.partition()).isEqualTo(m.partition());
        assertThat(d.createdAt()).isEqualTo(m.createdAt());
    }

    /**
     * A test of rule C4: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "C4", binding = OPTIONAL,
            checks = "a move takes the message out of its bucket and keeps its bytes, id and every failure "
                    + "field; the messages behind it become the bucket's head.",
            ifThisFails = "the move copies every column of the message row (the header blob as stored); it "
                    + "deletes the pending row in the same transaction; failure times and the move time are "
                    + "epoch milliseconds; the reason column holds {@value DeadLetterFailure#MAX_REASON_LENGTH} "
                    + "characters, including ones outside the Basic Multilingual Plane (MySQL: utf8mb4).")
    public void optional_C4_aMoveKeepsBytesIdAndFailureAndFreesTheBucketsHead() throws Exception {
        OutboxStore store = openStore();
        DeadLetters dead = deadLettersOf(store);
        OutboxMessage m1 = message(2, "first");
        OutboxMessage m2 = message(2, "second");
        OutboxMessage m3 = message(2, "third");
        write(store, List.of(m1, m2, m3));
        String reason = "\uD83D\uDE00" + "x".repeat(DeadLetterFailure.MAX_REASON_LENGTH - 3) + "\uD83D\uDE00 too long";
        DeadLetterFailure failure = failure(reason);
        assertThat(failure.reason()).as("the record cuts the reason before the pair").hasSize(
                DeadLetterFailure.MAX_REASON_LENGTH - 1);
        clock().advanceMillis(1234);
        assertThat(dead.moveToDeadLetters(2, m1.messageId(), failure)).as("move of the head").isTrue();
        assertThat(ids(store.nextBatch(2, 10))).as("the bucket after the move")
                .containsExactly(m2.messageId(), m3.messageId());
        DeadLetter d = dead.deadLetter(m1.messageId()).orElseThrow();
        assertSameBytes(d, m1);
        assertThat(d.failure()).isEqualTo(failure);
        assertThat(d.deadLetteredAt()).isEqualTo(Instant.ofEpochMilli(clock().millis()));
    }

    /**
     * A test of rule C4: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "C4", binding = OPTIONAL,
            checks = "dead letters are never returned by nextBatch, never counted by bucketsWithPending or the "
                    + "pending metrics, and a bucket holding only dead letters is idle.",
            ifThisFails = "dead letters live outside the pending rows (their own table, collection or items), or "
                    + "every pending query excludes them.")
    public void optional_C4_deadLettersAreNeverLeasedReadOrCounted() throws Exception {
        OutboxStore store = openStore();
        DeadLetters dead = deadLettersOf(store);
        OutboxMessage m = message(1, "only");
        OutboxMessage other = message(3, "other");
        write(store, List.of(m, other));
        assertThat(dead.moveToDeadLetters(1, m.messageId(), failure("bad"))).isTrue();
        assertThat(store.nextBatch(1, 10)).as("nextBatch of a bucket holding only a dead letter").isEmpty();
        assertThat(store.bucketsWithPending(List.of(0, 1, 2, 3))).as("bucketsWithPending").containsExactly(3);
        if (store.pendingMetrics().isPresent()) {
            PendingMetrics metrics = store.pendingMetrics().get();
            assertThat(metrics.pendingMetrics(Duration.ofSeconds(10)).pendingCount()).as("pending count").isEqualTo(1);
        }
    }

    /**
     * A test of rule C4: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "C4", binding = OPTIONAL,
            checks = "a move that cannot complete changes nothing: moving a message whose id already has a dead "
                    + "letter with a different record fails with DeadLetterConflictException, the message stays "
                    + "pending with its bytes, and the existing dead letter is unchanged. (A store that refuses "
                    + "a second pending message with a dead letter's id at enqueue passes too.)",
            ifThisFails = "the insert into the dead letters and the delete of the pending row are one "
                    + "transaction (or one TransactWriteItems, or one document update), rolled back as a whole "
                    + "when either fails; the dead letters are keyed by message id; a different record is "
                    + "refused with DeadLetterConflictException (DeadLetter.sameRecord), not overwritten.")
    public void optional_C4_aMoveThatFailsHalfWayLeavesTheMessagePendingAndNothingDoubled() throws Exception {
        OutboxStore store = openStore();
        DeadLetters dead = deadLettersOf(store);
        OutboxMessage first = message(0, "first");
        write(store, List.of(first));
        assertThat(dead.moveToDeadLetters(0, first.messageId(), failure("first failure"))).isTrue();
        OutboxMessage again = StoredMessages.rebuild(first.messageId(), 0, TOPIC, first.key(),
                "another value".getBytes(StandardCharsets.UTF_8), List.of(), null, clock().instant());
        Throwable atEnqueue = catchThrowable(() -> write(store, List.of(again)));
        if (atEnqueue == null) {
            Throwable atMove = catchThrowable(() -> dead.moveToDeadLetters(0, again.messageId(),
                    failure("second failure")));
            assertThat(atMove).as("moving a message whose id has a dead letter with another record already")
                    .isInstanceOf(DeadLetterConflictException.class);
            assertThat(((DeadLetterConflictException) atMove).messageId()).isEqualTo(first.messageId());
            assertThat(((DeadLetterConflictException) atMove).bucket()).isZero();
            List<Pending> pending = store.nextBatch(0, 10);
            assertThat(pending).as("the message is still pending after the failed move").hasSize(1);
            assertThat(pending.get(0).message()).as("with its bytes").isEqualTo(again);
        }
        DeadLetter kept = dead.deadLetter(first.messageId()).orElseThrow();
        assertThat(kept.value()).as("the first dead letter is unchanged").isEqualTo(first.value());
        assertThat(kept.failure().reason()).isEqualTo("first failure");
        assertThat(dead.deadLetters(null, 10)).as("dead letters").hasSize(1);
    }

    /**
     * A test of rule C4: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "C4", binding = OPTIONAL,
            checks = "moving a repeat of a dead letter (same id, same topic, key, value, header blob and "
                    + "partition) succeeds: the pending message is removed and the one dead letter keeps the "
                    + "bytes with the newer failure.",
            ifThisFails = "the move compares the existing dead letter's record (DeadLetter.sameRecord) and, when "
                    + "equal, updates its failure and deletes the pending row in one transaction instead of "
                    + "failing on the dead letters' key.")
    public void optional_C4_aRepeatOfADeadLetterMovesIntoIt() throws Exception {
        OutboxStore store = openStore();
        DeadLetters dead = deadLettersOf(store);
        OutboxMessage first = message(3, "repeated");
        OutboxMessage behind = message(3, "behind");
        write(store, List.of(first, behind));
        assertThat(dead.moveToDeadLetters(3, first.messageId(), failure("first failure"))).isTrue();
        clock().advanceMillis(5000);
        OutboxMessage repeat = StoredMessages.rebuild(first.messageId(), 3, first.topic(), first.key(), first.value(),
                first.headers(), first.partition(), clock().instant());
        Throwable atEnqueue = catchThrowable(() -> write(store, List.of(repeat)));
        if (atEnqueue != null) {
            return; // the store refuses a dead letter's id at enqueue: the repeat cannot happen
        }
        DeadLetterFailure second = failure("second failure");
        assertThat(dead.moveToDeadLetters(3, repeat.messageId(), second)).as("moving the repeat").isTrue();
        assertThat(ids(store.nextBatch(3, 10))).as("the bucket after the move").containsExactly(behind.messageId());
        assertThat(dead.deadLetters(null, 10)).as("dead letters").hasSize(1);
        DeadLetter d = dead.deadLetter(first.messageId()).orElseThrow();
        assertThat(d.value()).isEqualTo(first.value());
        assertThat(d.headers()).isEqualTo(StoredMessages.encodedHeaders(first));
        assertThat(d.failure()).as("the dead letter records the newer failure").isEqualTo(second);
        assertThat(d.deadLetteredAt()).isEqualTo(Instant.ofEpochMilli(clock().millis()));
    }

    /**
     * A test of rule C4: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "C4", binding = OPTIONAL,
            checks = "a failing head's record (recordHeadFailure) is read by another store instance with every "
                    + "field, replaced by the bucket's next record, absent for other buckets, and refused for a "
                    + "message that is not pending in the bucket.",
            ifThisFails = "the record is stored, not cached; a second record of the bucket replaces the first; "
                    + "the reason column holds the full width (MySQL: utf8mb4); times are epoch milliseconds; "
                    + "the write checks that the message is pending in that bucket.")
    public void optional_C4_aHeadFailureIsDurableAndReadByAnotherInstance() throws Exception {
        OutboxStore writer = openStore();
        DeadLetters dead = deadLettersOf(writer);
        OutboxMessage head = message(4, "head");
        OutboxMessage behind = message(4, "behind");
        OutboxMessage other = message(5, "other");
        write(writer, List.of(head, behind, other));
        assertThat(dead.headFailures(List.of(4, 5))).as("before any record").isEmpty();
        Instant now = clock().instant();
        DeadLetterFailure one = new DeadLetterFailure("too large", "org.apache.kafka.common.errors"
                + ".RecordTooLargeException", 1, now, now, "relay-a");
        assertThat(dead.recordHeadFailure(4, head.messageId(), one)).as("the first record").isTrue();
        String reason = "\uD83D\uDE00" + "r".repeat(DeadLetterFailure.MAX_REASON_LENGTH) + " cut";
        DeadLetterFailure two = new DeadLetterFailure(reason, "org.apache.kafka.common.errors"
                + ".RecordTooLargeException", 2, now, now.plusMillis(1500), "relay-b");
        assertThat(dead.recordHeadFailure(4, head.messageId(), two)).as("the second record").isTrue();
        DeadLetters reader = deadLettersOf(openStore());
        assertThat(reader.headFailures(List.of(5, 4, 3))).as("read by another store instance")
                .containsExactly(new HeadFailure(4, head.messageId(), two));
        assertThat(reader.headFailures(List.of(4)).get(0).failure().reason()).hasSize(
                DeadLetterFailure.MAX_REASON_LENGTH);
        assertThat(reader.headFailures(List.of())).isEmpty();
        assertThat(dead.recordHeadFailure(5, head.messageId(), one)).as("a message not pending in that bucket")
                .isFalse();
        assertThat(dead.recordHeadFailure(4, UUID.randomUUID(), one)).as("an unknown message").isFalse();
        assertThat(reader.headFailures(List.of(4, 5))).as("after the refused records")
                .containsExactly(new HeadFailure(4, head.messageId(), two));
    }

    /**
     * A test of rule C4: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "C4", binding = OPTIONAL,
            checks = "a head's failure record is no longer reported once its message is published or moved; the "
                    + "bucket's new head has none until one is recorded for it, not even a message moved and "
                    + "replayed that reaches the head again.",
            ifThisFails = "headFailures reports a record only while its message is the bucket's oldest pending "
                    + "message (or the record lives in the message's row and goes with it); the move removes "
                    + "the record in its transaction (one left behind comes back when the message is replayed "
                    + "and reaches the head).")
    public void optional_C4_aHeadFailureEndsWhenItsMessageIsPublishedOrMoved() throws Exception {
        OutboxStore store = openStore();
        DeadLetters dead = deadLettersOf(store);
        OutboxMessage m1 = message(6, "one");
        OutboxMessage m2 = message(6, "two");
        OutboxMessage m3 = message(6, "three");
        write(store, List.of(m1, m2, m3));
        assertThat(dead.recordHeadFailure(6, m1.messageId(), failure("one failed"))).isTrue();
        KitChecks.published(store, 6, store.nextBatch(6, 1));
        assertThat(dead.headFailures(List.of(6))).as("after the head was published").isEmpty();
        assertThat(dead.recordHeadFailure(6, m2.messageId(), failure("two failed"))).isTrue();
        assertThat(dead.headFailures(List.of(6))).extracting(HeadFailure::messageId).containsExactly(m2.messageId());
        assertThat(dead.moveToDeadLetters(6, m2.messageId(), failure("two moved"))).isTrue();
        assertThat(dead.headFailures(List.of(6))).as("after the head was moved").isEmpty();
        assertThat(dead.replayDeadLetter(m2.messageId())).isTrue();
        assertThat(ids(store.nextBatch(6, 10))).containsExactly(m3.messageId(), m2.messageId());
        assertThat(dead.headFailures(List.of(6))).as("after the replay, behind m3").isEmpty();
        KitChecks.published(store, 6, store.nextBatch(6, 1));
        assertThat(dead.headFailures(List.of(6))).as("the replayed message at the head: its failure went with the move")
                .isEmpty();
    }

    /**
     * A test of rule C4: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "C4", binding = OPTIONAL,
            checks = "concurrent moves of one message from two store instances move it once: exactly one returns "
                    + "true, one dead letter exists, nothing is pending.",
            ifThisFails = "the delete of the pending row is conditional on the row still being there and the "
                    + "transaction fails or reports false when it deleted nothing.")
    public void optional_C4_concurrentMovesOfOneMessageMoveItOnce() throws Exception {
        OutboxStore a = openStore();
        deadLettersOf(a);
        OutboxStore b = openStore();
        assertThat(b.deadLetters()).as("a second instance of the store offers dead letters too").isPresent();
        OutboxMessage m = message(4, "raced");
        write(a, List.of(m));
        List<Callable<Boolean>> moves = new ArrayList<>();
        for (OutboxStore s : List.of(a, b)) {
            moves.add(() -> {
                try {
                    return s.deadLetters().orElseThrow().moveToDeadLetters(4, m.messageId(), failure("raced"));
                } catch (RuntimeException e) {
                    return false; // the loser may also fail on the dead letter's key
                }
            });
        }
        List<Boolean> answers = KitThreads.runConcurrently(moves, kitEnvironment().concurrencyTimeout());
        assertThat(answers.stream().filter(moved -> moved).count()).as("moves that reported success %s", answers)
                .isEqualTo(1);
        assertThat(a.nextBatch(4, 10)).as("pending after the moves").isEmpty();
        assertThat(deadLettersOf(a).deadLetters(null, 10)).as("dead letters").hasSize(1);
    }

    /**
     * A test of rule C4: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "C4", binding = OPTIONAL,
            checks = "a message published (deleted) before the move is not moved: the move reports false and "
                    + "writes no dead letter.",
            ifThisFails = "the move reads the pending row inside its transaction and writes nothing when it is "
                    + "gone.")
    public void optional_C4_aMessageNoLongerPendingIsNotMoved() throws Exception {
        OutboxStore store = openStore();
        DeadLetters dead = deadLettersOf(store);
        OutboxMessage m = message(0, "published");
        write(store, List.of(m));
        KitChecks.published(store, 0, store.nextBatch(0, 10));
        assertThat(dead.moveToDeadLetters(0, m.messageId(), failure("late"))).isFalse();
        assertThat(dead.deadLetter(m.messageId())).isEmpty();
        assertThat(dead.moveToDeadLetters(1, UUID.randomUUID(), failure("unknown"))).isFalse();
    }

    /**
     * A test of rule C4: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "C4", binding = OPTIONAL,
            checks = "replay puts the message back into its bucket after every message pending now, with the "
                    + "same id and bytes, and removes the dead letter; a second replay finds nothing.",
            ifThisFails = "replay takes a new enqueue position (a new auto-increment id, a newly reserved "
                    + "sequence number), not the old one; it copies every column back; insert and delete are "
                    + "one transaction.")
    public void optional_C4_replayKeepsIdAndBytesAndGoesAfterWhatIsPendingNow() throws Exception {
        OutboxStore store = openStore();
        DeadLetters dead = deadLettersOf(store);
        OutboxMessage m1 = message(5, "one");
        OutboxMessage m2 = message(5, "two");
        write(store, List.of(m1, m2));
        assertThat(dead.moveToDeadLetters(5, m1.messageId(), failure("too large"))).isTrue();
        OutboxMessage m3 = message(5, "three");
        write(store, List.of(m3));
        assertThat(dead.replayDeadLetter(m1.messageId())).as("replay").isTrue();
        List<Pending> pending = store.nextBatch(5, 10);
        assertThat(ids(pending)).as("the bucket after the replay")
                .containsExactly(m2.messageId(), m3.messageId(), m1.messageId());
        assertThat(pending.get(2).message()).as("the replayed message's bytes").isEqualTo(m1);
        assertThat(dead.deadLetter(m1.messageId())).as("the dead letter after the replay").isEmpty();
        assertThat(dead.replayDeadLetter(m1.messageId())).as("a second replay").isFalse();
        KitChecks.published(store, 5, pending);
        assertThat(store.nextBatch(5, 10)).as("the replayed message is published like any other").isEmpty();
    }

    /**
     * A test of rule C4: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "C4", binding = OPTIONAL,
            checks = "purge removes exactly the dead letter it names: other dead letters and pending messages "
                    + "stay; purging an unknown id reports false.",
            ifThisFails = "the purge deletes by message id in the dead letters only.")
    public void optional_C4_purgeRemovesOnlyWhatItNames() throws Exception {
        OutboxStore store = openStore();
        DeadLetters dead = deadLettersOf(store);
        OutboxMessage m1 = message(6, "one");
        OutboxMessage m2 = message(6, "two");
        OutboxMessage m3 = message(6, "three");
        write(store, List.of(m1, m2, m3));
        assertThat(dead.moveToDeadLetters(6, m1.messageId(), failure("a"))).isTrue();
        assertThat(dead.moveToDeadLetters(6, m2.messageId(), failure("b"))).isTrue();
        assertThat(dead.purgeDeadLetter(m1.messageId())).isTrue();
        assertThat(dead.deadLetter(m1.messageId())).isEmpty();
        assertThat(dead.deadLetter(m2.messageId())).isPresent();
        assertThat(ids(store.nextBatch(6, 10))).containsExactly(m3.messageId());
        assertThat(dead.purgeDeadLetter(m1.messageId())).as("purging it again").isFalse();
        assertThat(dead.purgeDeadLetter(m3.messageId())).as("purging a pending message's id").isFalse();
        assertThat(ids(store.nextBatch(6, 10))).as("the pending message survives").containsExactly(m3.messageId());
    }

    /**
     * A test of rule C4: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "C4", binding = OPTIONAL,
            checks = "the dead letters list in pages ordered by the id's text form, every one exactly once.",
            ifThisFails = "the page query orders by message id as text (or its 16 bytes unsigned) and filters "
                    + "strictly after the cursor.")
    public void optional_C4_listPagesInIdOrderWithoutRepeats() throws Exception {
        OutboxStore store = openStore();
        DeadLetters dead = deadLettersOf(store);
        List<OutboxMessage> all = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            all.add(message(i % 3, "m"));
        }
        write(store, all);
        for (OutboxMessage m : all) {
            assertThat(dead.moveToDeadLetters(m.bucket(), m.messageId(), failure("r"))).isTrue();
        }
        List<UUID> listed = new ArrayList<>();
        UUID after = null;
        for (int page = 0; page < 10; page++) {
            List<DeadLetter> got = dead.deadLetters(after, 3);
            got.forEach(d -> listed.add(d.messageId()));
            if (got.size() < 3) {
                break;
            }
            after = got.get(got.size() - 1).messageId();
        }
        List<UUID> expected = all.stream().map(OutboxMessage::messageId)
                .sorted(Comparator.comparing(UUID::toString)).toList();
        assertThat(listed).isEqualTo(expected);
    }

    /**
     * A test of rule C4: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "C4", binding = OPTIONAL,
            checks = "the dead letters refuse a negative bucket with IllegalArgumentException: a move, a head's "
                    + "failure record and a read of head failures, and change nothing.",
            ifThisFails = "moveToDeadLetters and recordHeadFailure start with StoreArguments.requireBucket(bucket), "
                    + "headFailures with StoreArguments.requireBuckets(buckets), instead of running a query for a "
                    + "bucket no message can have.")
    public void optional_C4_negativeBucketsAreRefused() throws Exception {
        OutboxStore store = openStore();
        DeadLetters dead = deadLettersOf(store);
        OutboxMessage m = message(0, "kept");
        write(store, List.of(m));
        assertThat(catchThrowable(() -> dead.moveToDeadLetters(-1, m.messageId(), failure("negative"))))
                .as("moveToDeadLetters(-1, ...)").isInstanceOf(IllegalArgumentException.class);
        assertThat(catchThrowable(() -> dead.recordHeadFailure(-1, m.messageId(), failure("negative"))))
                .as("recordHeadFailure(-1, ...)").isInstanceOf(IllegalArgumentException.class);
        assertThat(catchThrowable(() -> dead.headFailures(List.of(0, -1)))).as("headFailures([0, -1])")
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(ids(store.nextBatch(0, 10))).as("the message after the refused calls").containsExactly(m.messageId());
        assertThat(dead.deadLetters(null, 10)).as("dead letters after the refused calls").isEmpty();
    }

    /**
     * A test of rule R12: its {@link KitRule} says what it checks and where to look.
     *
     * @throws Exception when the store or the fixture fails
     */
    @Test
    @KitRule(id = "R12", binding = REQUIRED,
            checks = "a row whose header blob cannot be decoded is reported with a CorruptMessageException "
                    + "naming its bucket and message id, with the decoded rows ahead of it; with C4 it can be "
                    + "moved by id with its bytes as stored, and the rows behind it are read again.",
            ifThisFails = "nextBatch catches the decoding error per row and throws "
                    + "CorruptMessageException(bucket, messageId, rowsBefore, ...); the move copies the stored "
                    + "blob without decoding it.")
    public void required_R12_aCorruptRowIsReportedWithItsBucketAndMessageId() throws Exception {
        OutboxStore store = openStore();
        OutboxMessage m1 = message(1, "good");
        OutboxMessage m2 = message(1, "bad");
        OutboxMessage m3 = message(1, "behind");
        write(store, List.of(m1, m2, m3));
        corrupt(store, m2);
        Throwable t = catchThrowable(() -> store.nextBatch(1, 10));
        assertThat(t).as("nextBatch over a corrupt row").isInstanceOf(CorruptMessageException.class);
        CorruptMessageException e = (CorruptMessageException) t;
        assertThat(e.bucket()).isEqualTo(1);
        assertThat(e.messageId()).isEqualTo(m2.messageId());
        assertThat(ids(e.messagesBefore())).as("the decoded rows ahead of it").containsExactly(m1.messageId());
        store.markPublished(1, e.messagesBefore());
        if (catchThrowable(() -> store.nextBatch(1, 10)) instanceof CorruptMessageException again && again
                .messagesBefore().stream().anyMatch(p -> p.message().messageId().equals(m1.messageId()))) {
            throw new RuleViolation(RuleViolation.S2, "markPublished(1, [the row ahead of the corrupt one]) left it "
                    + "pending");
        }
        Throwable atHead = catchThrowable(() -> store.nextBatch(1, 1));
        assertThat(atHead).isInstanceOf(CorruptMessageException.class);
        assertThat(((CorruptMessageException) atHead).messagesBefore()).isEmpty();
        if (store.deadLetters().isPresent()) {
            DeadLetters dead = store.deadLetters().get();
            assertThat(dead.moveToDeadLetters(1, m2.messageId(), failure("corrupt headers"))).isTrue();
            DeadLetter d = dead.deadLetter(m2.messageId()).orElseThrow();
            assertThat(d.headers()).as("the stored blob, not decoded").isNotEqualTo(StoredMessages.encodedHeaders(m2));
            assertThat(d.value()).isEqualTo(m2.value());
            assertThat(ids(store.nextBatch(1, 10))).containsExactly(m3.messageId());
        }
    }
}
