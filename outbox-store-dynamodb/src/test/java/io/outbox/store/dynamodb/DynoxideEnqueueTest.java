package io.outbox.store.dynamodb;

/** The enqueue tests on dynoxide, the emulator scripts/test.sh starts. */
class DynoxideEnqueueTest extends AbstractDynamoDbEnqueueTest {

    @Override
    DynamoDbBackend backend() {
        return DynamoDbBackend.dynoxide();
    }
}
