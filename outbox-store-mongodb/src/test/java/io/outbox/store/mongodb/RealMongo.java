package io.outbox.store.mongodb;

import org.testcontainers.containers.MongoDBContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * One real MongoDB single-node replica set in Docker, shared by every Testcontainers test class of
 * the run and started on first use. The classes that use it carry
 * {@code @Testcontainers(disabledWithoutDocker = true)}, so without Docker they are reported as
 * skipped and this is never started.
 */
final class RealMongo {

    /** The image, pinned; {@value #IMAGE_VARIABLE} overrides it. */
    static final String DEFAULT_IMAGE = "mongo:7.0.14";

    /** The variable that overrides the image, for example to test another server version. */
    static final String IMAGE_VARIABLE = "OUTBOX_TEST_MONGO_IMAGE";

    private static MongoDBContainer container;

    private RealMongo() {
    }

    /**
     * Starts the replica set if needed.
     *
     * @return its connection string, with {@code replicaSet} set
     */
    static synchronized String connectionString() {
        if (container == null) {
            String image = System.getenv().getOrDefault(IMAGE_VARIABLE, DEFAULT_IMAGE);
            MongoDBContainer started = new MongoDBContainer(DockerImageName.parse(image).asCompatibleSubstituteFor("mongo"));
            started.start();
            container = started;
        }
        return container.getReplicaSetUrl();
    }
}
