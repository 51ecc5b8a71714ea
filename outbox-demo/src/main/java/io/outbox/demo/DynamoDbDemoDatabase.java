package io.outbox.demo;

import io.outbox.OutboxMessage;
import io.outbox.spi.CloseableOutboxStore;
import io.outbox.spi.OutboxStores;
import io.outbox.store.dynamodb.DynamoDbOutboxStore;
import io.outbox.store.dynamodb.DynamoDbOutboxStoreProvider;
import io.outbox.store.dynamodb.DynamoDbOutboxWriter;
import java.net.URI;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClientBuilder;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.CancellationReason;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.Put;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;

/**
 * The demo on DynamoDB (or an emulator such as dynoxide): an {@code orders} table (partition key
 * {@code customer}, sort key {@code seq}) and the store's two tables, named with the run's prefix.
 * An order is one {@code TransactWriteItems}: the guarded {@code Put} of the order and the item
 * {@link DynamoDbOutboxWriter#prepare(OutboxMessage)} returns for its message.
 */
final class DynamoDbDemoDatabase implements DemoDatabase {

    /** The region used with an endpoint when none is given; emulators accept any. */
    static final String DEFAULT_EMULATOR_REGION = "us-east-1";

    private static final int TRANSACTION_ATTEMPTS = 5;
    private static final Set<String> TRANSIENT_REASONS = Set.of("TransactionConflict", "ThrottlingError",
            "ProvisionedThroughputExceeded", "RequestLimitExceeded");

    private final String endpoint;
    private final String region;
    private final boolean dummyCredentials;
    private final String ordersTable;
    private final String prefix;
    private final DynamoDbClient client;
    private final DynamoDbOutboxStore store;
    private final DynamoDbOutboxWriter writer;

    /**
     * @param endpoint the endpoint URL (an emulator), or null for AWS itself
     * @param region the region, or null for the SDK's default (with an endpoint:
     *     {@value #DEFAULT_EMULATOR_REGION})
     * @param prefix the run's table prefix
     */
    DynamoDbDemoDatabase(String endpoint, String region, String prefix) {
        this.endpoint = endpoint;
        this.region = region != null ? region : endpoint != null ? DEFAULT_EMULATOR_REGION : null;
        // An emulator needs some credentials but checks none; AWS itself gets the SDK's chain.
        this.dummyCredentials = endpoint != null && System.getenv("AWS_ACCESS_KEY_ID") == null;
        this.ordersTable = prefix + "orders";
        this.prefix = prefix;
        DynamoDbClientBuilder builder = DynamoDbClient.builder().httpClientBuilder(UrlConnectionHttpClient.builder());
        if (endpoint != null) {
            builder.endpointOverride(URI.create(endpoint));
        }
        if (this.region != null) {
            builder.region(Region.of(this.region));
        }
        if (dummyCredentials) {
            builder.credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("demo", "demo")));
        }
        this.client = builder.build();
        this.store = DynamoDbOutboxStore.builder(client)
                .messagesTable(prefix + "messages")
                .coordinationTable(prefix + "coordination")
                .build();
        this.writer = store.writer();
    }

    @Override
    public String describe() {
        return "dynamodb: " + (endpoint != null ? endpoint : "AWS") + (region != null ? ", region " + region : "");
    }

    @Override
    public List<String> objectNames() {
        return List.of(ordersTable, store.options().messagesTable(), store.options().coordinationTable());
    }

    @Override
    public void createSchema() {
        store.createSchema();
        client.createTable(r -> r.tableName(ordersTable)
                .billingMode(BillingMode.PAY_PER_REQUEST)
                .attributeDefinitions(
                        AttributeDefinition.builder().attributeName("customer").attributeType(ScalarAttributeType.N)
                                .build(),
                        AttributeDefinition.builder().attributeName("seq").attributeType(ScalarAttributeType.N).build())
                .keySchema(KeySchemaElement.builder().attributeName("customer").keyType(KeyType.HASH).build(),
                        KeySchemaElement.builder().attributeName("seq").keyType(KeyType.RANGE).build()));
        client.waiter().waitUntilTableExists(r -> r.tableName(ordersTable));
    }

    @Override
    public void placeOrder(Order order, OutboxMessage message) {
        TransactWriteItem orderPut = TransactWriteItem.builder().put(Put.builder()
                .tableName(ordersTable)
                .item(Map.of(
                        "customer", number(order.customer()),
                        "seq", number(order.seq()),
                        "orderId", AttributeValue.fromS(order.orderId()),
                        "amountCents", number(order.amountCents()),
                        "placedAtMicros", number(order.placedAtMicros()),
                        "messageId", AttributeValue.fromS(message.messageId().toString())))
                .conditionExpression("attribute_not_exists(customer)")
                .build()).build();
        for (int attempt = 1; ; attempt++) {
            // prepare reserves the message's place in its bucket; a cancelled transaction leaves a harmless gap,
            // and the next attempt reserves a later place, still after this customer's earlier orders.
            TransactWriteItem messagePut = writer.prepare(message);
            try {
                client.transactWriteItems(r -> r.transactItems(orderPut, messagePut));
                return;
            } catch (TransactionCanceledException e) {
                if (attempt == TRANSACTION_ATTEMPTS || !isTransient(e)) {
                    throw e;
                }
            }
        }
    }

    private static boolean isTransient(TransactionCanceledException e) {
        return e.hasCancellationReasons() && e.cancellationReasons().stream().map(CancellationReason::code)
                .allMatch(code -> code == null || "None".equals(code) || TRANSIENT_REASONS.contains(code));
    }

    private static AttributeValue number(long value) {
        return AttributeValue.fromN(Long.toString(value));
    }

    @Override
    public void enqueue(List<OutboxMessage> messages) {
        writer.enqueue(messages);
    }

    @Override
    public int maxMessagesPerTransaction() {
        return DynamoDbOutboxWriter.MAX_TRANSACTION_ITEMS;
    }

    @Override
    public CloseableOutboxStore openRelayStore() {
        Map<String, String> config = new HashMap<>();
        if (endpoint != null) {
            config.put(DynamoDbOutboxStoreProvider.ENDPOINT, endpoint);
        }
        if (region != null) {
            config.put(DynamoDbOutboxStoreProvider.REGION, region);
        }
        if (dummyCredentials) {
            config.put(DynamoDbOutboxStoreProvider.ACCESS_KEY_ID, "demo");
            config.put(DynamoDbOutboxStoreProvider.SECRET_ACCESS_KEY, "demo");
        }
        config.put(DynamoDbOutboxStoreProvider.MESSAGES_TABLE, store.options().messagesTable());
        config.put(DynamoDbOutboxStoreProvider.COORDINATION_TABLE, store.options().coordinationTable());
        return OutboxStores.open(DynamoDbOutboxStoreProvider.NAME, config);
    }

    @Override
    public DemoInbox openInbox() {
        return new DynamoDbDemoInbox(client, prefix);
    }

    @Override
    public void dropSchema() {
        for (String table : objectNames()) {
            try {
                client.deleteTable(r -> r.tableName(table));
            } catch (ResourceNotFoundException gone) {
                // never created
            }
        }
    }

    @Override
    public void close() {
        store.close();
        client.close();
    }
}
