package io.outbox.store.dynamodb;

/** The full store compatibility kit on dynoxide, the emulator scripts/test.sh starts. */
class DynoxideStoreTckTest extends AbstractDynamoDbStoreTck {

    @Override
    DynamoDbBackend backend() {
        return DynamoDbBackend.dynoxide();
    }
}
