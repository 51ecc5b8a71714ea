package io.outbox.store.mongodb;

import org.testcontainers.junit.jupiter.Testcontainers;

/**
 * The whole compatibility kit on a real MongoDB replica set in Docker, with every message enqueued
 * through the transactional helper inside a {@code ClientSession} transaction, so the kit's
 * rollback test (E4) runs too. Skipped, with the reason, where Docker is not available.
 */
@Testcontainers(disabledWithoutDocker = true)
class RealMongoOutboxStoreTckTest extends AbstractMongoOutboxStoreTck {

    @Override
    protected String connectionString() {
        return RealMongo.connectionString();
    }
}
