package io.outbox.store.mongodb;

import org.testcontainers.junit.jupiter.Testcontainers;

/**
 * The store's own behaviour tests on a real MongoDB replica set in Docker: the 16 MiB boundary as
 * the real server enforces it, concurrent counter reservations, document shapes. Skipped, with the
 * reason, where Docker is not available.
 */
@Testcontainers(disabledWithoutDocker = true)
class RealMongoOutboxStoreTest extends AbstractMongoOutboxStoreTest {

    @Override
    protected String connectionString() {
        return RealMongo.connectionString();
    }
}
