package io.outbox.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.outbox.OutboxMessage;
import io.outbox.spi.OutboxStore;
import io.outbox.tck.FaultyStores.Fault;
import java.time.Clock;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;

/**
 * A kit that cannot fail is worthless: each broken variant of the reference store must make the
 * kit fail, on the rule that names its fault. The kit is run programmatically through the JUnit
 * Platform launcher, as a user's build would run it.
 */
class KitBitesTest {

    @ParameterizedTest(name = "{0} is caught by {1}")
    @CsvSource({
        "IGNORES_LEASE_EXPIRY,             required_S6_aStoppedRelaysBucketsAreTakenOverAfterTheLeaseDuration",
        "GRANTS_WITHOUT_CONDITIONAL_CHECK, stochastic_S5_noBucketIsEverHeldByTwoRelaysUnderContention|stochastic_S5_simultaneousClaimsAfterMassExpiryNeverGrantABucketTwice",
        "RETURNS_BATCH_OUT_OF_ORDER,       required_S1_nextBatchReturnsAtMostMaxCountOldestFirst",
        "DELETES_BEYOND_THE_PREFIX,        required_S2_markPublishedDeletesExactlyThePrefix",
        "DROPS_ROWS_IN_UNKNOWN_BUCKETS,    required_S8_rowsOutsideTheBucketRangeAreFatal",
        "DELETES_BY_SEQUENCE_RANGE,        required_S2_markPublishedSparesAMessageCommittedLate",
        "READ_BACK_INCLUDES_EXPIRED_LEASES, required_S6_aLeaseStopsCountingAtItsExpiryInstant",
        "IGNORES_ROWS_BELOW_BUCKET_ZERO,   required_S8_rowsBelowBucketZeroAreFatal",
        "READS_A_NEGATIVE_BUCKET,          required_S1_nextBatchRefusesANegativeBucket",
        "ACCEPTS_MAX_COUNT_BELOW_ONE,      required_S1_nextBatchRefusesMaxCountBelowOne",
        "PROBES_NEGATIVE_BUCKETS,          required_S3_bucketsWithPendingRefusesANegativeBucket",
        "IGNORES_FOREIGN_MESSAGES,         required_S2_markPublishedRefusesAForeignMessage",
        "DELETES_FROM_ANOTHER_BUCKET,      required_S2_markPublishedRefusesAnotherBucketsMessage",
        "JUDGES_EXPIRY_BY_CLOCK,           required_S13_relaysWithClocksFarApartKeepFairSharesAndNeverShareABucket",
        "JUDGES_EXPIRY_BY_CLOCK,           required_S13_aClockJumpNeitherStealsNorLosesLeases",
        "JUDGES_EXPIRY_BY_CLOCK,           required_S13_aDeadRelaysBucketsAreTakenOverWithinALeaseDurationOfObservation",
        "IGNORES_LEASE_EXPIRY,             required_S13_aDeadRelaysBucketsAreTakenOverWithinALeaseDurationOfObservation",
        "READS_AHEAD_AFTER_THE_LAST_POSITION, optional_C5_readAheadLeavesOutTheBatchInFlight"
    })
    void brokenStoreFailsTheKit(Fault fault, String expectedFailures) {
        // "a|b": either rule may catch the fault. Race detectors (stochastic_) catch a store without
        // conditional writes often, not always, so the kit runs up to three times for them.
        java.util.List<String> expected = java.util.List.of(expectedFailures.split("\\|"));
        int runs = expected.stream().anyMatch(name -> name.startsWith("stochastic_")) ? 3 : 1;
        Set<String> failed = new TreeSet<>();
        java.util.Map<String, String> messages = new java.util.concurrent.ConcurrentHashMap<>();
        for (int run = 0; run < runs && expected.stream().noneMatch(failed::contains); run++) {
            runKit(fault, failed, messages);
        }
        String expectedFailure = expected.stream().filter(failed::contains).findFirst().orElse(expected.get(0));
        assertThat(failed).as("kit failures for a store that %s", fault).contains(expectedFailure);
        TckRule rule = TckRule.forTest(expectedFailure).orElseThrow();
        assertThat(messages.get(expectedFailure)).as("the failure message of %s", expectedFailure)
                .startsWith(rule.ruleId() + " (" + expectedFailure + "): ")
                .endsWith("If this fails, check: " + rule.ifThisFailsCheck());
    }

    private static void runKit(Fault fault, Set<String> failed, java.util.Map<String, String> messages) {
        FaultyKit.fault = fault;
        TestExecutionListener failures = new TestExecutionListener() {
            @Override
            public void executionFinished(TestIdentifier test, TestExecutionResult result) {
                if (result.getStatus() == TestExecutionResult.Status.FAILED
                        && test.getSource().orElse(null) instanceof MethodSource method) {
                    failed.add(method.getMethodName());
                    result.getThrowable().ifPresent(t -> messages.put(method.getMethodName(), String.valueOf(t.getMessage())));
                }
            }
        };
        SummaryGeneratingListener summary = new SummaryGeneratingListener();
        Launcher launcher = LauncherFactory.create();
        launcher.execute(LauncherDiscoveryRequestBuilder.request().selectors(selectClass(FaultyKit.class)).build(),
                failures, summary);

        System.out.printf("%s: %d of %d kit tests failed: %s%n", fault, summary.getSummary().getTotalFailureCount(),
                summary.getSummary().getTestsStartedCount(), failed);
        assertThat(summary.getSummary().getTestsStartedCount()).as("the kit ran").isGreaterThan(20);
    }

    /** The kit over a faulty store; run only through the launcher above. */
    static class FaultyKit extends InMemoryOutboxStoreTck {
        static volatile Fault fault;
        private FaultyStores.Storage storage;

        @Override
        protected void createStorage() {
            super.createStorage();
            storage = new FaultyStores.Storage(clock());
            InMemoryOutboxStoreProvider.register(registeredName(), storage.rows);
        }

        @Override
        protected OutboxStore newStore(Clock clock) {
            return FaultyStores.create(fault, storage, clock);
        }

        @Override
        protected void enqueue(OutboxStore store, List<OutboxMessage> messages) {
            super.enqueue(storage.rows, messages);
        }

        @Override
        protected void enqueueAndRollBack(OutboxStore store, List<OutboxMessage> messages) {
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
    }
}
