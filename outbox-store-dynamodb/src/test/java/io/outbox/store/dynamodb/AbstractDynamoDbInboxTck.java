package io.outbox.store.dynamodb;

import io.outbox.InboxRetention;
import io.outbox.tck.InboxTck;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionCheck;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;
import software.amazon.awssdk.services.dynamodb.model.Update;

/**
 * The inbox kit on a DynamoDB backend. The business effect is an {@code ADD n 1} on an effects
 * item in the same {@code TransactWriteItems} request as the marker; a rolled-back delivery adds a
 * condition check that fails, so DynamoDB cancels the whole request. Each fixture has its own
 * client.
 */
abstract class AbstractDynamoDbInboxTck extends InboxTck {

    private DynamoDbClient admin;
    private String inboxTable;
    private String effectsTable;

    /** The backend to run on. */
    abstract DynamoDbBackend backend();

    @Override
    protected void createStorage() {
        admin = backend().newClient();
        String id = UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        inboxTable = "inbox_" + id;
        effectsTable = "inbox_" + id + "_effects";
        DynamoDbInbox.builder(admin).table(inboxTable).build().createSchema(Duration.ofMinutes(1));
        // Same key shape is enough for the effects: messageId (S) + consumer (S).
        DynamoDbInbox.builder(admin).table(effectsTable).build().createSchema(Duration.ofMinutes(1));
    }

    @Override
    protected InboxFixture open(Clock clock, Duration retention, int cleanupBatchSize) {
        DynamoDbClient client = backend().newClient();
        DynamoDbInbox inbox = DynamoDbInbox.builder(client).table(inboxTable).clock(clock).retention(retention)
                .cleanupBatchSize(cleanupBatchSize).build();
        return new InboxFixture() {
            @Override
            public boolean deliver(String consumer, UUID messageId, Ending ending, Duration holdOpen)
                    throws InterruptedException {
                TransactWriteItem effect = TransactWriteItem.builder().update(Update.builder()
                        .tableName(effectsTable)
                        .key(key(consumer, messageId))
                        .updateExpression("ADD n :one")
                        .expressionAttributeValues(Map.of(":one", AttributeValue.fromN("1")))
                        .build()).build();
                Thread.sleep(holdOpen.toMillis());
                if (ending == Ending.COMMIT) {
                    return inbox.firstDelivery(consumer, messageId, List.of(effect));
                }
                TransactWriteItem failing = TransactWriteItem.builder().conditionCheck(ConditionCheck.builder()
                        .tableName(effectsTable)
                        .key(key("absent", UUID.randomUUID()))
                        .conditionExpression("attribute_exists(n)")
                        .build()).build();
                try {
                    client.transactWriteItems(r -> r.transactItems(effect, failing, inbox.marker(consumer, messageId)));
                } catch (TransactionCanceledException cancelled) {
                    return !DynamoDbInbox.isRepeat(cancelled, 2);
                }
                throw new AssertionError("the transaction with a failing condition check was not cancelled");
            }

            @Override
            public boolean hasMarker(String consumer, UUID messageId) {
                return inbox.hasMarker(consumer, messageId);
            }

            @Override
            public long effects(String consumer, UUID messageId) {
                var item = client.getItem(r -> r.tableName(effectsTable).consistentRead(true)
                        .key(key(consumer, messageId))).item();
                return item == null || !item.containsKey("n") ? 0 : Long.parseLong(item.get("n").n());
            }

            @Override
            public InboxRetention retention() {
                return inbox;
            }

            @Override
            public void close() {
                client.close();
            }
        };
    }

    private static Map<String, AttributeValue> key(String consumer, UUID messageId) {
        return Map.of(DynamoDbInbox.MESSAGE_ID, AttributeValue.fromS(messageId.toString()),
                DynamoDbInbox.CONSUMER, AttributeValue.fromS(consumer));
    }

    @Override
    protected void dropStorage() {
        if (admin == null) {
            return;
        }
        try {
            for (String table : List.of(inboxTable, effectsTable)) {
                try {
                    admin.deleteTable(r -> r.tableName(table));
                } catch (ResourceNotFoundException gone) {
                    // nothing to drop
                }
            }
        } finally {
            admin.close();
            admin = null;
        }
    }
}
