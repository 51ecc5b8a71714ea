package io.outbox.store.mongodb;

/** The store's own behaviour tests on mongo-java-server, in process. */
class InProcessMongoOutboxStoreTest extends AbstractMongoOutboxStoreTest {

    @Override
    protected String connectionString() {
        return InProcessMongo.connectionString();
    }
}
