package io.outbox.store.dynamodb;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/** A DynamoDB endpoint the tests run against: dynoxide (started by scripts/test.sh) or LocalStack. */
record DynamoDbBackend(String name, URI endpoint, String region, String accessKey, String secretKey) {

    /** The variable scripts/test.sh exports after starting dynoxide. */
    static final String DYNOXIDE_VARIABLE = "OUTBOX_TEST_DYNAMODB_ENDPOINT";

    /**
     * The dynoxide emulator the test script started. Fails, never skips, when it is not there.
     *
     * @throws IllegalStateException naming the script when the variable is missing or the endpoint
     *     does not answer
     */
    static DynamoDbBackend dynoxide() {
        String endpoint = System.getenv(DYNOXIDE_VARIABLE);
        if (endpoint == null || endpoint.isBlank()) {
            throw new IllegalStateException(DYNOXIDE_VARIABLE + " is not set. Run the tests with `bash scripts/test.sh`,"
                    + " which installs dynoxide (pinned) and starts it, or start dynoxide yourself"
                    + " (`dynoxide serve --host 127.0.0.1 --port P`) and export " + DYNOXIDE_VARIABLE
                    + "=http://127.0.0.1:P.");
        }
        URI uri = URI.create(endpoint.trim());
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(uri.getHost(), uri.getPort()), 2_000);
        } catch (IOException e) {
            throw new IllegalStateException(DYNOXIDE_VARIABLE + "=" + endpoint + " does not answer (" + e
                    + "). Run the tests with `bash scripts/test.sh`, which starts dynoxide.", e);
        }
        return new DynamoDbBackend("dynoxide", uri, "us-east-1", "outbox-test", "outbox-test");
    }

    /**
     * A new client for this backend.
     *
     * @param interceptors interceptors to add, for counting calls
     * @return the client; the caller closes it
     */
    DynamoDbClient newClient(ExecutionInterceptor... interceptors) {
        return DynamoDbClient.builder()
                .httpClientBuilder(UrlConnectionHttpClient.builder())
                .endpointOverride(endpoint)
                .region(Region.of(region))
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKey, secretKey)))
                .overrideConfiguration(o -> o.executionInterceptors(List.of(interceptors)))
                .build();
    }

    /** Provider settings reaching this backend and the given tables. */
    Map<String, String> providerConfig(DynamoDbOutboxOptions tables) {
        return Map.of(DynamoDbOutboxStoreProvider.ENDPOINT, endpoint.toString(),
                DynamoDbOutboxStoreProvider.REGION, region,
                DynamoDbOutboxStoreProvider.ACCESS_KEY_ID, accessKey,
                DynamoDbOutboxStoreProvider.SECRET_ACCESS_KEY, secretKey,
                DynamoDbOutboxStoreProvider.MESSAGES_TABLE, tables.messagesTable(),
                DynamoDbOutboxStoreProvider.COORDINATION_TABLE, tables.coordinationTable());
    }

    /** Options with table names no other test uses (the emulator has no region or account isolation). */
    static DynamoDbOutboxOptions uniqueTables() {
        String id = UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        return DynamoDbOutboxOptions.builder()
                .messagesTable("outbox_" + id + "_messages")
                .coordinationTable("outbox_" + id + "_coordination")
                .build();
    }

    /** A store builder on these tables. */
    static DynamoDbOutboxStore.Builder storeOn(DynamoDbClient client, DynamoDbOutboxOptions tables) {
        return DynamoDbOutboxStore.builder(client).messagesTable(tables.messagesTable())
                .coordinationTable(tables.coordinationTable());
    }

    /** Creates both tables, as {@link DynamoDbOutboxStore#createSchema()} does. */
    static void createTables(DynamoDbClient client, DynamoDbOutboxOptions tables) {
        storeOn(client, tables).build().createSchema();
    }

    /** Deletes both tables, ignoring ones already gone. */
    static void dropTables(DynamoDbClient client, DynamoDbOutboxOptions tables) {
        for (String table : List.of(tables.messagesTable(), tables.coordinationTable())) {
            try {
                client.deleteTable(r -> r.tableName(table));
            } catch (software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException gone) {
                // nothing to drop
            }
        }
    }
}
