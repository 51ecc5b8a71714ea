package io.outbox.store.mongodb;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import org.testcontainers.junit.jupiter.Testcontainers;

/**
 * The whole inbox kit on a real MongoDB replica set in Docker, where write conflicts between
 * transactions exist: the concurrency rule (I1) holds there as it must in production. Skipped,
 * with the reason, where Docker is not available.
 */
@Testcontainers(disabledWithoutDocker = true)
class RealMongoInboxTckTest extends AbstractMongoInboxTck {

    @Override
    MongoClient connect() {
        return MongoClients.create(RealMongo.connectionString());
    }
}
