package io.outbox.tck;

/**
 * A kit test's failure as reported: the message starts with the rule id and the test name and ends
 * with the rule's hint; the original failure is the cause. Made by {@link RuleHints}, read by the
 * summary ({@link KitSummary}) and by the kit's own tests.
 */
final class KitFailure extends AssertionError {

    private static final long serialVersionUID = 1L;

    private final String ruleId;
    private final String testName;

    KitFailure(String ruleId, String testName, String message, Throwable cause) {
        super(message, cause);
        this.ruleId = ruleId;
        this.testName = testName;
    }

    /**
     * The rule the failure is one of: the test's own, or the one a helper found broken.
     *
     * @return the rule id
     */
    String ruleId() {
        return ruleId;
    }

    /**
     * The kit test whose hint the message carries.
     *
     * @return its method name
     */
    String testName() {
        return testName;
    }
}
