package io.outbox.tck;

/**
 * A kit helper's finding that a store broke another rule than the one of the test running: a batch
 * acknowledged with {@code markPublished} came back (S2), an acquire's answer is not a sorted set
 * of buckets in range (S4), two relays hold one bucket (S5). The kit reports it as a failure of
 * that rule, with the hint of the kit test named here, so that a store is told which rule it broke
 * whichever test found it.
 */
final class RuleViolation extends AssertionError {

    /** The test whose rule and hint an S2 finding carries. */
    static final String S2 = "required_S2_markPublishedDeletesExactlyThePrefix";

    /** The test whose rule and hint an S4 finding carries. */
    static final String S4 = "required_S4_aLoneRelayAcquiresEveryBucket";

    /** The test whose rule and hint an S5 finding carries. */
    static final String S5 = "stochastic_S5_noBucketIsEverHeldByTwoRelaysUnderContention";

    private static final long serialVersionUID = 1L;

    private final String testName;

    /**
     * A finding.
     *
     * @param testName the kit test whose {@link KitRule} names the broken rule; one of the constants
     * @param detail what was found
     */
    RuleViolation(String testName, String detail) {
        super(detail);
        this.testName = testName;
    }

    /**
     * The kit test whose rule was broken.
     *
     * @return its method name
     */
    String testName() {
        return testName;
    }
}
