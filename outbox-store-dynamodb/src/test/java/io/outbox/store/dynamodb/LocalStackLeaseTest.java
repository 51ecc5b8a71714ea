package io.outbox.store.dynamodb;

import org.testcontainers.junit.jupiter.Testcontainers;

/** The DynamoDB lease and cost tests on LocalStack; skipped, with the reason, where Docker is missing. */
@Testcontainers(disabledWithoutDocker = true)
class LocalStackLeaseTest extends AbstractDynamoDbLeaseTest {

    @Override
    DynamoDbBackend backend() {
        return LocalStackBackend.get();
    }
}
