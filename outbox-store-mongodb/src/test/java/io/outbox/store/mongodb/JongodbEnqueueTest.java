package io.outbox.store.mongodb;

import com.mongodb.client.MongoClient;

/**
 * The transactional enqueue tests on jongodb, the single-node replica set emulator that
 * {@code scripts/test.sh} starts ({@value Jongodb#URI_VARIABLE}). Fails with a message naming the
 * script when jongodb is not there.
 */
class JongodbEnqueueTest extends AbstractMongoEnqueueTest {

    @Override
    protected MongoClient connect() {
        return Jongodb.connect();
    }
}
