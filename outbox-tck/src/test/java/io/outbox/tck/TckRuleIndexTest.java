package io.outbox.tck;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The rule index lists every kit test exactly once, and each name states its binding and rule. */
class TckRuleIndexTest {

    @Test
    void everyKitTestHasOneIndexEntryAndEveryEntryATest() {
        List<String> tests = java.util.stream.Stream.of(OutboxStoreTck.class, DeadLetterRules.class)
                .flatMap(c -> Arrays.stream(c.getDeclaredMethods()))
                .filter(m -> m.isAnnotationPresent(Test.class)).map(Method::getName).sorted().toList();
        List<String> indexed = Arrays.stream(TckRule.values()).map(TckRule::testName).sorted().toList();
        assertThat(indexed).as("TckRule's tests").doesNotHaveDuplicates().containsExactlyElementsOf(tests);
    }

    @Test
    void everyEntryNamesItsBindingAndRuleAndCarriesAHint() {
        for (TckRule rule : TckRule.values()) {
            assertThat(rule.testName()).as("%s", rule)
                    .startsWith(rule.binding().name().toLowerCase() + "_" + rule.ruleId() + "_");
            assertThat(rule.ifThisFailsCheck()).as("%s's hint", rule).isNotBlank();
            assertThat(rule.describe("x")).startsWith(rule.ruleId() + " (" + rule.testName() + "): x")
                    .contains("If this fails, check: " + rule.ifThisFailsCheck());
        }
    }

    @Test
    void raceTestsAreNamedStochastic() throws Exception {
        for (String race : List.of("stochastic_S5_noBucketIsEverHeldByTwoRelaysUnderContention",
                "stochastic_S5_simultaneousClaimsAfterMassExpiryNeverGrantABucketTwice",
                "stochastic_S12_oneStoreInstanceServesConcurrentCallers",
                "stochastic_E5_concurrentWritersLoseNothingAndKeepTheirOrder")) {
            assertThat(Modifier.isPublic(OutboxStoreTck.class.getMethod(race).getModifiers())).isTrue();
        }
    }
}
