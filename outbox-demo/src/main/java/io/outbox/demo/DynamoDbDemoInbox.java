package io.outbox.demo;

import io.outbox.store.dynamodb.DynamoDbInbox;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.Update;

/**
 * The inbox side of the demo on DynamoDB: {@link DynamoDbInbox} on the demo's client and a
 * {@code <prefix>counters} table (partition key {@code customer}); one delivery is one
 * {@code TransactWriteItems} with the counter's {@code ADD} and the inbox marker.
 */
final class DynamoDbDemoInbox implements DemoInbox {

    private final DynamoDbClient client;
    private final DynamoDbInbox inbox;
    private final String counters;

    DynamoDbDemoInbox(DynamoDbClient client, String prefix) {
        this.client = client;
        this.inbox = DynamoDbInbox.builder(client).table(prefix + "inbox").build();
        this.counters = prefix + "counters";
    }

    @Override
    public void createSchema() {
        inbox.createSchema(Duration.ofMinutes(5));
        client.createTable(r -> r.tableName(counters).billingMode(BillingMode.PAY_PER_REQUEST)
                .attributeDefinitions(AttributeDefinition.builder().attributeName("customer")
                        .attributeType(ScalarAttributeType.N).build())
                .keySchema(KeySchemaElement.builder().attributeName("customer").keyType(KeyType.HASH).build()));
        client.waiter().waitUntilTableExists(r -> r.tableName(counters));
    }

    @Override
    public boolean apply(UUID messageId, Order order) {
        TransactWriteItem increment = TransactWriteItem.builder().update(Update.builder()
                .tableName(counters)
                .key(Map.of("customer", AttributeValue.fromN(Integer.toString(order.customer()))))
                .updateExpression("ADD orders :one")
                .expressionAttributeValues(Map.of(":one", AttributeValue.fromN("1")))
                .build()).build();
        return inbox.firstDelivery(DemoInbox.CONSUMER, messageId, List.of(increment));
    }

    @Override
    public Map<Integer, Long> counters() {
        Map<Integer, Long> result = new HashMap<>();
        client.scanPaginator(r -> r.tableName(counters).consistentRead(true)).items().forEach(item ->
                result.put(Integer.parseInt(item.get("customer").n()), Long.parseLong(item.get("orders").n())));
        return result;
    }

    @Override
    public List<String> objectNames() {
        return List.of(inbox.table(), counters);
    }

    @Override
    public void dropSchema() {
        for (String table : List.of(inbox.table(), counters)) {
            try {
                client.deleteTable(r -> r.tableName(table));
            } catch (ResourceNotFoundException gone) {
                // nothing to drop
            }
        }
    }
}
