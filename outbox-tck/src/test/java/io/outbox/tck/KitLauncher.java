package io.outbox.tck;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.TestExecutionResult.Status;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/** Runs a kit class through the JUnit Platform launcher, as a user's build would, and collects what each test came to. */
final class KitLauncher {

    /** One test's outcome and how long it took. */
    record Outcome(String test, Status status, Throwable thrown, long millis) {
        /** The rule a failure names, from its {@link KitFailure}; a failure without one names none. */
        String failedRule() {
            return thrown instanceof KitFailure f ? f.ruleId() : "(no rule: " + thrown + ")";
        }
    }

    /** A kit run's outcomes and how long it took. */
    record Run(List<Outcome> outcomes, long millis) {
        List<Outcome> failures() {
            return outcomes.stream().filter(o -> o.status() == Status.FAILED).toList();
        }

        Set<String> failedTests() {
            return new TreeSet<>(failures().stream().map(Outcome::test).toList());
        }

        Set<String> failedRules() {
            return new TreeSet<>(failures().stream().map(Outcome::failedRule).toList());
        }
    }

    private KitLauncher() {
    }

    static Run run(Class<?> kit) {
        List<Outcome> outcomes = Collections.synchronizedList(new ArrayList<>());
        Map<String, Long> started = new ConcurrentHashMap<>();
        long start = System.nanoTime();
        LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request().selectors(selectClass(kit)).build(),
                new TestExecutionListener() {
                    @Override
                    public void executionStarted(TestIdentifier test) {
                        started.put(test.getUniqueId(), System.nanoTime());
                    }

                    @Override
                    public void executionFinished(TestIdentifier test, TestExecutionResult result) {
                        if (test.getSource().orElse(null) instanceof MethodSource method) {
                            long took = (System.nanoTime() - started.getOrDefault(test.getUniqueId(), start)) / 1_000_000;
                            outcomes.add(new Outcome(method.getMethodName(), result.getStatus(),
                                    result.getThrowable().orElse(null), took));
                        }
                    }

                    @Override
                    public void executionSkipped(TestIdentifier test, String reason) {
                        if (test.getSource().orElse(null) instanceof MethodSource method) {
                            outcomes.add(new Outcome(method.getMethodName(), Status.ABORTED, null, 0));
                        }
                    }
                });
        return new Run(List.copyOf(outcomes), (System.nanoTime() - start) / 1_000_000);
    }
}
