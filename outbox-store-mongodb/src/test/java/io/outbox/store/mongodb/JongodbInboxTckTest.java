package io.outbox.store.mongodb;

import com.mongodb.client.MongoClient;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

/**
 * The inbox kit on jongodb, the MongoDB emulator with transactions that {@code scripts/test.sh}
 * starts ({@value Jongodb#URI_VARIABLE}). Every rule runs here except the concurrent one, which
 * jongodb 0.1.6 cannot pass: {@link RealMongoInboxTckTest} runs it on a real server.
 */
class JongodbInboxTckTest extends AbstractMongoInboxTck {

    @Override
    MongoClient connect() {
        return Jongodb.connect();
    }

    /**
     * Not run on jongodb: when transactions race for one marker, jongodb 0.1.6 lets several of them
     * upsert it, fails the later commits with a bare WriteConflict or a duplicate key (dropping the
     * connection), and still applies those transactions' other writes, so the business effect is
     * written several times. A real MongoDB fails the later transaction as a whole with a
     * TransientTransactionError; see RealMongoInboxTckTest.
     */
    @Override
    @Test
    @Disabled("jongodb 0.1.6 commits transactions partially when they race for one document (seen: 6 effects for"
            + " 1 first delivery among 8 consumers); the rule runs on a real MongoDB in RealMongoInboxTckTest")
    public void required_I1_concurrentDeliveriesOfOneIdHaveExactlyOneFirst() {
    }
}
