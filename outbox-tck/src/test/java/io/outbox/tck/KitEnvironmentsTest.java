package io.outbox.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * The kit must not fail a correct store for any environment {@link TckEnvironment} accepts: the
 * reference store passes it with small, odd and large bucket counts and the smallest contention
 * settings.
 */
class KitEnvironmentsTest {

    static Stream<TckEnvironment> environments() {
        TckEnvironment d = TckEnvironment.defaults();
        return Stream.of(
                new TckEnvironment(2, d.leaseDuration(), 2, 40, 10, d.concurrencyTimeout()),
                new TckEnvironment(3, Duration.ofMillis(10), 3, 40, 30, d.concurrencyTimeout()),
                new TckEnvironment(16, d.leaseDuration(), 6, 60, 100, d.concurrencyTimeout()),
                new TckEnvironment(32, Duration.ofMinutes(5), 4, 60, 100, d.concurrencyTimeout()));
    }

    @ParameterizedTest
    @MethodSource("environments")
    void referenceStorePassesTheKit(TckEnvironment environment) {
        TunedKit.environment = environment;
        List<String> failures = new ArrayList<>();
        LauncherFactory.create().execute(
                LauncherDiscoveryRequestBuilder.request().selectors(selectClass(TunedKit.class)).build(),
                new TestExecutionListener() {
                    @Override
                    public void executionFinished(TestIdentifier test, TestExecutionResult result) {
                        // The in-memory store keeps decoded messages: it cannot hold a corrupt row (R12).
                        boolean noCorruptRows = result.getStatus() == TestExecutionResult.Status.ABORTED
                                && String.valueOf(result.getThrowable().orElse(null)).contains("corruptStoredHeaders");
                        if (result.getStatus() != TestExecutionResult.Status.SUCCESSFUL && !noCorruptRows) {
                            failures.add(test.getDisplayName() + ": " + result.getThrowable().orElse(null));
                        }
                    }
                });
        assertThat(failures).as("kit failures for the reference store with %s", environment).isEmpty();
    }

    /** The kit over the reference store with a chosen environment; run only through the launcher. */
    static class TunedKit extends InMemoryOutboxStoreTest {
        static volatile TckEnvironment environment;

        @Override
        protected TckEnvironment environment() {
            return environment;
        }
    }
}
