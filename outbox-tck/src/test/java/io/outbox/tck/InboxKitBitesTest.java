package io.outbox.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

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

/** Each broken variant of the in-memory inbox must make the inbox kit fail on the rule naming its fault. */
class InboxKitBitesTest {

    @ParameterizedTest(name = "{0} is caught by {1}")
    @CsvSource({
        "CHECK_THEN_INSERT,          required_I1_concurrentDeliveriesOfOneIdHaveExactlyOneFirst",
        "MARKER_OUTSIDE_TRANSACTION, required_I1_rollbackLeavesNoMarker",
        "KEY_WITHOUT_CONSUMER,       required_I1_sameIdCountsOncePerConsumerName",
        "CLEANUP_INCLUSIVE_CUTOFF,   required_I2_retentionDeletesOnlyOldMarkers",
        "UNBOUNDED_BATCH,            required_I2_cleanupRunsInBoundedBatches"
    })
    void brokenInboxFailsTheKit(InMemoryInbox.Fault fault, String expectedFailure) {
        FaultyInboxKit.current = fault;
        Set<String> failed = new TreeSet<>();
        TestExecutionListener failures = new TestExecutionListener() {
            @Override
            public void executionFinished(TestIdentifier test, TestExecutionResult result) {
                if (result.getStatus() == TestExecutionResult.Status.FAILED
                        && test.getSource().orElse(null) instanceof MethodSource method) {
                    failed.add(method.getMethodName());
                }
            }
        };
        SummaryGeneratingListener summary = new SummaryGeneratingListener();
        Launcher launcher = LauncherFactory.create();
        launcher.execute(LauncherDiscoveryRequestBuilder.request().selectors(selectClass(FaultyInboxKit.class)).build(),
                failures, summary);
        assertThat(summary.getSummary().getTestsStartedCount()).as("the kit ran").isGreaterThanOrEqualTo(8);
        assertThat(failed).as("kit failures for an inbox with fault %s", fault).contains(expectedFailure);
    }

    /** The kit over a faulty inbox; run only through the launcher above. */
    static class FaultyInboxKit extends InMemoryInboxTckTest {
        static volatile InMemoryInbox.Fault current;

        @Override
        InMemoryInbox.Fault fault() {
            return current;
        }
    }
}
