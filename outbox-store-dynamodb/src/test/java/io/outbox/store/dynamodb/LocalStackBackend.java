package io.outbox.store.dynamodb;

import org.testcontainers.containers.localstack.LocalStackContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * One LocalStack container (real DynamoDB API semantics as LocalStack implements them) shared by
 * every LocalStack test class of a run; started on first use, removed by Testcontainers at exit.
 * Only used by classes annotated {@code @Testcontainers(disabledWithoutDocker = true)}, so it is
 * never started where Docker is missing.
 */
final class LocalStackBackend {

    /** Pinned image: a LocalStack release whose community image runs without an auth token. */
    static final DockerImageName IMAGE = DockerImageName.parse("localstack/localstack:4.4.0");

    private static DynamoDbBackend backend;

    private LocalStackBackend() {
    }

    @SuppressWarnings("resource") // lives for the whole run; Testcontainers removes it at exit
    static synchronized DynamoDbBackend get() {
        if (backend == null) {
            LocalStackContainer container = new LocalStackContainer(IMAGE)
                    .withServices(LocalStackContainer.Service.DYNAMODB);
            container.start();
            backend = new DynamoDbBackend("localstack", container.getEndpoint(), container.getRegion(),
                    container.getAccessKey(), container.getSecretKey());
        }
        return backend;
    }
}
