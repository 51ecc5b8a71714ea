package io.outbox.store.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.outbox.OutboxHeader;
import io.outbox.OutboxMessage;
import io.outbox.OutboxPayloadTooLargeException;
import io.outbox.spi.Pending;
import io.outbox.spi.support.StoredMessages;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.ConditionCheck;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.Put;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;

/**
 * The enqueue side on a DynamoDB backend (rules E4, E5, S10): messages written in the caller's
 * {@code TransactWriteItems} commit and cancel with its business writes; sequence reservation;
 * the limits of one transaction and one item.
 */
abstract class AbstractDynamoDbEnqueueTest {

    private static final String TOPIC = "orders";

    private DynamoDbClient client;
    private DynamoDbOutboxOptions tables;
    private String ordersTable;
    private DynamoDbOutboxStore store;
    private DynamoDbOutboxWriter writer;

    /** The backend to run on. */
    abstract DynamoDbBackend backend();

    @BeforeEach
    void createTables() {
        client = backend().newClient();
        tables = DynamoDbBackend.uniqueTables();
        DynamoDbBackend.createTables(client, tables);
        ordersTable = tables.messagesTable().replace("_messages", "_orders");
        client.createTable(r -> r.tableName(ordersTable).billingMode(BillingMode.PAY_PER_REQUEST)
                .attributeDefinitions(AttributeDefinition.builder().attributeName("id")
                        .attributeType(ScalarAttributeType.S).build())
                .keySchema(KeySchemaElement.builder().attributeName("id").keyType(KeyType.HASH).build()));
        client.waiter().waitUntilTableExists(r -> r.tableName(ordersTable));
        store = DynamoDbBackend.storeOn(client, tables).build();
        writer = store.writer();
    }

    @AfterEach
    void dropTables() {
        try {
            store.close();
            DynamoDbBackend.dropTables(client, tables);
            client.deleteTable(r -> r.tableName(ordersTable));
        } finally {
            client.close();
        }
    }

    private static OutboxMessage message(int bucket, String value) {
        return StoredMessages.rebuild(UUID.randomUUID(), bucket, TOPIC,
                ("key-" + bucket).getBytes(StandardCharsets.UTF_8),
                value.getBytes(StandardCharsets.UTF_8), List.of(OutboxHeader.ofUtf8("source", "test")), null,
                Instant.parse("2030-01-02T03:04:05.678Z"));
    }

    private TransactWriteItem putOrder(String id) {
        return TransactWriteItem.builder().put(Put.builder().tableName(ordersTable)
                .item(Map.of("id", AttributeValue.fromS(id), "status", AttributeValue.fromS("new")))
                .conditionExpression("attribute_not_exists(id)").build()).build();
    }

    private TransactWriteItem requireCustomer(String id) {
        return TransactWriteItem.builder().conditionCheck(ConditionCheck.builder().tableName(ordersTable)
                .key(Map.of("id", AttributeValue.fromS(id))).conditionExpression("attribute_exists(id)").build()).build();
    }

    private boolean orderExists(String id) {
        return client.getItem(r -> r.tableName(ordersTable).key(Map.of("id", AttributeValue.fromS(id)))
                .consistentRead(true)).hasItem();
    }

    private Map<String, AttributeValue> counter(int bucket) {
        var response = client.getItem(r -> r.tableName(tables.coordinationTable())
                .key(CoordinationItems.counterKey(bucket)).consistentRead(true));
        return response.hasItem() ? response.item() : Map.of();
    }

    private static List<UUID> ids(List<Pending> read) {
        return read.stream().map(p -> p.message().messageId()).toList();
    }

    private static long seq(TransactWriteItem item) {
        return Long.parseLong(item.put().item().get(MessageItems.SEQ).n());
    }

    @Test
    void E4_theCallersTransactionCommitsTheBusinessWriteAndTheMessages() {
        List<OutboxMessage> messages = List.of(message(3, "a"), message(5, "b"), message(3, "c"));
        List<TransactWriteItem> items = new ArrayList<>();
        items.add(putOrder("order-1"));
        items.addAll(writer.prepare(messages));
        client.transactWriteItems(r -> r.transactItems(items));

        assertThat(orderExists("order-1")).isTrue();
        assertThat(store.bucketsWithPending(List.of(0, 1, 2, 3, 4, 5, 6, 7))).containsExactly(3, 5);
        assertThat(ids(store.nextBatch(3, 10))).containsExactly(messages.get(0).messageId(), messages.get(2).messageId());
        assertThat(store.nextBatch(5, 10).get(0).message()).isEqualTo(messages.get(1));
    }

    @Test
    void E4_aFailingBusinessConditionCheckCancelsTheBusinessWriteAndTheMessages() {
        List<OutboxMessage> messages = List.of(message(2, "a"), message(2, "b"));
        TransactionCanceledException cancelled = catchThrowableOfType(TransactionCanceledException.class,
                () -> writer.enqueue(List.of(putOrder("order-2"), requireCustomer("missing-customer")), messages));

        assertThat(cancelled).isNotNull();
        assertThat(cancelled.cancellationReasons()).extracting(r -> r.code())
                .containsExactly("None", "ConditionalCheckFailed", "None", "None");
        assertThat(orderExists("order-2")).as("business write").isFalse();
        assertThat(store.bucketsWithPending(List.of(0, 1, 2, 3))).as("messages").isEmpty();
        assertThat(store.nextBatch(2, 10)).isEmpty();
        assertThat(counter(2).get(MessageItems.SEQ).n()).as("the reserved numbers stay as a gap").isEqualTo("2");

        OutboxMessage later = message(2, "later");
        writer.enqueue(List.of(putOrder("order-3")), List.of(later));
        assertThat(ids(store.nextBatch(2, 10))).as("the gap is harmless").containsExactly(later.messageId());
    }

    /** N1: the helper notifies the buckets after TransactWriteItems returned; a cancelled one notifies nothing. */
    @Test
    void N1_theBucketsAreNotifiedAfterTheTransactionCommitted_aCancelledOneNotifiesNothing() {
        List<String> events = new java.util.concurrent.CopyOnWriteArrayList<>();
        io.outbox.OutboxCommitNotifier notifier = buckets -> events.add(java.util.Arrays.toString(buckets)
                + " pending=" + store.bucketsWithPending(List.of(0, 1, 2, 3, 4, 5, 6, 7)));
        DynamoDbOutboxTransactions tx = DynamoDbOutboxTransactions.of(writer, notifier);

        assertThat(catchThrowableOfType(TransactionCanceledException.class, () -> tx.write(
                List.of(putOrder("order-n0"), requireCustomer("missing")), List.of(message(4, "never")))))
                .isNotNull();
        assertThat(events).as("a cancelled transaction notifies nothing").isEmpty();

        tx.write(List.of(putOrder("order-n1")), List.of(message(6, "a"), message(1, "b"), message(6, "c")));
        assertThat(events).as("notified once, after the commit").containsExactly("[6, 1] pending=[1, 6]");
    }

    @Test
    void E4_aPreparedPutIsGuardedAgainstOverwriting() {
        TransactWriteItem item = writer.prepare(message(1, "once"));
        client.transactWriteItems(r -> r.transactItems(item));
        TransactionCanceledException again = catchThrowableOfType(TransactionCanceledException.class,
                () -> client.transactWriteItems(r -> r.transactItems(item)));
        assertThat(again).isNotNull();
        assertThat(again.cancellationReasons().get(0).code()).isEqualTo("ConditionalCheckFailed");
        assertThat(store.nextBatch(1, 10)).hasSize(1);
    }

    @Test
    void E5_sequencesAreReservedInListOrderWithOneIncrementPerBucket() {
        List<OutboxMessage> messages = List.of(message(4, "a"), message(6, "b"), message(4, "c"), message(4, "d"));
        List<TransactWriteItem> first = writer.prepare(messages);
        assertThat(first.stream().map(AbstractDynamoDbEnqueueTest::seq).toList()).containsExactly(1L, 1L, 2L, 3L);
        List<TransactWriteItem> second = writer.prepare(List.of(message(4, "e")));
        assertThat(seq(second.get(0))).isEqualTo(4L);
        assertThat(counter(4).get(MessageItems.SEQ).n()).isEqualTo("4");
        assertThat(counter(6).get(MessageItems.BUCKET).n()).isEqualTo("6");
    }

    @Test
    void E5_concurrentReservationsAreDistinctAndIncreasingPerWriter() throws Exception {
        int threads = 4;
        int perThread = 25;
        Set<Long> all = ConcurrentHashMap.newKeySet();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<List<Long>>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                futures.add(pool.submit(() -> {
                    List<Long> mine = new ArrayList<>();
                    for (int i = 0; i < perThread; i++) {
                        long s = seq(writer.prepare(message(0, "x")));
                        mine.add(s);
                        all.add(s);
                    }
                    return mine;
                }));
            }
            for (Future<List<Long>> f : futures) {
                assertThat(f.get(120, TimeUnit.SECONDS)).isSorted().doesNotHaveDuplicates();
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(all).hasSize(threads * perThread);
        assertThat(Collections.max(all)).isEqualTo((long) threads * perThread);
    }

    @Test
    void E4_moreThan100ItemsAreRefusedBeforeAnythingIsReserved() {
        List<OutboxMessage> tooMany = IntStream.range(0, 101).mapToObj(i -> message(7, "m" + i)).toList();
        assertThatThrownBy(() -> writer.prepare(tooMany)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("101 outbox messages").hasMessageContaining("at most 100");
        List<TransactWriteItem> business = IntStream.range(0, 60).mapToObj(i -> putOrder("o" + i)).toList();
        assertThatThrownBy(() -> writer.enqueue(business, tooMany.subList(0, 41)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("60 business items and 41");
        assertThat(counter(7)).as("no sequence reserved").isEmpty();
    }

    @Test
    void E4_messagesOverFourMegabytesAreRefusedBeforeAnythingIsReserved() {
        byte[] big = new byte[(int) DynamoDbOutboxStore.MAX_PAYLOAD_BYTES - 5];
        List<OutboxMessage> eleven = IntStream.range(0, 11).mapToObj(i -> StoredMessages.rebuild(UUID.randomUUID(), 7,
                TOPIC, null, big, List.of(), null, Instant.EPOCH)).toList();
        assertThatThrownBy(() -> writer.prepare(eleven)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("4194304 bytes");
        assertThat(counter(7)).isEmpty();
    }

    @Test
    void S10_aPayloadOverTheLimitIsRefusedBeforeAnythingIsReserved() {
        OutboxMessage tooLarge = StoredMessages.rebuild(UUID.randomUUID(), 2, TOPIC, null,
                new byte[(int) DynamoDbOutboxStore.MAX_PAYLOAD_BYTES - 4], List.of(), null, Instant.EPOCH);
        assertThatThrownBy(() -> writer.enqueue(List.of(putOrder("order-4")), List.of(message(2, "ok"), tooLarge)))
                .isInstanceOf(OutboxPayloadTooLargeException.class).hasMessageContaining("408576");
        assertThat(counter(2)).isEmpty();
        assertThat(orderExists("order-4")).isFalse();
    }

    /**
     * The largest payload fits the worst item this store writes: a 249-character topic, a key, a
     * value, headers, an explicit partition, and numbers as long as they get. The backend enforces
     * the 400 KB limit (see the next test), so this proves the arithmetic.
     */
    @Test
    void S10_theLargestPayloadFitsTheWorstCaseItem() {
        Random random = new Random(10);
        byte[] key = new byte[1000];
        random.nextBytes(key);
        List<OutboxHeader> headers = List.of(OutboxHeader.ofUtf8("trace-id", "abc"), OutboxHeader.of("bin", new byte[100]));
        int headerBytes = io.outbox.spi.support.OutboxHeaderCodec.encodedSize(headers);
        byte[] value = new byte[(int) DynamoDbOutboxStore.MAX_PAYLOAD_BYTES - key.length - headerBytes];
        random.nextBytes(value);
        OutboxMessage worst = StoredMessages.rebuild(UUID.randomUUID(), Integer.MAX_VALUE, "t".repeat(249), key, value,
                headers, Integer.MAX_VALUE, Instant.ofEpochMilli(Long.MAX_VALUE / 1000 * 997 + 123));
        assertThat(StoredMessages.payloadSize(worst)).isEqualTo(DynamoDbOutboxStore.MAX_PAYLOAD_BYTES);
        assertThat(MessageItems.itemSize(MessageItems.toItem(worst, Long.MAX_VALUE)))
                .isLessThanOrEqualTo(MessageItems.ITEM_SIZE_LIMIT);

        writer.enqueue(List.of(worst));
        List<Pending> read = store.nextBatch(Integer.MAX_VALUE, 1);
        assertThat(read).hasSize(1);
        assertThat(read.get(0).message()).isEqualTo(worst);
    }

    @Test
    void S10_theBackendEnforcesDynamoDbsItemSizeLimit() {
        // bucket (6 + 2 bytes), seq (3 + 2 bytes), "id" plus the value: 409,601 bytes in all.
        byte[] filler = new byte[(int) MessageItems.ITEM_SIZE_LIMIT + 1 - 8 - 5 - 2];
        Map<String, AttributeValue> item = Map.of(MessageItems.BUCKET, AttributeValue.fromN("1"), MessageItems.SEQ,
                AttributeValue.fromN("1"), MessageItems.ID, AttributeValue.fromB(SdkBytes.fromByteArray(filler)));
        assertThat(MessageItems.itemSize(item)).isEqualTo(MessageItems.ITEM_SIZE_LIMIT + 1);
        assertThatThrownBy(() -> client.putItem(r -> r.tableName(tables.messagesTable()).item(item)))
                .isInstanceOf(DynamoDbException.class);
        Map<String, AttributeValue> fits = Map.of(MessageItems.BUCKET, AttributeValue.fromN("1"), MessageItems.SEQ,
                AttributeValue.fromN("1"), MessageItems.ID,
                AttributeValue.fromB(SdkBytes.fromByteArray(new byte[filler.length - 1])));
        client.putItem(r -> r.tableName(tables.messagesTable()).item(fits));
    }
}
