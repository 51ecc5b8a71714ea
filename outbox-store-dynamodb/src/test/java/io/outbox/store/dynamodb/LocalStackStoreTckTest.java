package io.outbox.store.dynamodb;

import org.testcontainers.junit.jupiter.Testcontainers;

/** The full store compatibility kit on LocalStack; skipped, with the reason, where Docker is missing. */
@Testcontainers(disabledWithoutDocker = true)
class LocalStackStoreTckTest extends AbstractDynamoDbStoreTck {

    @Override
    DynamoDbBackend backend() {
        return LocalStackBackend.get();
    }
}
