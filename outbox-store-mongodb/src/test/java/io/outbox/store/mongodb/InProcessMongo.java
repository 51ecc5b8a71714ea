package io.outbox.store.mongodb;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;

/**
 * One mongo-java-server (in memory, in this JVM) shared by every test class of the run, started
 * on first use and stopped when the JVM exits. Tests isolate themselves by database name. It has
 * atomic per-document updates but no sessions or transactions; see the project's TESTING notes.
 */
final class InProcessMongo {

    private static MongoServer server;
    private static String connectionString;

    private InProcessMongo() {
    }

    /**
     * Starts the server if needed.
     *
     * @return its connection string
     */
    static synchronized String connectionString() {
        if (server == null) {
            MongoServer started = new MongoServer(new MemoryBackend());
            connectionString = "mongodb://127.0.0.1:" + started.bind().getPort();
            Runtime.getRuntime().addShutdownHook(new Thread(started::shutdownNow, "mongo-java-server-shutdown"));
            server = started;
        }
        return connectionString;
    }
}
