package io.outbox.store.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.outbox.OutboxMessage;
import io.outbox.spi.OutboxStore;
import io.outbox.tck.OutboxStoreTck;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionCheck;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;

/** The store compatibility kit on a DynamoDB backend; subclasses name the backend. */
abstract class AbstractDynamoDbStoreTck extends OutboxStoreTck {

    private DynamoDbClient admin;
    private DynamoDbOutboxOptions tables;

    /** The backend to run on. */
    abstract DynamoDbBackend backend();

    @Override
    protected void createStorage() {
        admin = backend().newClient();
        tables = DynamoDbBackend.uniqueTables();
        DynamoDbBackend.createTables(admin, tables);
    }

    /** A new client per store, as separate relay processes would have; the store closes it. */
    @Override
    protected OutboxStore newStore(Clock clock) {
        return DynamoDbBackend.storeOn(backend().newClient(), tables).clock(clock).closeClient(true).build();
    }

    @Override
    protected void enqueue(OutboxStore store, List<OutboxMessage> messages) {
        ((DynamoDbOutboxStore) store).writer().enqueue(messages);
    }

    /**
     * A transaction holding the messages and a business ConditionCheck that fails: DynamoDB cancels
     * it whole.
     */
    @Override
    protected void enqueueAndRollBack(OutboxStore store, List<OutboxMessage> messages) {
        TransactWriteItem failingCheck = TransactWriteItem.builder().conditionCheck(ConditionCheck.builder()
                .tableName(tables.coordinationTable())
                .key(Map.of("pk", AttributeValue.fromS("business"), "sk", AttributeValue.fromS(UUID.randomUUID().toString())))
                .conditionExpression("attribute_exists(pk)")
                .build()).build();
        TransactionCanceledException cancelled = catchThrowableOfType(TransactionCanceledException.class,
                () -> ((DynamoDbOutboxStore) store).writer().enqueue(List.of(failingCheck), messages));
        assertThat(cancelled).as("the transaction is cancelled by the failing condition check").isNotNull();
        assertThat(cancelled.cancellationReasons().get(0).code()).isEqualTo("ConditionalCheckFailed");
    }

    /**
     * The sequence numbers are reserved now (prepare); the transaction that writes the messages
     * runs when the kit commits, as a caller's slower transaction would.
     */
    @Override
    protected OpenTransaction beginEnqueue(OutboxStore store, List<OutboxMessage> messages) {
        DynamoDbOutboxStore dynamo = (DynamoDbOutboxStore) store;
        List<TransactWriteItem> prepared = dynamo.writer().prepare(messages);
        return () -> admin.transactWriteItems(r -> r.transactItems(prepared));
    }

    /** The writer takes any bucket, as a writer configured with more buckets would, counter included. */
    @Override
    protected void insertRawRow(OutboxStore store, OutboxMessage message) {
        ((DynamoDbOutboxStore) store).writer().enqueue(List.of(message));
    }

    /** R12: a header blob with an unknown version byte, written over the stored one. */
    @Override
    protected void corruptStoredHeaders(OutboxStore store, OutboxMessage message) {
        var av = software.amazon.awssdk.services.dynamodb.model.AttributeValue.class;
        var items = admin.query(q -> q.tableName(tables.messagesTable()).keyConditionExpression("#b = :b")
                .filterExpression("#id = :id").expressionAttributeNames(Map.of("#b", "bucket", "#id", "id"))
                .expressionAttributeValues(Map.of(":b", software.amazon.awssdk.services.dynamodb.model.AttributeValue
                        .fromN(Integer.toString(message.bucket())), ":id",
                        software.amazon.awssdk.services.dynamodb.model.AttributeValue.fromS(
                                message.messageId().toString()))).consistentRead(true)).items();
        if (items.size() != 1 || av == null) {
            throw new IllegalStateException("no single item of message " + message.messageId() + ": " + items);
        }
        var key = Map.of("bucket", items.get(0).get("bucket"), "seq", items.get(0).get("seq"));
        admin.updateItem(u -> u.tableName(tables.messagesTable()).key(key).updateExpression("SET #h = :h")
                .expressionAttributeNames(Map.of("#h", "headers"))
                .expressionAttributeValues(Map.of(":h", software.amazon.awssdk.services.dynamodb.model.AttributeValue
                        .fromB(software.amazon.awssdk.core.SdkBytes.fromByteArray(new byte[] {0x7f})))));
    }

    /**
     * S8 below 0: the message item and the bucket's sequence counter, written directly, as a
     * foreign writer with a signed hash would leave them.
     */
    @Override
    protected void insertRawRow(OutboxStore store, OutboxMessage message, int bucket) {
        Map<String, AttributeValue> item = new java.util.HashMap<>(MessageItems.toItem(message, 1));
        item.putAll(MessageItems.key(bucket, 1));
        admin.putItem(r -> r.tableName(tables.messagesTable()).item(item));
        Map<String, AttributeValue> counter = CoordinationItems.counterKey(bucket);
        counter.put(CoordinationItems.SEQ, MessageItems.number(1));
        counter.put(CoordinationItems.BUCKET, MessageItems.number(bucket));
        admin.putItem(r -> r.tableName(tables.coordinationTable()).item(counter));
    }

    @Override
    protected long maxPayloadBytes() {
        return DynamoDbOutboxStore.MAX_PAYLOAD_BYTES;
    }

    @Override
    protected String providerName() {
        return DynamoDbOutboxStoreProvider.NAME;
    }

    @Override
    protected Map<String, String> providerConfig() {
        return backend().providerConfig(tables);
    }

    @Override
    protected void dropStorage() {
        if (admin != null) {
            try {
                DynamoDbBackend.dropTables(admin, tables);
            } finally {
                admin.close();
                admin = null;
            }
        }
    }
}
