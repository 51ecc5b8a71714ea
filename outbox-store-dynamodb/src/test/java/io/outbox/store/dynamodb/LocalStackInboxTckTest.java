package io.outbox.store.dynamodb;

import org.testcontainers.junit.jupiter.Testcontainers;

/** The inbox kit on LocalStack; skipped, with the reason, where Docker is missing. */
@Testcontainers(disabledWithoutDocker = true)
class LocalStackInboxTckTest extends AbstractDynamoDbInboxTck {

    @Override
    DynamoDbBackend backend() {
        return LocalStackBackend.get();
    }
}
