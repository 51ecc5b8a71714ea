package io.outbox.store.dynamodb;

import io.outbox.InboxRetention;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.support.InboxArguments;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Pattern;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.CancellationReason;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.CreateTableRequest;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.Put;
import software.amazon.awssdk.services.dynamodb.model.ResourceInUseException;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.ScanRequest;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;
import software.amazon.awssdk.services.dynamodb.model.TableStatus;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;

/**
 * The consumer-side inbox on DynamoDB (rules I1, I2): the marker {@code (messageId, consumer)} is
 * a conditional {@code Put} ({@code attribute_not_exists}) that travels in the consumer's own
 * {@code TransactWriteItems} request beside its business items, so both are written or neither.
 *
 * <pre>{@code
 * DynamoDbInbox inbox = DynamoDbInbox.builder(dynamoDb).retention(Duration.ofDays(7)).build();
 * UUID id = MessageIdReader.messageId(record);
 * boolean first = inbox.firstDelivery("billing", id, List.of(chargeCustomerUpdate));
 * // true: the charge and the marker were written together; false: a repeat, nothing was written
 * }</pre>
 *
 * <h2>How the caller learns "repeat"</h2>
 * DynamoDB decides when the transaction runs, not before: when the marker exists already, its
 * condition fails and DynamoDB cancels the whole transaction with a
 * {@link TransactionCanceledException} whose {@link TransactionCanceledException#cancellationReasons()
 * cancellationReasons()} (one per item, in request order) hold {@code ConditionalCheckFailed} at
 * the marker's position. None of the caller's items is written then: that is the repeat.
 * {@link #firstDelivery(String, UUID, Collection)} sends the request and turns this into
 * {@code false}; a caller that sends its own request adds {@link #marker(String, UUID)} to it and
 * asks {@link #isRepeat(TransactionCanceledException, int)} with the marker's index. Concurrent
 * deliveries of one id are serialized by DynamoDB: one transaction writes the marker, the others
 * are cancelled with {@code ConditionalCheckFailed} (repeat) or {@code TransactionConflict}
 * (transient: send again), so exactly one first delivery commits (I1).
 *
 * <h2>Table</h2>
 * Default {@value #DEFAULT_TABLE}: partition key {@code messageId} (S, the UUID's text), sort key
 * {@code consumer} (S), attribute {@code seenAt} (N, epoch milliseconds from the inbox's clock).
 * Keyed by message id first so that markers spread over partitions. No TTL: markers leave only
 * through the cleanup (I2); a TTL attribute would delete them on DynamoDB's own schedule.
 *
 * <h2>Retention (I2)</h2>
 * {@link #deleteExpiredBatch()} scans the table (eventually consistent, projection of the keys,
 * filter {@code seenAt < now - retention}) until it has found at most {@link #cleanupBatchSize()}
 * expired markers, and deletes each with a {@code DeleteItem} conditioned on the same
 * {@code seenAt < cutoff}, so a marker written again in the meantime is never deleted.
 * {@link #deleteExpired()} goes through the whole table once. A scan reads every marker, so a
 * cleanup costs read capacity in proportion to the table's size: run it rarely (daily).
 *
 * <p>Thread-safe; the client stays the caller's.
 */
public final class DynamoDbInbox implements InboxRetention {

    /** The table name unless another is set. */
    public static final String DEFAULT_TABLE = "outbox_inbox";

    /** The partition key attribute: the message id as text. */
    public static final String MESSAGE_ID = "messageId";

    /** The sort key attribute: the consumer name. */
    public static final String CONSUMER = "consumer";

    /** The attribute holding when the marker was written, epoch milliseconds. */
    public static final String SEEN_AT = "seenAt";

    /** The cancellation reason of a failed condition. */
    static final String CONDITIONAL_CHECK_FAILED = "ConditionalCheckFailed";

    /** How often {@link #firstDelivery} sends a transaction cancelled for transient reasons. */
    static final int MAX_TRANSACTION_ATTEMPTS = 5;

    private static final Pattern TABLE_NAME = Pattern.compile("[a-zA-Z0-9_.-]{3,255}");
    private static final Set<String> TRANSIENT_REASONS = Set.of("TransactionConflict", "ThrottlingError",
            "ProvisionedThroughputExceeded", "RequestLimitExceeded");
    private static final Map<String, String> KEY_NAMES = Map.of("#m", MESSAGE_ID);
    private static final Map<String, String> SEEN_NAMES = Map.of("#s", SEEN_AT);

    private final DynamoDbClient client;
    private final String table;
    private final Clock clock;
    private final Duration retention;
    private final int cleanupBatchSize;

    private DynamoDbInbox(Builder builder) {
        this.client = builder.client;
        this.table = builder.table;
        this.clock = builder.clock;
        this.retention = builder.retention;
        this.cleanupBatchSize = builder.cleanupBatchSize;
    }

    /**
     * Starts building an inbox.
     *
     * @param client the caller's client; not null; not closed by the inbox
     * @return a builder with the defaults: table {@value #DEFAULT_TABLE}, the system UTC clock,
     *     7 days' retention, batches of 1,000
     */
    public static Builder builder(DynamoDbClient client) {
        return new Builder(client);
    }

    /**
     * The marker as a transaction item for the caller's own {@code TransactWriteItems} request:
     * a {@code Put} of {@code {messageId, consumer, seenAt}} guarded by
     * {@code attribute_not_exists(messageId)}. Put it into exactly one request, and remember its
     * index for {@link #isRepeat(TransactionCanceledException, int)}.
     *
     * @param consumerName who consumes; see {@link InboxArguments#requireConsumerName(String)}
     * @param messageId the outbox message id; not null
     * @return the item; {@code seenAt} is the inbox clock's time now
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the consumer name is not allowed
     */
    public TransactWriteItem marker(String consumerName, UUID messageId) {
        InboxArguments.requireConsumerName(consumerName);
        InboxArguments.requireMessageId(messageId);
        return TransactWriteItem.builder().put(Put.builder()
                .tableName(table)
                .item(Map.of(MESSAGE_ID, AttributeValue.fromS(messageId.toString()),
                        CONSUMER, AttributeValue.fromS(consumerName),
                        SEEN_AT, AttributeValue.fromN(Long.toString(clock.millis()))))
                .conditionExpression("attribute_not_exists(#m)")
                .expressionAttributeNames(KEY_NAMES)
                .build()).build();
    }

    /**
     * Whether a cancelled transaction was cancelled because its marker exists: a repeat.
     *
     * @param cancelled the exception of the caller's {@code transactWriteItems}; not null
     * @param markerIndex the marker's position in the request's items, {@code >= 0}
     * @return true if the reason at {@code markerIndex} is {@code ConditionalCheckFailed}
     * @throws NullPointerException if {@code cancelled} is null
     * @throws IllegalArgumentException if the exception carries no reason for that index
     */
    public static boolean isRepeat(TransactionCanceledException cancelled, int markerIndex) {
        Objects.requireNonNull(cancelled, "cancelled must not be null");
        if (!cancelled.hasCancellationReasons() || markerIndex < 0
                || markerIndex >= cancelled.cancellationReasons().size()) {
            throw new IllegalArgumentException("the cancellation has no reason for item " + markerIndex + " (it has "
                    + (cancelled.hasCancellationReasons() ? cancelled.cancellationReasons().size() : 0)
                    + "): pass the marker's index in the request's items");
        }
        return CONDITIONAL_CHECK_FAILED.equals(cancelled.cancellationReasons().get(markerIndex).code());
    }

    /**
     * Runs one {@code TransactWriteItems} request with the caller's items followed by the marker
     * and says whether it was the first delivery (I1): true when everything was written; false
     * when the marker existed, in which case nothing was written. A cancellation whose reasons are
     * all transient ({@code TransactionConflict}, throttling) is sent again, up to
     * {@value #MAX_TRANSACTION_ATTEMPTS} times in all with a growing pause (the marker keeps the
     * {@code seenAt} of the first attempt).
     *
     * @param consumerName who consumes
     * @param messageId the outbox message id; not null
     * @param businessItems the caller's own items, at most 99; not null, may be empty
     * @return true if the marker and the items were written, false for a repeat
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the consumer name is not allowed, or there are more than
     *     99 business items
     * @throws TransactionCanceledException if DynamoDB cancelled the transaction for another
     *     reason (a business condition failed, say) or transient reasons persisted; nothing was
     *     written
     */
    public boolean firstDelivery(String consumerName, UUID messageId, Collection<TransactWriteItem> businessItems) {
        Objects.requireNonNull(businessItems, "businessItems must not be null");
        if (businessItems.size() >= DynamoDbOutboxWriter.MAX_TRANSACTION_ITEMS) {
            throw new IllegalArgumentException(businessItems.size() + " business items and the inbox marker do not"
                    + " fit one DynamoDB transaction (at most " + DynamoDbOutboxWriter.MAX_TRANSACTION_ITEMS + ")");
        }
        List<TransactWriteItem> items = new ArrayList<>(businessItems);
        int markerIndex = items.size();
        items.add(marker(consumerName, messageId));
        for (int attempt = 1; ; attempt++) {
            try {
                client.transactWriteItems(r -> r.transactItems(items));
                return true;
            } catch (TransactionCanceledException e) {
                if (isRepeat(e, markerIndex)) {
                    return false;
                }
                if (attempt >= MAX_TRANSACTION_ATTEMPTS || !isTransient(e)) {
                    throw e;
                }
                pause(Math.min(1_000L, 50L << (attempt - 1)), e);
            }
        }
    }

    /**
     * Whether a committed marker exists (a strongly consistent {@code GetItem}): for tests and
     * operators.
     *
     * @param consumerName the consumer name
     * @param messageId the message id
     * @return true if it exists
     */
    public boolean hasMarker(String consumerName, UUID messageId) {
        return client.getItem(r -> r.tableName(table).consistentRead(true)
                .key(key(InboxArguments.requireConsumerName(consumerName), InboxArguments.requireMessageId(messageId)))
        ).hasItem();
    }

    @Override
    public Duration retention() {
        return retention;
    }

    @Override
    public int cleanupBatchSize() {
        return cleanupBatchSize;
    }

    @Override
    public int deleteExpiredBatch() {
        long cutoff = InboxArguments.cutoffMillis(clock.millis(), retention);
        List<Map<String, AttributeValue>> expired = new ArrayList<>();
        Map<String, AttributeValue> start = null;
        do {
            ScanResponse page = scan(cutoff, start, cleanupBatchSize - expired.size());
            expired.addAll(page.items());
            start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
        } while (start != null && expired.size() < cleanupBatchSize);
        return delete(expired, cutoff);
    }

    @Override
    public long deleteExpired() {
        long cutoff = InboxArguments.cutoffMillis(clock.millis(), retention);
        long total = 0;
        Map<String, AttributeValue> start = null;
        do {
            ScanResponse page = scan(cutoff, start, cleanupBatchSize);
            total += delete(page.items(), cutoff);
            start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
        } while (start != null);
        return total;
    }

    /** One page of at most {@code limit} evaluated items, of which the expired ones come back. */
    private ScanResponse scan(long cutoff, Map<String, AttributeValue> start, int limit) {
        ScanRequest.Builder request = ScanRequest.builder().tableName(table)
                .projectionExpression("#m, #c")
                .filterExpression("#s < :cutoff")
                .expressionAttributeNames(Map.of("#m", MESSAGE_ID, "#c", CONSUMER, "#s", SEEN_AT))
                .expressionAttributeValues(Map.of(":cutoff", AttributeValue.fromN(Long.toString(cutoff))))
                .limit(Math.max(1, limit));
        if (start != null) {
            request.exclusiveStartKey(start);
        }
        return client.scan(request.build());
    }

    private int delete(List<Map<String, AttributeValue>> keys, long cutoff) {
        int deleted = 0;
        for (Map<String, AttributeValue> key : keys) {
            try {
                client.deleteItem(r -> r.tableName(table).key(key).conditionExpression("#s < :cutoff")
                        .expressionAttributeNames(SEEN_NAMES)
                        .expressionAttributeValues(Map.of(":cutoff", AttributeValue.fromN(Long.toString(cutoff)))));
                deleted++;
            } catch (ConditionalCheckFailedException goneOrYoung) {
                // deleted by a concurrent cleanup, or written again since the scan: not ours to delete
            }
        }
        return deleted;
    }

    /**
     * The table's definition, to copy into infrastructure code: partition key {@code messageId}
     * (S), sort key {@code consumer} (S), on-demand billing.
     *
     * @param tableName the table name; not null
     * @return the request
     */
    public static CreateTableRequest tableRequest(String tableName) {
        Objects.requireNonNull(tableName, "tableName must not be null");
        return CreateTableRequest.builder()
                .tableName(tableName)
                .billingMode(BillingMode.PAY_PER_REQUEST)
                .attributeDefinitions(
                        AttributeDefinition.builder().attributeName(MESSAGE_ID).attributeType(ScalarAttributeType.S).build(),
                        AttributeDefinition.builder().attributeName(CONSUMER).attributeType(ScalarAttributeType.S).build())
                .keySchema(
                        KeySchemaElement.builder().attributeName(MESSAGE_ID).keyType(KeyType.HASH).build(),
                        KeySchemaElement.builder().attributeName(CONSUMER).keyType(KeyType.RANGE).build())
                .build();
    }

    /**
     * Creates the table unless it exists and waits until it is ACTIVE, at most
     * {@link DynamoDbOutboxTables#DEFAULT_TIMEOUT}. Idempotent.
     *
     * @throws OutboxMisconfigurationException if the table exists with another key schema
     * @throws IllegalStateException if the table is not ACTIVE in time, or the thread is interrupted
     * @throws software.amazon.awssdk.core.exception.SdkException on a DynamoDB error
     */
    public void createSchema() {
        createSchema(DynamoDbOutboxTables.DEFAULT_TIMEOUT);
    }

    /**
     * Creates the table unless it exists and waits until it is ACTIVE, at most {@code timeout}.
     * Idempotent.
     *
     * @param timeout how long to wait; not null, positive
     * @throws OutboxMisconfigurationException if the table exists with another key schema
     * @throws IllegalStateException if the table is not ACTIVE in time, or the thread is interrupted
     * @throws software.amazon.awssdk.core.exception.SdkException on a DynamoDB error
     */
    public void createSchema(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout must not be null");
        try {
            client.createTable(tableRequest(table));
        } catch (ResourceInUseException exists) {
            // created before, or being created by another instance
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            try {
                var description = client.describeTable(r -> r.tableName(table)).table();
                if (description.tableStatus() == TableStatus.ACTIVE) {
                    List<String> keys = description.keySchema().stream()
                            .map(k -> k.keyTypeAsString() + ":" + k.attributeName()).toList();
                    if (!keys.equals(List.of("HASH:" + MESSAGE_ID, "RANGE:" + CONSUMER))) {
                        throw new OutboxMisconfigurationException("inbox table " + table + " exists with key schema "
                                + keys + " but the inbox needs [HASH:" + MESSAGE_ID + ", RANGE:" + CONSUMER
                                + "]; use another table name or recreate it");
                    }
                    return;
                }
            } catch (ResourceNotFoundException notYetVisible) {
                // keep waiting
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("inbox table " + table + " is not ACTIVE after " + timeout);
            }
            pause(100, null);
        }
    }

    /**
     * Checks that the table exists with the inbox's keys, with one {@code GetItem} of a key no
     * marker has.
     *
     * @throws OutboxMisconfigurationException naming the table and how to create it
     * @throws software.amazon.awssdk.core.exception.SdkException on another DynamoDB error
     */
    public void verifySchema() {
        try {
            client.getItem(r -> r.tableName(table).key(Map.of(MESSAGE_ID, AttributeValue.fromS("outbox-verify"),
                    CONSUMER, AttributeValue.fromS("outbox-verify"))));
        } catch (ResourceNotFoundException e) {
            throw new OutboxMisconfigurationException("inbox table " + table + " does not exist (or is not visible in"
                    + " this region and account); create it with DynamoDbInbox.createSchema or the definition of"
                    + " DynamoDbInbox.tableRequest", e);
        } catch (DynamoDbException e) {
            if (e.statusCode() == 400 && e.awsErrorDetails() != null
                    && "ValidationException".equals(e.awsErrorDetails().errorCode())) {
                throw new OutboxMisconfigurationException("inbox table " + table + " does not have the key schema"
                        + " the inbox needs (partition key " + MESSAGE_ID + " S, sort key " + CONSUMER + " S): "
                        + e.awsErrorDetails().errorMessage(), e);
            }
            throw e;
        }
    }

    /**
     * The table's name.
     *
     * @return the table name
     */
    public String table() {
        return table;
    }

    @Override
    public String toString() {
        return "DynamoDbInbox[" + table + ", retention=" + retention + ", cleanupBatchSize=" + cleanupBatchSize + "]";
    }

    private static Map<String, AttributeValue> key(String consumerName, UUID messageId) {
        return Map.of(MESSAGE_ID, AttributeValue.fromS(messageId.toString()), CONSUMER, AttributeValue.fromS(consumerName));
    }

    private static boolean isTransient(TransactionCanceledException e) {
        boolean anyTransient = false;
        for (CancellationReason reason : e.cancellationReasons()) {
            String code = reason.code();
            if (TRANSIENT_REASONS.contains(code)) {
                anyTransient = true;
            } else if (code != null && !code.equals("None")) {
                return false;
            }
        }
        return anyTransient;
    }

    private static void pause(long millis, RuntimeException pending) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            RuntimeException e = pending != null ? pending
                    : new IllegalStateException("interrupted while waiting for the inbox table");
            e.addSuppressed(interrupted);
            throw e;
        }
    }

    /** Builds a {@link DynamoDbInbox}; validation happens in {@link #build()}. Not thread-safe. */
    public static final class Builder {

        private final DynamoDbClient client;
        private String table = DEFAULT_TABLE;
        private Clock clock = Clock.systemUTC();
        private Duration retention = InboxArguments.DEFAULT_RETENTION;
        private int cleanupBatchSize = InboxArguments.DEFAULT_CLEANUP_BATCH_SIZE;

        private Builder(DynamoDbClient client) {
            this.client = Objects.requireNonNull(client, "client must not be null");
        }

        /**
         * Sets the table name.
         *
         * @param name 3 to 255 characters of {@code [a-zA-Z0-9_.-]}; default {@value #DEFAULT_TABLE}
         * @return this builder
         */
        public Builder table(String name) {
            this.table = name;
            return this;
        }

        /**
         * Sets the clock of {@code seenAt} and of the cleanup's cutoff.
         *
         * @param clock the clock; default {@link Clock#systemUTC()}
         * @return this builder
         */
        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /**
         * Sets how long markers are kept at least (I2).
         *
         * @param retention at least 1 s; default 7 days
         * @return this builder
         */
        public Builder retention(Duration retention) {
            this.retention = retention;
            return this;
        }

        /**
         * Sets the most markers one cleanup batch deletes (and the scan's page size).
         *
         * @param batchSize 1 to {@value InboxArguments#MAX_CLEANUP_BATCH_SIZE}; default
         *     {@value InboxArguments#DEFAULT_CLEANUP_BATCH_SIZE}
         * @return this builder
         */
        public Builder cleanupBatchSize(int batchSize) {
            this.cleanupBatchSize = batchSize;
            return this;
        }

        /**
         * Validates and builds; touches no table.
         *
         * @return the inbox
         * @throws NullPointerException if the table, clock or retention is null
         * @throws IllegalArgumentException naming the bad setting and value
         */
        public DynamoDbInbox build() {
            Objects.requireNonNull(table, "table must not be null");
            if (!TABLE_NAME.matcher(table).matches()) {
                throw new IllegalArgumentException("inbox table name '" + table + "' breaks DynamoDB's rule: 3 to 255"
                        + " characters of letters, digits, '_', '.' and '-'");
            }
            Objects.requireNonNull(clock, "clock must not be null");
            InboxArguments.requireRetention(retention);
            InboxArguments.requireCleanupBatchSize(cleanupBatchSize);
            return new DynamoDbInbox(this);
        }
    }
}
