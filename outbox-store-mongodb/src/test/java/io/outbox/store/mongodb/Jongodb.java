package io.outbox.store.mongodb;

import static org.junit.jupiter.api.Assertions.fail;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import java.util.concurrent.TimeUnit;
import org.bson.Document;

/**
 * The jongodb emulator (a single-node replica set with sessions and transactions) that
 * {@code scripts/test.sh} installs, starts and announces in {@value #URI_VARIABLE}. Tests that
 * need it fail, never skip, when it is missing.
 */
final class Jongodb {

    /** The variable {@code scripts/test.sh} exports. */
    static final String URI_VARIABLE = "OUTBOX_TEST_JONGODB_URI";

    /** Why the first connection failed, so later tests fail at once with the same reason. */
    private static volatile String unreachable;

    /** The connection string once a client has reached jongodb through it. */
    private static volatile String reached;

    private Jongodb() {
    }

    /**
     * The connection string, once jongodb has answered through it (checked on the first call).
     *
     * @return the value of {@value #URI_VARIABLE}
     */
    static String connectionString() {
        if (reached == null) {
            connect().close();
            reached = System.getenv(URI_VARIABLE);
        }
        return reached;
    }

    /**
     * Connects to jongodb and checks that it answers.
     *
     * @return a client the caller closes
     */
    static MongoClient connect() {
        String uri = System.getenv(URI_VARIABLE);
        if (uri == null || uri.isBlank()) {
            fail(URI_VARIABLE + " is not set. These tests need the jongodb MongoDB emulator (it has transactions); "
                    + "run them with scripts/test.sh, which installs jongodb from npm, starts it and sets the "
                    + "variable, for example: bash scripts/test.sh -pl outbox-store-mongodb -am");
        }
        if (unreachable != null) {
            fail(unreachable);
        }
        MongoClient client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(uri))
                .applyToClusterSettings(cluster -> cluster.serverSelectionTimeout(10, TimeUnit.SECONDS))
                .build());
        try {
            client.getDatabase("admin").runCommand(new Document("ping", 1));
            return client;
        } catch (MongoException e) {
            client.close();
            unreachable = "jongodb at " + URI_VARIABLE + "=" + uri + " did not answer within 10 s (" + e.getMessage()
                    + "). Start it with scripts/test.sh, which runs it for the duration of the build.";
            return fail(unreachable, e);
        }
    }
}
