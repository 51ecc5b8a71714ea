package io.outbox.store.dynamodb;

import io.outbox.spi.DeadLetter;
import io.outbox.spi.DeadLetterConflictException;
import io.outbox.spi.DeadLetterFailure;
import io.outbox.spi.DeadLetters;
import io.outbox.spi.HeadFailure;
import io.outbox.spi.support.StoreArguments;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Supplier;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.CancellationReason;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.Delete;
import software.amazon.awssdk.services.dynamodb.model.Put;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;
import software.amazon.awssdk.services.dynamodb.model.Update;

/**
 * Capability C4 of {@link DynamoDbOutboxStore}: dead letters are items of the coordination table
 * under {@code pk = "dead"}, {@code sk = <message id>}, holding the message's attributes as they
 * were pending (the header blob as stored) and the failure. The move and the replay are each one
 * {@code TransactWriteItems}: move = Put of the dead letter (if absent) + Delete of the message
 * item (if it still holds that message id); replay = Put of a message item under a newly
 * reserved sequence number (after everything pending in the bucket now, E5) + Delete of the dead
 * letter (if present). Either both writes happen or neither. Thread-safe.
 *
 * <pre>
 *   pk "dead", sk "&lt;uuid&gt;"  bucket N, topic S, key B, value B, headers B, partition N, createdAt N,
 *                          reason S, causeClass S, attempts N, firstFailureAt N, lastFailureAt N,
 *                          relayId S, deadLetteredAt N
 * </pre>
 * A dead letter's item must fit DynamoDB's 400 KB too: for a message near the payload limit the
 * reason is cut further, to what fits.
 *
 * <p>A move whose message id has a dead letter already reads it: the same record (a repeat)
 * is moved into it with one {@code TransactWriteItems} (an Update of the dead letter's failure,
 * conditional on the dead letter being unchanged since it was read, and the message item's
 * conditional Delete); a different record is refused with {@link DeadLetterConflictException}.
 *
 * <p>A failing head's record ({@link DeadLetters#recordHeadFailure}) is a set of attributes
 * ({@code failReason, failCauseClass, failAttempts, failFirstAt, failLastAt, failRelayId}) on the
 * pending message's own item, written by one UpdateItem conditional on the item still holding
 * that message id: it goes with the item when the message is published or moved (the move copies
 * only the message's attributes). Reading a bucket's record reads its head item (one Query,
 * {@code Limit 1}).
 *
 * <p>Every call runs through the store's table check ({@link TableCalls}), so a missing table is
 * an {@link io.outbox.spi.OutboxMisconfigurationException} naming it, as for the store's own calls.
 */
final class DynamoDbDeadLetters implements DeadLetters {

    /** Runs a call on the store's tables, turning a missing table into a misconfiguration (R13). */
    @FunctionalInterface
    interface TableCalls {
        /**
         * Runs the call.
         *
         * @param <T> the call's result
         * @param call the call
         * @return its result
         */
        <T> T call(Supplier<T> call);
    }

    static final String DEAD = "dead";

    private static final String REASON = "reason";
    private static final String CAUSE_CLASS = "causeClass";
    private static final String ATTEMPTS = "attempts";
    private static final String FIRST_FAILURE_AT = "firstFailureAt";
    private static final String LAST_FAILURE_AT = "lastFailureAt";
    private static final String RELAY_ID = "relayId";
    private static final String DEAD_LETTERED_AT = "deadLetteredAt";
    private static final String FAIL_REASON = "failReason";
    private static final String FAIL_CAUSE_CLASS = "failCauseClass";
    private static final String FAIL_ATTEMPTS = "failAttempts";
    private static final String FAIL_FIRST_AT = "failFirstAt";
    private static final String FAIL_LAST_AT = "failLastAt";
    private static final String FAIL_RELAY_ID = "failRelayId";
    /** Message attributes copied between a message item and a dead letter. */
    private static final List<String> MESSAGE_ATTRIBUTES = List.of(MessageItems.TOPIC, MessageItems.KEY,
            MessageItems.VALUE, MessageItems.HEADERS, MessageItems.PARTITION, MessageItems.CREATED_AT);

    private final DynamoDbClient client;
    private final String messagesTable;
    private final String coordinationTable;
    private final Clock clock;
    private final TableCalls tables;

    DynamoDbDeadLetters(DynamoDbClient client, String messagesTable, String coordinationTable, Clock clock,
                        TableCalls tables) {
        this.client = client;
        this.messagesTable = messagesTable;
        this.coordinationTable = coordinationTable;
        this.clock = clock;
        this.tables = tables;
    }

    /**
     * {@inheritDoc}
     *
     * <p>One Query of the bucket for the message id, then one {@code TransactWriteItems}: the dead
     * letter's Put and the message item's conditional Delete.
     */
    @Override
    public boolean moveToDeadLetters(int bucket, UUID messageId, DeadLetterFailure failure) {
        return tables.call(() -> move(bucket, messageId, failure));
    }

    /**
     * {@inheritDoc}
     *
     * <p>One Query of the bucket for the message id, then one conditional UpdateItem of its item:
     * the record lives on the message's item.
     */
    @Override
    public boolean recordHeadFailure(int bucket, UUID messageId, DeadLetterFailure failure) {
        return tables.call(() -> recordFailure(bucket, messageId, failure));
    }

    /**
     * {@inheritDoc}
     *
     * <p>One Query ({@code Limit 1}, consistent) per bucket for its head item.
     */
    @Override
    public List<HeadFailure> headFailures(List<Integer> buckets) {
        return tables.call(() -> readHeadFailures(buckets));
    }

    @Override
    public List<DeadLetter> deadLetters(UUID after, int limit) {
        return tables.call(() -> list(after, limit));
    }

    @Override
    public Optional<DeadLetter> deadLetter(UUID messageId) {
        return tables.call(() -> get(messageId));
    }

    @Override
    public boolean replayDeadLetter(UUID messageId) {
        return tables.call(() -> replay(messageId));
    }

    @Override
    public boolean purgeDeadLetter(UUID messageId) {
        return tables.call(() -> purge(messageId));
    }

    private static Map<String, AttributeValue> deadKey(UUID messageId) {
        return CoordinationItems.key(DEAD, messageId.toString());
    }

    private boolean move(int bucket, UUID messageId, DeadLetterFailure failure) {
        if (bucket < 0) {
            throw new IllegalArgumentException("bucket must be >= 0 but was " + bucket);
        }
        Objects.requireNonNull(messageId, "messageId must not be null");
        Objects.requireNonNull(failure, "failure must not be null");
        Map<String, AttributeValue> item = findPending(bucket, messageId);
        if (item == null) {
            return false;
        }
        Map<String, AttributeValue> dead = new HashMap<>(deadKey(messageId));
        dead.put(MessageItems.BUCKET, MessageItems.number(bucket));
        for (String name : MESSAGE_ATTRIBUTES) {
            if (item.containsKey(name)) {
                dead.put(name, item.get(name));
            }
        }
        dead.put(CAUSE_CLASS, AttributeValue.fromS(failure.causeClass()));
        dead.put(ATTEMPTS, MessageItems.number(failure.attempts()));
        dead.put(FIRST_FAILURE_AT, MessageItems.number(failure.firstFailureAt().toEpochMilli()));
        dead.put(LAST_FAILURE_AT, MessageItems.number(failure.lastFailureAt().toEpochMilli()));
        dead.put(RELAY_ID, AttributeValue.fromS(failure.relayId()));
        dead.put(DEAD_LETTERED_AT, MessageItems.number(clock.millis()));
        dead.put(REASON, AttributeValue.fromS(""));
        long room = MessageItems.ITEM_SIZE_LIMIT - MessageItems.itemSize(dead);
        dead.put(REASON, AttributeValue.fromS(fit(failure.reason(), room)));
        long seq = MessageItems.requiredNumber(item, MessageItems.SEQ);
        Delete deletePending = Delete.builder().tableName(messagesTable).key(MessageItems.key(bucket, seq))
                .conditionExpression("#id = :id").expressionAttributeNames(Map.of("#id", MessageItems.ID))
                .expressionAttributeValues(Map.of(":id", AttributeValue.fromS(messageId.toString()))).build();
        try {
            client.transactWriteItems(r -> r.transactItems(
                    TransactWriteItem.builder().put(Put.builder().tableName(coordinationTable).item(dead)
                            .conditionExpression("attribute_not_exists(#pk)")
                            .expressionAttributeNames(Map.of("#pk", CoordinationItems.PK)).build()).build(),
                    TransactWriteItem.builder().delete(deletePending).build()));
            return true;
        } catch (TransactionCanceledException e) {
            List<CancellationReason> reasons = e.hasCancellationReasons() ? e.cancellationReasons() : List.of();
            if (reasons.size() == 2 && "ConditionalCheckFailed".equals(reasons.get(1).code())) {
                return false; // published meanwhile: nothing was written
            }
            if (reasons.size() == 2 && "ConditionalCheckFailed".equals(reasons.get(0).code())) {
                return moveRepeat(bucket, messageId, item, dead, deletePending, e);
            }
            throw e;
        }
    }

    /**
     * The message id has a dead letter: a repeat of its record is moved into it (the dead letter
     * takes the new failure); a different record is refused.
     */
    private boolean moveRepeat(int bucket, UUID messageId, Map<String, AttributeValue> item,
                               Map<String, AttributeValue> dead, Delete deletePending, RuntimeException cause) {
        Map<String, AttributeValue> existing = client.getItem(g -> g.tableName(coordinationTable)
                .key(deadKey(messageId)).consistentRead(true)).item();
        if (existing == null || existing.isEmpty()) {
            throw cause; // purged or replayed meanwhile: nothing was written; the next attempt moves it
        }
        DeadLetter known = read(existing);
        if (!known.sameRecord(MessageItems.required(item, MessageItems.TOPIC).s(), bytes(item.get(MessageItems.KEY)),
                bytes(item.get(MessageItems.VALUE)), MessageItems.required(item, MessageItems.HEADERS).b().asByteArray(),
                item.containsKey(MessageItems.PARTITION)
                        ? Math.toIntExact(MessageItems.requiredNumber(item, MessageItems.PARTITION)) : null)) {
            throw new DeadLetterConflictException(bucket, messageId, coordinationTable);
        }
        Map<String, String> names = new HashMap<>();
        Map<String, AttributeValue> values = new HashMap<>();
        List<String> sets = new ArrayList<>();
        int n = 0;
        for (String name : List.of(MessageItems.BUCKET, REASON, CAUSE_CLASS, ATTEMPTS, FIRST_FAILURE_AT,
                LAST_FAILURE_AT, RELAY_ID, DEAD_LETTERED_AT)) {
            names.put("#a" + n, name);
            values.put(":a" + n, dead.get(name));
            sets.add("#a" + n + " = :a" + n);
            n++;
        }
        names.put("#seen", DEAD_LETTERED_AT);
        values.put(":seen", existing.get(DEAD_LETTERED_AT));
        try {
            client.transactWriteItems(r -> r.transactItems(
                    TransactWriteItem.builder().update(Update.builder().tableName(coordinationTable)
                            .key(deadKey(messageId)).updateExpression("SET " + String.join(", ", sets))
                            .conditionExpression("#seen = :seen").expressionAttributeNames(names)
                            .expressionAttributeValues(values).build()).build(),
                    TransactWriteItem.builder().delete(deletePending).build()));
            return true;
        } catch (TransactionCanceledException e) {
            List<CancellationReason> reasons = e.hasCancellationReasons() ? e.cancellationReasons() : List.of();
            if (reasons.size() == 2 && "ConditionalCheckFailed".equals(reasons.get(1).code())) {
                return false; // published meanwhile: nothing was written
            }
            throw e; // the dead letter changed meanwhile: nothing was written; the next attempt decides again
        }
    }

    private boolean recordFailure(int bucket, UUID messageId, DeadLetterFailure failure) {
        if (bucket < 0) {
            throw new IllegalArgumentException("bucket must be >= 0 but was " + bucket);
        }
        Objects.requireNonNull(messageId, "messageId must not be null");
        Objects.requireNonNull(failure, "failure must not be null");
        Map<String, AttributeValue> item = findPending(bucket, messageId);
        if (item == null) {
            return false;
        }
        Map<String, AttributeValue> record = new HashMap<>();
        record.put(FAIL_CAUSE_CLASS, AttributeValue.fromS(failure.causeClass()));
        record.put(FAIL_ATTEMPTS, MessageItems.number(failure.attempts()));
        record.put(FAIL_FIRST_AT, MessageItems.number(failure.firstFailureAt().toEpochMilli()));
        record.put(FAIL_LAST_AT, MessageItems.number(failure.lastFailureAt().toEpochMilli()));
        record.put(FAIL_RELAY_ID, AttributeValue.fromS(failure.relayId()));
        record.put(FAIL_REASON, AttributeValue.fromS(""));
        Map<String, AttributeValue> whole = new HashMap<>(item);
        whole.putAll(record);
        long room = MessageItems.ITEM_SIZE_LIMIT - MessageItems.itemSize(whole);
        record.put(FAIL_REASON, AttributeValue.fromS(fit(failure.reason(), room)));
        Map<String, String> names = new HashMap<>(Map.of("#id", MessageItems.ID));
        Map<String, AttributeValue> values = new HashMap<>(Map.of(":id", AttributeValue.fromS(messageId.toString())));
        List<String> sets = new ArrayList<>();
        int n = 0;
        for (Map.Entry<String, AttributeValue> e : record.entrySet()) {
            names.put("#f" + n, e.getKey());
            values.put(":f" + n, e.getValue());
            sets.add("#f" + n + " = :f" + n);
            n++;
        }
        try {
            client.updateItem(u -> u.tableName(messagesTable)
                    .key(MessageItems.key(bucket, MessageItems.requiredNumber(item, MessageItems.SEQ)))
                    .updateExpression("SET " + String.join(", ", sets)).conditionExpression("#id = :id")
                    .expressionAttributeNames(names).expressionAttributeValues(values));
            return true;
        } catch (ConditionalCheckFailedException e) {
            return false; // published or moved meanwhile
        }
    }

    private List<HeadFailure> readHeadFailures(List<Integer> buckets) {
        List<HeadFailure> found = new ArrayList<>();
        for (int bucket : StoreArguments.requireBuckets(buckets)) {
            QueryResponse page = client.query(q -> q.tableName(messagesTable).keyConditionExpression("#bucket = :b")
                    .expressionAttributeNames(Map.of("#bucket", MessageItems.BUCKET))
                    .expressionAttributeValues(Map.of(":b", MessageItems.number(bucket)))
                    .consistentRead(true).scanIndexForward(true).limit(1));
            if (page.items().isEmpty() || !page.items().get(0).containsKey(FAIL_ATTEMPTS)) {
                continue;
            }
            Map<String, AttributeValue> i = page.items().get(0);
            try {
                found.add(new HeadFailure(bucket, UUID.fromString(MessageItems.required(i, MessageItems.ID).s()),
                        new DeadLetterFailure(MessageItems.required(i, FAIL_REASON).s(),
                                MessageItems.required(i, FAIL_CAUSE_CLASS).s(),
                                Math.toIntExact(MessageItems.requiredNumber(i, FAIL_ATTEMPTS)),
                                Instant.ofEpochMilli(MessageItems.requiredNumber(i, FAIL_FIRST_AT)),
                                Instant.ofEpochMilli(MessageItems.requiredNumber(i, FAIL_LAST_AT)),
                                MessageItems.required(i, FAIL_RELAY_ID).s())));
            } catch (RuntimeException e) {
                throw new IllegalStateException("corrupt failing head record in table " + messagesTable + " (bucket "
                        + bucket + ", seq " + i.get(MessageItems.SEQ) + "): " + e.getMessage(), e);
            }
        }
        return List.copyOf(found);
    }

    /** The reason cut so that its UTF-8 bytes fit in {@code room}, never splitting a surrogate pair. */
    private static String fit(String reason, long room) {
        String r = reason;
        while (r.getBytes(StandardCharsets.UTF_8).length > Math.max(0, room)) {
            long excess = r.getBytes(StandardCharsets.UTF_8).length - Math.max(0, room);
            r = DeadLetterFailure.cut(r, (int) Math.max(0, r.length() - Math.max(1, excess / 4)));
        }
        return r;
    }

    /** The pending item of the bucket holding the message id, oldest first; null when none. */
    private Map<String, AttributeValue> findPending(int bucket, UUID messageId) {
        Map<String, AttributeValue> start = null;
        do {
            Map<String, AttributeValue> from = start;
            QueryResponse page = client.query(q -> q.tableName(messagesTable)
                    .keyConditionExpression("#bucket = :b")
                    .filterExpression("#id = :id")
                    .expressionAttributeNames(Map.of("#bucket", MessageItems.BUCKET, "#id", MessageItems.ID))
                    .expressionAttributeValues(Map.of(":b", MessageItems.number(bucket),
                            ":id", AttributeValue.fromS(messageId.toString())))
                    .consistentRead(true).scanIndexForward(true).exclusiveStartKey(from));
            if (!page.items().isEmpty()) {
                return page.items().get(0);
            }
            start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
        } while (start != null);
        return null;
    }

    private List<DeadLetter> list(UUID after, int limit) {
        DeadLetters.requireLimit(limit);
        List<DeadLetter> page = new ArrayList<>();
        Map<String, AttributeValue> start = null;
        do {
            Map<String, AttributeValue> from = start;
            int want = limit - page.size();
            Map<String, AttributeValue> values = new HashMap<>();
            values.put(":pk", AttributeValue.fromS(DEAD));
            if (after != null) {
                values.put(":after", AttributeValue.fromS(after.toString()));
            }
            QueryResponse response = client.query(q -> q.tableName(coordinationTable)
                    .keyConditionExpression(after == null ? "#pk = :pk" : "#pk = :pk AND #sk > :after")
                    .expressionAttributeNames(after == null ? Map.of("#pk", CoordinationItems.PK)
                            : Map.of("#pk", CoordinationItems.PK, "#sk", CoordinationItems.SK))
                    .expressionAttributeValues(values).consistentRead(true).scanIndexForward(true).limit(want)
                    .exclusiveStartKey(from));
            response.items().forEach(i -> page.add(read(i)));
            start = response.hasLastEvaluatedKey() && !response.lastEvaluatedKey().isEmpty()
                    ? response.lastEvaluatedKey() : null;
        } while (start != null && page.size() < limit);
        return List.copyOf(page);
    }

    private Optional<DeadLetter> get(UUID messageId) {
        Map<String, AttributeValue> item = client.getItem(g -> g.tableName(coordinationTable)
                .key(deadKey(Objects.requireNonNull(messageId, "messageId must not be null"))).consistentRead(true))
                .item();
        return item == null || item.isEmpty() ? Optional.empty() : Optional.of(read(item));
    }

    private boolean replay(UUID messageId) {
        Objects.requireNonNull(messageId, "messageId must not be null");
        Map<String, AttributeValue> dead = client.getItem(g -> g.tableName(coordinationTable).key(deadKey(messageId))
                .consistentRead(true)).item();
        if (dead == null || dead.isEmpty()) {
            return false;
        }
        int bucket = Math.toIntExact(MessageItems.requiredNumber(dead, MessageItems.BUCKET));
        long seq = reserve(bucket);
        Map<String, AttributeValue> item = MessageItems.key(bucket, seq);
        item.put(MessageItems.ID, AttributeValue.fromS(messageId.toString()));
        for (String name : MESSAGE_ATTRIBUTES) {
            if (dead.containsKey(name)) {
                item.put(name, dead.get(name));
            }
        }
        try {
            client.transactWriteItems(r -> r.transactItems(
                    TransactWriteItem.builder().put(Put.builder().tableName(messagesTable).item(item)
                            .conditionExpression("attribute_not_exists(#bucket)")
                            .expressionAttributeNames(Map.of("#bucket", MessageItems.BUCKET)).build()).build(),
                    TransactWriteItem.builder().delete(Delete.builder().tableName(coordinationTable)
                            .key(deadKey(messageId)).conditionExpression("attribute_exists(#pk)")
                            .expressionAttributeNames(Map.of("#pk", CoordinationItems.PK)).build()).build()));
            return true;
        } catch (TransactionCanceledException e) {
            List<CancellationReason> reasons = e.hasCancellationReasons() ? e.cancellationReasons() : List.of();
            if (reasons.size() == 2 && "ConditionalCheckFailed".equals(reasons.get(1).code())) {
                return false; // replayed or purged meanwhile; the reserved number stays a harmless gap
            }
            throw e;
        }
    }

    private boolean purge(UUID messageId) {
        Objects.requireNonNull(messageId, "messageId must not be null");
        try {
            client.deleteItem(d -> d.tableName(coordinationTable).key(deadKey(messageId))
                    .conditionExpression("attribute_exists(#pk)")
                    .expressionAttributeNames(Map.of("#pk", CoordinationItems.PK)).returnValues(ReturnValue.NONE));
            return true;
        } catch (ConditionalCheckFailedException e) {
            return false;
        }
    }

    /** E5: one atomic increment reserves the bucket's next sequence number, as the writer does. */
    private long reserve(int bucket) {
        var response = client.updateItem(u -> u.tableName(coordinationTable)
                .key(CoordinationItems.counterKey(bucket))
                .updateExpression("ADD #seq :n SET #bucket = :b")
                .expressionAttributeNames(Map.of("#seq", CoordinationItems.SEQ, "#bucket", CoordinationItems.BUCKET))
                .expressionAttributeValues(Map.of(":n", MessageItems.number(1), ":b", MessageItems.number(bucket)))
                .returnValues(ReturnValue.UPDATED_NEW));
        return MessageItems.requiredNumber(response.attributes(), CoordinationItems.SEQ);
    }

    private DeadLetter read(Map<String, AttributeValue> i) {
        try {
            DeadLetterFailure failure = new DeadLetterFailure(MessageItems.required(i, REASON).s(),
                    MessageItems.required(i, CAUSE_CLASS).s(), Math.toIntExact(MessageItems.requiredNumber(i, ATTEMPTS)),
                    Instant.ofEpochMilli(MessageItems.requiredNumber(i, FIRST_FAILURE_AT)),
                    Instant.ofEpochMilli(MessageItems.requiredNumber(i, LAST_FAILURE_AT)),
                    MessageItems.required(i, RELAY_ID).s());
            return new DeadLetter(UUID.fromString(MessageItems.required(i, CoordinationItems.SK).s()),
                    Math.toIntExact(MessageItems.requiredNumber(i, MessageItems.BUCKET)),
                    MessageItems.required(i, MessageItems.TOPIC).s(), bytes(i.get(MessageItems.KEY)),
                    bytes(i.get(MessageItems.VALUE)), MessageItems.required(i, MessageItems.HEADERS).b().asByteArray(),
                    i.containsKey(MessageItems.PARTITION)
                            ? Math.toIntExact(MessageItems.requiredNumber(i, MessageItems.PARTITION)) : null,
                    Instant.ofEpochMilli(MessageItems.requiredNumber(i, MessageItems.CREATED_AT)), failure,
                    Instant.ofEpochMilli(MessageItems.requiredNumber(i, DEAD_LETTERED_AT)));
        } catch (RuntimeException e) {
            throw new IllegalStateException("corrupt dead letter item in table " + coordinationTable + " ("
                    + i.get(CoordinationItems.SK) + "): " + e.getMessage(), e);
        }
    }

    private static byte[] bytes(AttributeValue v) {
        return v == null ? null : v.b().asByteArray();
    }
}
