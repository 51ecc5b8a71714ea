package io.outbox.store.dynamodb;

/** The inbox kit on dynoxide, the emulator scripts/test.sh starts. */
class DynoxideInboxTckTest extends AbstractDynamoDbInboxTck {

    @Override
    DynamoDbBackend backend() {
        return DynamoDbBackend.dynoxide();
    }
}
