package io.outbox.store.dynamodb;

import org.testcontainers.junit.jupiter.Testcontainers;

/** The enqueue tests on LocalStack; skipped, with the reason, where Docker is missing. */
@Testcontainers(disabledWithoutDocker = true)
class LocalStackEnqueueTest extends AbstractDynamoDbEnqueueTest {

    @Override
    DynamoDbBackend backend() {
        return LocalStackBackend.get();
    }
}
