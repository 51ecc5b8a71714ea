package io.outbox.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.tck.FaultyStores.Fault;
import io.outbox.tck.KitBitesTest.FaultyKit;
import io.outbox.tck.KitLauncher.Run;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The end-of-run summary over a store whose markPublished deletes nothing: a rule whose own test
 * failed (its failure re-attributed to S2 by a helper) must not be listed as passed, and every rule
 * the kit ran must appear in one of the passed, failed, not verified or skipped lines.
 */
class KitSummaryAccountsForEveryRuleTest {

    @Test
    void aRuleWithAFailedTestIsNeverListedAsPassedAndNoRuleVanishes() {
        FaultyKit.fault = Fault.DELETES_NOTHING;
        PrintStream original = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        Run run;
        try {
            System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
            run = KitLauncher.run(FaultyKit.class);
        } finally {
            System.setOut(original);
            FaultyKit.fault = null;
        }
        String summary = captured.toString(StandardCharsets.UTF_8);
        original.print(summary);
        Set<String> passed = rulesOn(summary, "rules passed");
        Set<String> listed = new TreeSet<>(passed);
        listed.addAll(rulesOn(summary, "rules failed"));
        listed.addAll(rulesOn(summary, "rules skipped"));
        listed.addAll(rulesOn(summary, "rules not verified"));
        Set<String> ownRulesOfFailedTests = run.failedTests().stream()
                .map(t -> KitRules.find(OutboxStoreTck.class, t).orElseThrow().rule().id())
                .collect(Collectors.toCollection(TreeSet::new));
        Set<String> ranRules = run.outcomes().stream()
                .map(o -> KitRules.find(OutboxStoreTck.class, o.test()).orElseThrow().rule().id())
                .collect(Collectors.toCollection(TreeSet::new));
        assertThat(passed).as("rules listed as passed although a test of theirs failed")
                .doesNotContainAnyElementsOf(ownRulesOfFailedTests);
        assertThat(listed).as("rules the summary accounts for").containsAll(ranRules);
    }

    private static Set<String> rulesOn(String summary, String label) {
        return summary.lines().filter(l -> l.startsWith(label)).findFirst()
                .map(l -> l.substring(l.indexOf(':') + 1).trim())
                .filter(s -> !s.equals("none"))
                .map(s -> new TreeSet<>(Arrays.asList(s.split(" "))))
                .orElseGet(TreeSet::new);
    }
}
