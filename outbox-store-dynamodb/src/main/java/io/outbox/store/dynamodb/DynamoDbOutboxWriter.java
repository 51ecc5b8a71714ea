package io.outbox.store.dynamodb;

import io.outbox.OutboxMessage;
import io.outbox.OutboxPayloadTooLargeException;
import io.outbox.spi.support.SequenceReservation;
import io.outbox.spi.support.StoredMessages;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.CancellationReason;
import software.amazon.awssdk.services.dynamodb.model.Put;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsRequest;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * The enqueue side (rule E4): turns outbox messages into {@link TransactWriteItem}s that the caller
 * puts into its own {@code TransactWriteItems} request, next to its business writes, so that the
 * messages exist if and only if the business change commits.
 *
 * <pre>{@code
 * DynamoDbOutboxWriter outbox = store.writer();     // DynamoDbOutboxStore.builder(dynamoDb)...build()
 * List<TransactWriteItem> items = new ArrayList<>();
 * items.add(TransactWriteItem.builder().put(orderPut).build());          // the business write
 * items.add(outbox.prepare(messages.create("orders", id, json)));        // an OutboxMessageFactory
 * dynamoDb.transactWriteItems(r -> r.transactItems(items));
 * }</pre>
 *
 * <p>{@link #prepare} first reserves each message's place in its bucket with one atomic
 * {@code UpdateItem ... ADD seq :n} on the bucket's counter item, {@code ReturnValues UPDATED_NEW}
 * (E5), then returns a {@code Put} of the message item guarded by
 * {@code attribute_not_exists(bucket)}. The reservation happens outside the caller's transaction: a
 * transaction that is cancelled, or never sent, leaves a gap in the bucket's sequence, which is
 * harmless (only the order matters), and no message.
 *
 * <p>Limits of a DynamoDB transaction, which the caller's own items share: at most
 * {@value #MAX_TRANSACTION_ITEMS} items and 4 MB of items in total; {@link #prepare(List)} refuses
 * more than {@value #MAX_TRANSACTION_ITEMS} messages or more than 4 MB of message items. A payload
 * (key + value + encoded headers) above {@link DynamoDbOutboxStore#MAX_PAYLOAD_BYTES} is refused with
 * {@link OutboxPayloadTooLargeException} before anything is reserved or written (S10).
 *
 * <p>Get it from {@link DynamoDbOutboxStore#writer()}, so that it writes the tables the store reads.
 * Thread-safe; the client is the store's and is not closed here.
 */
public final class DynamoDbOutboxWriter {

    /** The most items one {@code TransactWriteItems} request may hold (messages and the caller's own). */
    public static final int MAX_TRANSACTION_ITEMS = 100;

    /** How many times {@link #enqueue(Collection, List)} sends a transaction cancelled for transient reasons. */
    static final int MAX_TRANSACTION_ATTEMPTS = 5;

    private static final Logger LOG = LoggerFactory.getLogger(DynamoDbOutboxWriter.class);

    /** Cancellation reason codes that a resend of the same transaction may overcome. */
    private static final Set<String> TRANSIENT_REASONS = Set.of("TransactionConflict", "ThrottlingError",
            "ProvisionedThroughputExceeded", "RequestLimitExceeded");

    private static final Map<String, String> GUARD_NAMES = Map.of("#bucket", MessageItems.BUCKET);
    private static final Map<String, String> COUNTER_NAMES = Map.of("#seq", CoordinationItems.SEQ,
            "#bucket", CoordinationItems.BUCKET);

    private final DynamoDbClient client;
    private final String messagesTable;
    private final String coordinationTable;

    /** A writer on the store's client and tables (the clock is not used on the enqueue side). */
    DynamoDbOutboxWriter(DynamoDbClient client, DynamoDbOutboxOptions options) {
        this.client = Objects.requireNonNull(client, "client must not be null");
        Objects.requireNonNull(options, "options must not be null");
        this.messagesTable = options.messagesTable();
        this.coordinationTable = options.coordinationTable();
    }

    /**
     * Reserves the message's sequence number and returns the guarded {@code Put} of its item, for
     * the caller's {@code TransactWriteItems} request. Costs one {@code UpdateItem} call.
     *
     * @param message the message; not null
     * @return a transaction item writing the message; put it into exactly one transaction
     * @throws OutboxPayloadTooLargeException if the payload exceeds
     *     {@link DynamoDbOutboxStore#MAX_PAYLOAD_BYTES}; nothing was reserved or written
     * @throws software.amazon.awssdk.core.exception.SdkException if the reservation fails (after the
     *     client's retries); nothing was written
     */
    public TransactWriteItem prepare(OutboxMessage message) {
        return prepare(List.of(Objects.requireNonNull(message, "message must not be null"))).get(0);
    }

    /**
     * Reserves the messages' sequence numbers, in list order within each bucket, and returns one
     * guarded {@code Put} per message, in list order. Costs one {@code UpdateItem} call per
     * distinct bucket (it reserves a bucket's numbers with a single {@code ADD}); an empty list
     * costs nothing.
     *
     * @param messages the messages, in enqueue order; not null, no null elements, at most
     *     {@value #MAX_TRANSACTION_ITEMS}
     * @return the transaction items, one per message, same order; immutable
     * @throws IllegalArgumentException if there are more than {@value #MAX_TRANSACTION_ITEMS}
     *     messages, or their items exceed 4 MB together; nothing was reserved
     * @throws OutboxPayloadTooLargeException if a payload exceeds
     *     {@link DynamoDbOutboxStore#MAX_PAYLOAD_BYTES}; nothing was reserved or written
     * @throws software.amazon.awssdk.core.exception.SdkException if a reservation fails; nothing was
     *     written (numbers already reserved stay as gaps)
     */
    public List<TransactWriteItem> prepare(List<OutboxMessage> messages) {
        Objects.requireNonNull(messages, "messages must not be null");
        if (messages.size() > MAX_TRANSACTION_ITEMS) {
            throw new IllegalArgumentException(messages.size() + " outbox messages do not fit one DynamoDB transaction"
                    + " (at most " + MAX_TRANSACTION_ITEMS + " items, the caller's own items included);"
                    + " split them over several transactions");
        }
        long totalBytes = 0;
        for (OutboxMessage m : messages) {
            StoredMessages.requirePayloadAtMost(Objects.requireNonNull(m, "messages must not contain null"),
                    DynamoDbOutboxStore.MAX_PAYLOAD_BYTES);
            totalBytes += StoredMessages.payloadSize(m) + MessageItems.RESERVED_ITEM_BYTES;
        }
        if (totalBytes > MessageItems.TRANSACTION_SIZE_LIMIT) {
            throw new IllegalArgumentException("the " + messages.size() + " outbox messages take up to " + totalBytes
                    + " bytes, more than the " + MessageItems.TRANSACTION_SIZE_LIMIT
                    + " bytes one DynamoDB transaction may write; split them over several transactions");
        }
        long[] seqs = SequenceReservation.reserve(messages, this::reserve);
        List<TransactWriteItem> items = new ArrayList<>(messages.size());
        for (int i = 0; i < messages.size(); i++) {
            items.add(TransactWriteItem.builder().put(Put.builder()
                    .tableName(messagesTable)
                    .item(MessageItems.toItem(messages.get(i), seqs[i]))
                    .conditionExpression("attribute_not_exists(#bucket)")
                    .expressionAttributeNames(GUARD_NAMES)
                    .build()).build());
        }
        return List.copyOf(items);
    }

    /**
     * Writes messages in a transaction of their own (no business items). Equivalent to
     * {@code enqueue(List.of(), messages)}.
     *
     * @param messages the messages, in enqueue order; not null, at most {@value #MAX_TRANSACTION_ITEMS}
     * @throws IllegalArgumentException if they do not fit one transaction; nothing was written
     * @throws OutboxPayloadTooLargeException if a payload is too large; nothing was written
     * @throws TransactionCanceledException if DynamoDB cancelled the transaction; nothing was written
     */
    public void enqueue(List<OutboxMessage> messages) {
        enqueue(List.of(), messages);
    }

    /**
     * Runs one {@code TransactWriteItems} request holding the caller's items followed by the
     * messages: all of them are written, or none. A cancellation whose reasons are all transient
     * ({@code TransactionConflict}, {@code ThrottlingError}, {@code ProvisionedThroughputExceeded},
     * {@code RequestLimitExceeded}) is sent again, up to {@value #MAX_TRANSACTION_ATTEMPTS} times in
     * all with a growing pause; any other cancellation (a failed condition of the caller's, say) is
     * thrown at once. Throttling of the request itself and 5xx errors are retried by the client's
     * retry strategy.
     *
     * @param businessItems the caller's own transaction items; not null, may be empty
     * @param messages the messages, in enqueue order; not null
     * @throws IllegalArgumentException if the items together exceed {@value #MAX_TRANSACTION_ITEMS};
     *     nothing was reserved or written
     * @throws OutboxPayloadTooLargeException if a payload is too large; nothing was reserved or written
     * @throws TransactionCanceledException if DynamoDB cancelled the transaction; nothing was written
     *     (see {@link TransactionCanceledException#cancellationReasons()}, in request order)
     */
    public void enqueue(Collection<TransactWriteItem> businessItems, List<OutboxMessage> messages) {
        Objects.requireNonNull(businessItems, "businessItems must not be null");
        Objects.requireNonNull(messages, "messages must not be null");
        int total = businessItems.size() + messages.size();
        if (total > MAX_TRANSACTION_ITEMS) {
            throw new IllegalArgumentException(businessItems.size() + " business items and " + messages.size()
                    + " outbox messages do not fit one DynamoDB transaction (at most " + MAX_TRANSACTION_ITEMS
                    + " items)");
        }
        List<TransactWriteItem> items = new ArrayList<>(total);
        items.addAll(businessItems);
        items.addAll(prepare(messages));
        if (items.isEmpty()) {
            return;
        }
        TransactWriteItemsRequest request = TransactWriteItemsRequest.builder().transactItems(items).build();
        for (int attempt = 1; ; attempt++) {
            try {
                client.transactWriteItems(request);
                return;
            } catch (TransactionCanceledException e) {
                if (attempt >= MAX_TRANSACTION_ATTEMPTS || !isTransient(e)) {
                    throw e;
                }
                LOG.debug("outbox transaction cancelled for transient reasons {}; attempt {} of {}",
                        reasonCodes(e), attempt, MAX_TRANSACTION_ATTEMPTS);
                pause(Math.min(1_000L, 50L << (attempt - 1)), e);
            }
        }
    }

    /**
     * The largest payload {@link #prepare} accepts.
     *
     * <p>What it counts: the serialized key, the serialized value and the headers as stored, encoded
     * with {@link io.outbox.spi.support.OutboxHeaderCodec}, which stores
     * {@value io.outbox.spi.support.OutboxHeaderCodec#EMPTY_ENCODED_SIZE} bytes for a message without
     * headers ({@link StoredMessages#payloadSize}); a larger message is refused at enqueue with
     * {@link OutboxPayloadTooLargeException}, whose message names the three parts. So a
     * message without headers holds at most this limit minus 5 bytes of key and value together
     * (408,576: 408,571 bytes of key and value).
     *
     * @return {@link DynamoDbOutboxStore#MAX_PAYLOAD_BYTES}, in bytes
     */
    public long maxPayloadBytes() {
        return DynamoDbOutboxStore.MAX_PAYLOAD_BYTES;
    }

    /** E5: one atomic increment reserves {@code count} numbers; returns the last of them. */
    private long reserve(int bucket, int count) {
        var response = client.updateItem(UpdateItemRequest.builder()
                .tableName(coordinationTable)
                .key(CoordinationItems.counterKey(bucket))
                .updateExpression("ADD #seq :n SET #bucket = :b")
                .expressionAttributeNames(COUNTER_NAMES)
                .expressionAttributeValues(Map.of(":n", MessageItems.number(count), ":b", MessageItems.number(bucket)))
                .returnValues(ReturnValue.UPDATED_NEW)
                .build());
        return MessageItems.requiredNumber(response.attributes(), CoordinationItems.SEQ);
    }

    static boolean isTransient(TransactionCanceledException e) {
        if (!e.hasCancellationReasons()) {
            return false;
        }
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

    private static List<String> reasonCodes(TransactionCanceledException e) {
        return e.cancellationReasons().stream().map(CancellationReason::code).toList();
    }

    private static void pause(long millis, RuntimeException pending) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            pending.addSuppressed(interrupted);
            throw pending;
        }
    }
}
