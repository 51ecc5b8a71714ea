package io.outbox.tck;

import io.outbox.tck.KitRules.KitTest;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * Prints, at the end of each kit class's run, one screen on standard output: the rules passed, the
 * rules failed with the first line of each failure, and the tests skipped with their reason, so a
 * store author sees what the kit made of the store without reading every report. A rule passes
 * when none of its tests failed and at least one passed; a rule whose test failed on another rule
 * (a helper found that rule broken first) is listed as not verified, with the rule it failed on.
 * Every rule whose tests ran is on one line. Registered on {@link OutboxStoreTck} and
 * {@link InboxTck}; JUnit runs its callbacks on the test's thread.
 */
final class KitSummary implements BeforeAllCallback, TestWatcher, AfterAllCallback {

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(KitSummary.class);

    /** What the tests of one kit class came to. */
    private static final class Run {
        final long startNanos = System.nanoTime();
        final Map<String, String> outcomes = new ConcurrentHashMap<>();
        final Map<String, String> failures = new ConcurrentHashMap<>();
        final Map<String, String> skips = new ConcurrentHashMap<>();
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        context.getStore(NAMESPACE).put(Run.class, new Run());
    }

    @Override
    public void testSuccessful(ExtensionContext context) {
        run(context).ifPresent(r -> r.outcomes.put(context.getRequiredTestMethod().getName(), "passed"));
    }

    @Override
    public void testFailed(ExtensionContext context, Throwable cause) {
        run(context).ifPresent(r -> {
            String name = context.getRequiredTestMethod().getName();
            r.outcomes.put(name, "failed");
            String rule = cause instanceof KitFailure f ? f.ruleId() : null;
            r.failures.put(name, (rule == null ? "" : rule + "\u0000") + firstLine(cause));
        });
    }

    @Override
    public void testAborted(ExtensionContext context, Throwable cause) {
        skipped(context, firstLine(cause));
    }

    @Override
    public void testDisabled(ExtensionContext context, Optional<String> reason) {
        skipped(context, reason.orElse("disabled"));
    }

    private void skipped(ExtensionContext context, String reason) {
        run(context).ifPresent(r -> {
            String name = context.getRequiredTestMethod().getName();
            r.outcomes.put(name, "skipped");
            r.skips.put(name, reason);
        });
    }

    @Override
    public void afterAll(ExtensionContext context) {
        Run run = context.getStore(NAMESPACE).remove(Run.class, Run.class);
        if (run != null) {
            print(context.getRequiredTestClass(), run, System.out);
        }
    }

    private static Optional<Run> run(ExtensionContext context) {
        return context.getParent().map(p -> p.getStore(NAMESPACE).get(Run.class, Run.class));
    }

    private static void print(Class<?> kit, Run run, PrintStream out) {
        Map<String, Integer> passed = new TreeMap<>(KitRules.ORDER);
        Map<String, List<String>> failed = new TreeMap<>(KitRules.ORDER);
        Map<String, Map<String, List<String>>> skipped = new TreeMap<>(KitRules.ORDER);
        Map<String, List<String>> unverified = new TreeMap<>(KitRules.ORDER);
        for (KitTest test : KitRules.tests(kit)) {
            String outcome = run.outcomes.get(test.name());
            if (outcome == null) {
                continue; // not run: filtered out by the build
            }
            String id = test.rule().id();
            switch (outcome) {
                case "failed" -> {
                    String failure = run.failures.get(test.name());
                    int split = failure.indexOf('\u0000');
                    String broken = split < 0 ? id : failure.substring(0, split);
                    failed.computeIfAbsent(broken, k -> new ArrayList<>()).add(failure.substring(split + 1));
                    if (!broken.equals(id)) {
                        unverified.computeIfAbsent(id, k -> new ArrayList<>()).add(test.name() + " failed on " + broken);
                    }
                }
                case "skipped" -> skipped.computeIfAbsent(id, k -> new TreeMap<>())
                        .computeIfAbsent(run.skips.get(test.name()), k -> new ArrayList<>()).add(test.name());
                default -> passed.merge(id, 1, Integer::sum);
            }
        }
        passed.keySet().removeAll(failed.keySet());
        passed.keySet().removeAll(unverified.keySet());
        unverified.keySet().removeAll(failed.keySet());
        List<String> onlySkipped = skipped.keySet().stream()
                .filter(id -> !passed.containsKey(id) && !failed.containsKey(id) && !unverified.containsKey(id))
                .toList();
        long millis = (System.nanoTime() - run.startNanos) / 1_000_000;
        StringBuilder s = new StringBuilder();
        s.append(String.format("%n== Outbox kit: %s, %d tests in %.1f s ==%n", kit.getName(), run.outcomes.size(),
                millis / 1000.0));
        s.append(String.format("rules passed  (%d): %s%n", passed.size(), list(passed.keySet())));
        s.append(String.format("rules failed  (%d): %s%n", failed.size(), list(failed.keySet())));
        failed.values().forEach(lines -> lines.forEach(l -> s.append("  ").append(l).append(System.lineSeparator())));
        s.append(String.format("rules not verified (%d): %s%n", unverified.size(), list(unverified.keySet())));
        unverified.forEach((id, tests) -> tests.forEach(t -> s.append("  ").append(id).append(' ').append(t)
                .append(System.lineSeparator())));
        s.append(String.format("rules skipped (%d): %s%n", onlySkipped.size(), list(onlySkipped)));
        skipped.forEach((id, reasons) -> reasons.forEach((reason, tests) -> s.append(String.format("  %s %s: %s%n", id,
                tests.size() == 1 ? tests.get(0) : tests.size() + " tests", reason))));
        out.print(s);
        out.flush();
    }

    private static String list(Collection<String> ids) {
        return ids.isEmpty() ? "none" : String.join(" ", ids);
    }

    private static String firstLine(Throwable t) {
        String message = String.valueOf(t.getMessage());
        int end = message.indexOf('\n');
        String line = end < 0 ? message : message.substring(0, end);
        return line.length() > 160 ? line.substring(0, 157) + "..." : line;
    }
}
