package io.outbox.tck;

import io.outbox.tck.KitRules.KitTest;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;
import org.opentest4j.TestAbortedException;

/**
 * Makes every failure of a kit test name its rule: the message starts with the rule id and the
 * test name and ends with the hint of the test's {@link KitRule}. A failed assertion, a timeout, or
 * an exception the store or the fixture threw all become a {@link KitFailure} with the original as
 * its cause. A {@link RuleViolation} a helper found is reported as a failure of the rule it names,
 * with that rule's hint. A skipped assumption passes unchanged. Registered on {@link OutboxStoreTck}
 * and {@link InboxTck}.
 */
final class RuleHints implements TestExecutionExceptionHandler {

    @Override
    public void handleTestExecutionException(ExtensionContext context, Throwable thrown) throws Throwable {
        if (thrown instanceof TestAbortedException || thrown instanceof KitFailure) {
            throw thrown;
        }
        Class<?> testClass = context.getRequiredTestClass();
        KitTest own = KitRules.find(testClass, context.getRequiredTestMethod().getName()).orElse(null);
        if (own == null) {
            throw thrown;
        }
        KitTest broken = thrown instanceof RuleViolation v ? KitRules.find(testClass, v.testName()).orElse(own) : own;
        String where = broken == own ? own.name() : broken.name() + ", found by " + own.name();
        String detail = thrown instanceof AssertionError ? String.valueOf(thrown.getMessage()).strip()
                : "threw " + thrown;
        KitFailure failure = new KitFailure(broken.rule().id(), broken.name(), broken.rule().id() + " (" + where + "): "
                + detail + "\nIf this fails, check: " + broken.rule().ifThisFails(), thrown);
        failure.setStackTrace(thrown.getStackTrace());
        throw failure;
    }
}
