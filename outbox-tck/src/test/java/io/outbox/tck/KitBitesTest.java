package io.outbox.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.OutboxMessage;
import io.outbox.spi.OutboxStore;
import io.outbox.tck.FaultyStores.Fault;
import io.outbox.tck.KitLauncher.Outcome;
import io.outbox.tck.KitLauncher.Run;
import java.time.Clock;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A kit that cannot fail is worthless: each broken variant of the reference store must make the kit
 * fail exactly the rules its fault breaks (not merely something), on the test that names the fault,
 * with the rule id and the hint in every failure message. The kit runs through the JUnit Platform
 * launcher, as a user's build would run it.
 */
class KitBitesTest {

    /** How long the whole kit over a store whose markPublished deletes nothing may take. */
    private static final Duration NEVER_EMPTIES_BOUND = Duration.ofSeconds(30);

    /** How long one kit test over a store that blocks or throws in every call may take: seconds, not a hang. */
    private static final Duration TEST_BOUND = Duration.ofSeconds(10);

    /** The call time limit of the kit over a store that blocks in every call. */
    private static final Duration BLOCKED_CALL = Duration.ofMillis(250);

    @ParameterizedTest(name = "{0}")
    @EnumSource(Fault.class)
    void theKitFailsExactlyTheRulesTheFaultBreaks(Fault fault) {
        Run run = runUntilCaught(fault);
        assertBites(fault, run, OutboxStoreTck.class);
        if (fault == Fault.DELETES_NOTHING) {
            assertThat(Duration.ofMillis(run.millis())).as("the whole kit over a store that never empties a bucket")
                    .isLessThan(NEVER_EMPTIES_BOUND);
        }
        if (fault == Fault.BLOCKS_IN_EVERY_CALL || fault == Fault.THROWS_FROM_EVERY_CALL) {
            assertThat(run.outcomes()).as("each kit test over a store that %s fails in seconds", fault.fault())
                    .allSatisfy(o -> assertThat(Duration.ofMillis(o.millis())).as(o.test()).isLessThan(TEST_BOUND));
        }
    }

    /** Without a fault the wrapper passes: every failure above comes from its fault. */
    @Test
    void theFaultyStoreWithoutAFaultPassesTheKit() {
        FaultyKit.fault = null;
        Run run = KitLauncher.run(FaultyKit.class);
        assertThat(run.failures()).as("failures of the faulty store without a fault").isEmpty();
        assertThat(run.outcomes()).as("the kit ran").hasSizeGreaterThan(60);
    }

    /** Every rule the kit tests has a bite that its own test catches. */
    @Test
    void everyRuleOfTheKitHasABite() {
        Set<String> kitRules = KitRules.tests(OutboxStoreTck.class).stream().map(t -> t.rule().id())
                .collect(Collectors.toCollection(TreeSet::new));
        Set<String> bitten = EnumSet.allOf(Fault.class).stream()
                .map(f -> KitRules.find(OutboxStoreTck.class, f.caughtBy()).orElseThrow().rule().id())
                .collect(Collectors.toCollection(TreeSet::new));
        assertThat(bitten).as("rules caught by a bite's own test").isEqualTo(kitRules);
    }

    private static Run runUntilCaught(Fault fault) {
        FaultyKit.fault = fault;
        Run run = KitLauncher.run(FaultyKit.class);
        // Race detectors catch a store without conditional writes often, not always: up to three runs.
        for (int i = 1; i < 3 && fault.stochastic() && !run.failedTests().contains(fault.caughtBy()); i++) {
            run = KitLauncher.run(FaultyKit.class);
        }
        return run;
    }

    /**
     * Asserts a bite: the run failed exactly the declared rules, the catching test among them, and
     * each failure message starts with its rule id and test name and ends with that test's hint.
     */
    static void assertBites(Bite bite, Run run, Class<?> kit) {
        System.out.printf("%s: %d of %d kit tests failed in %d ms, rules %s: %s%n", bite.name(), run.failures().size(),
                run.outcomes().size(), run.millis(), run.failedRules(), run.failedTests());
        run.outcomes().stream().filter(o -> o.millis() > 1_000)
                .forEach(o -> System.out.printf("  slow: %s took %d ms%n", o.test(), o.millis()));
        assertThat(run.outcomes()).as("the kit ran").hasSizeGreaterThanOrEqualTo(8);
        assertThat(run.failedTests()).as("kit tests failed by %s", bite.name()).contains(bite.caughtBy());
        Set<String> failed = new TreeSet<>(run.failedRules());
        failed.removeAll(racyRulesFailedOnlyByRaceDetectors(bite, run));
        assertThat(failed).as("rules failed by %s (%s)", bite.name(), bite.fault())
                .isEqualTo(new TreeSet<>(bite.rules()));
        for (Outcome failure : run.failures()) {
            KitFailure f = (KitFailure) failure.thrown();
            KitRule rule = KitRules.find(kit, f.testName()).orElseThrow().rule();
            assertThat(f.getMessage()).as("the failure message of %s", failure.test())
                    .startsWith(rule.id() + " (" + f.testName())
                    .endsWith("\nIf this fails, check: " + rule.ifThisFails());
        }
    }

    /** The bite's racy rules that failed in this run through stochastic kit tests only. */
    private static Set<String> racyRulesFailedOnlyByRaceDetectors(Bite bite, Run run) {
        Set<String> racy = new TreeSet<>(bite.racyRules());
        for (Outcome failure : run.failures()) {
            if (!failure.test().startsWith("stochastic_")) {
                racy.remove(((KitFailure) failure.thrown()).ruleId());
            }
        }
        return racy;
    }

    /** The kit over a faulty store; run only through the launcher. */
    static class FaultyKit extends InMemoryOutboxStoreTck {
        static volatile Fault fault;
        private FaultyStores.Storage storage;

        @Override
        protected TckEnvironment environment() {
            return TckEnvironment.defaults().withCallTimeout(fault == Fault.BLOCKS_IN_EVERY_CALL ? BLOCKED_CALL
                    : Duration.ofSeconds(5));
        }

        @Override
        protected void createStorage() {
            super.createStorage();
            long limit = InMemoryOutboxStore.DEFAULT_MAX_PAYLOAD_BYTES
                    + (fault == Fault.ACCEPTS_PAYLOADS_OVER_THE_LIMIT ? 100 : 0);
            storage = new FaultyStores.Storage(clock(), limit);
            InMemoryOutboxStoreProvider.register(registeredName(), storage.rows);
        }

        @Override
        protected OutboxStore newStore(Clock clock) {
            return FaultyStores.create(fault, storage, clock);
        }

        @Override
        protected void enqueue(OutboxStore store, List<OutboxMessage> messages) {
            if (fault == Fault.LOSES_RACING_WRITES) {
                FaultyStores.enqueueRacily(storage, messages);
                return;
            }
            super.enqueue(storage.rows, messages);
        }

        @Override
        protected void enqueueAndRollBack(OutboxStore store, List<OutboxMessage> messages) {
            if (fault == Fault.COMMITS_ON_ROLLBACK) {
                super.enqueue(storage.rows, messages);
                return;
            }
            super.enqueueAndRollBack(storage.rows, messages);
        }

        @Override
        protected OpenTransaction beginEnqueue(OutboxStore store, List<OutboxMessage> messages) {
            return super.beginEnqueue(storage.rows, messages);
        }

        @Override
        protected void insertRawRow(OutboxStore store, OutboxMessage message, int bucket) {
            super.insertRawRow(storage.rows, message, bucket);
        }

        @Override
        protected void corruptStoredHeaders(OutboxStore store, OutboxMessage message) {
            storage.corrupt.add(message.messageId());
        }

        @Override
        protected String providerName() {
            if (isDown()) {
                return FaultyStores.DownProvider.NAME;
            }
            return fault == Fault.PROVIDER_IGNORES_UNKNOWN_SETTINGS ? FaultyStores.LaxProvider.NAME : super.providerName();
        }

        @Override
        protected Map<String, String> providerConfig() {
            return isDown() ? Map.of(FaultyStores.DownProvider.FAULT, fault.name()) : super.providerConfig();
        }

        private static boolean isDown() {
            return fault == Fault.BLOCKS_IN_EVERY_CALL || fault == Fault.THROWS_FROM_EVERY_CALL;
        }
    }
}
