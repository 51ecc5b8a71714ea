package io.outbox.store.dynamodb;

/** The DynamoDB lease and cost tests on dynoxide, the emulator scripts/test.sh starts. */
class DynoxideLeaseTest extends AbstractDynamoDbLeaseTest {

    @Override
    DynamoDbBackend backend() {
        return DynamoDbBackend.dynoxide();
    }
}
