package io.outbox.store.mongodb;

import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

/**
 * The whole compatibility kit on jongodb, the MongoDB emulator with transactions that
 * {@code scripts/test.sh} starts ({@value Jongodb#URI_VARIABLE}), with every message enqueued
 * through the transactional helper inside a {@code ClientSession} transaction. Fails, never skips,
 * when jongodb is missing.
 *
 * <p>Four rules are not run here, each for a defect of jongodb 0.1.6 named in its reason; they run
 * on mongo-java-server in {@link MongoOutboxStoreTckTest} and on a real MongoDB in
 * {@link RealMongoOutboxStoreTckTest}. A fifth defect passes the kit but makes a relay publish
 * messages again: see {@link JongodbCommitDefectTest}.
 */
class JongodbOutboxStoreTckTest extends AbstractMongoOutboxStoreTck {

    @Override
    protected String connectionString() {
        return Jongodb.connectionString();
    }

    /** jongodb 0.1.6 has no dropDatabase command; each test's collections are emptied instead. */
    @Override
    protected boolean canDropDatabases() {
        return false;
    }

    @Override
    @Test
    @Disabled("jongodb 0.1.6 refuses the $min accumulator of $group (NotImplemented, 238) that pendingMetrics"
            + " uses; the rule runs in MongoOutboxStoreTckTest and RealMongoOutboxStoreTckTest")
    public void optional_C2_pendingMetricsCountEveryBucketAndFindTheOldest() {
    }

    @Override
    @Test
    @Disabled("jongodb 0.1.6 refuses the $min accumulator of $group (NotImplemented, 238) that pendingMetrics"
            + " uses, and this rule counts through pendingMetrics; it runs in MongoOutboxStoreTckTest and"
            + " RealMongoOutboxStoreTckTest")
    public void optional_C4_deadLettersAreNeverLeasedReadOrCounted() {
    }

    @Override
    @Test
    @Disabled("jongodb 0.1.6 does not sort binary _id values in MongoDB's byte order (seen in a direct query:"
            + " first bytes ff, 80, 01, 7f ascending), so pages by _id come out of order; the rule runs in"
            + " MongoOutboxStoreTckTest and RealMongoOutboxStoreTckTest")
    public void optional_C4_listPagesInIdOrderWithoutRepeats() {
    }

    @Override
    @Test
    @Disabled("jongodb 0.1.6 isolates concurrent transactions poorly: their $inc of one sequence counter"
            + " document loses increments (seen in a direct probe: 355 commits, counter at 95) and committed"
            + " messages go missing (seen: 316 of 360); the rule runs in MongoOutboxStoreTckTest (without"
            + " transactions) and RealMongoOutboxStoreTckTest")
    public void stochastic_E5_concurrentWritersLoseNothingAndKeepTheirOrder() {
    }
}
