package io.outbox.tck;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.EnumSet;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Each broken variant of the in-memory inbox must make the inbox kit fail exactly the rules its fault
 * breaks, on the test that names the fault, with the rule id and the hint in the message.
 */
class InboxKitBitesTest {

    @ParameterizedTest(name = "{0}")
    @EnumSource(InMemoryInbox.Fault.class)
    void theInboxKitFailsExactlyTheRulesTheFaultBreaks(InMemoryInbox.Fault fault) {
        FaultyInboxKit.current = fault;
        KitBitesTest.assertBites(fault, KitLauncher.run(FaultyInboxKit.class), InboxTck.class);
    }

    /** Every test of the inbox kit has a bite that it catches. */
    @Test
    void everyInboxKitTestHasABite() {
        List<String> tests = KitRules.tests(InboxTck.class).stream().map(KitRules.KitTest::name).sorted().toList();
        List<String> caught = EnumSet.allOf(InMemoryInbox.Fault.class).stream().map(InMemoryInbox.Fault::caughtBy)
                .sorted().collect(Collectors.toList());
        assertThat(caught).as("inbox kit tests a bite is caught by").isEqualTo(tests);
    }

    /** The kit over a faulty inbox; run only through the launcher. */
    static class FaultyInboxKit extends InMemoryInboxTckTest {
        static volatile InMemoryInbox.Fault current;

        @Override
        InMemoryInbox.Fault fault() {
            return current;
        }
    }
}
