package io.outbox.tck;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;

/**
 * Puts the rule id, the test name and the "if this fails, check" hint of {@link TckRule} into the
 * message of every assertion a kit test fails with, so a store author's report names the broken
 * rule and where to look without opening the kit's sources. Registered on {@link OutboxStoreTck};
 * other exceptions (a store's own error, a skipped assumption) pass unchanged.
 */
final class RuleHints implements TestExecutionExceptionHandler {

    @Override
    public void handleTestExecutionException(ExtensionContext context, Throwable thrown) throws Throwable {
        if (!(thrown instanceof AssertionError failure)) {
            throw thrown;
        }
        TckRule rule = context.getTestMethod().flatMap(m -> TckRule.forTest(m.getName())).orElse(null);
        if (rule == null || String.valueOf(failure.getMessage()).startsWith(rule.ruleId() + " (")) {
            throw thrown;
        }
        AssertionError described = new AssertionError(rule.describe(String.valueOf(failure.getMessage()).strip()),
                failure);
        described.setStackTrace(failure.getStackTrace());
        throw described;
    }
}
