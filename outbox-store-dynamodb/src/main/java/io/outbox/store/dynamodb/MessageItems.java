package io.outbox.store.dynamodb;

import io.outbox.OutboxMessage;
import io.outbox.spi.Pending;
import io.outbox.spi.support.OutboxHeaderCodec;
import io.outbox.spi.support.StoredMessages;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The layout of a message item in the messages table, and its conversions (rule S10).
 *
 * <pre>
 *   bucket    N  partition key
 *   seq       N  sort key: the per-bucket sequence reserved at enqueue (E5)
 *   id        S  message id (UUID)
 *   topic     S  Kafka topic
 *   key       B  serialized key; absent for a null key (an empty binary is an empty key)
 *   value     B  serialized value; absent for a null value
 *   headers   B  headers encoded with OutboxHeaderCodec (at least 5 bytes)
 *   partition N  explicit partition; absent for none
 *   createdAt N  creation time, epoch milliseconds
 * </pre>
 */
final class MessageItems {

    static final String BUCKET = "bucket";
    static final String SEQ = "seq";
    static final String ID = "id";
    static final String TOPIC = "topic";
    static final String KEY = "key";
    static final String VALUE = "value";
    static final String HEADERS = "headers";
    static final String PARTITION = "partition";
    static final String CREATED_AT = "createdAt";

    /** DynamoDB's item size limit: 400 KB, where 1 KB is 1,024 bytes; names and values count. */
    static final long ITEM_SIZE_LIMIT = 400 * 1024;

    /**
     * Bytes of an item kept for everything but the payload: attribute names (49 bytes), the message
     * id (36), a topic of up to 249 bytes and four numbers (at most 21 bytes each in DynamoDB's
     * accounting) come to at most 418; the rest is margin.
     */
    static final long RESERVED_ITEM_BYTES = 1024;

    /** Aggregate item size limit of one TransactWriteItems request: 4 MB. */
    static final long TRANSACTION_SIZE_LIMIT = 4L * 1024 * 1024;

    private MessageItems() {
    }

    static Map<String, AttributeValue> key(int bucket, long seq) {
        Map<String, AttributeValue> key = new HashMap<>(4);
        key.put(BUCKET, number(bucket));
        key.put(SEQ, number(seq));
        return key;
    }

    static Map<String, AttributeValue> toItem(OutboxMessage message, long seq) {
        Map<String, AttributeValue> item = key(message.bucket(), seq);
        item.put(ID, AttributeValue.fromS(message.messageId().toString()));
        item.put(TOPIC, AttributeValue.fromS(message.topic()));
        byte[] key = StoredMessages.key(message); // the message's own arrays: the SDK only reads them
        if (key != null) {
            item.put(KEY, AttributeValue.fromB(SdkBytes.fromByteArrayUnsafe(key)));
        }
        byte[] value = StoredMessages.value(message);
        if (value != null) {
            item.put(VALUE, AttributeValue.fromB(SdkBytes.fromByteArrayUnsafe(value)));
        }
        item.put(HEADERS, AttributeValue.fromB(SdkBytes.fromByteArrayUnsafe(StoredMessages.encodedHeaders(message))));
        if (message.partition() != null) {
            item.put(PARTITION, number(message.partition()));
        }
        item.put(CREATED_AT, number(message.createdAt().toEpochMilli()));
        return item;
    }

    /**
     * An item as a pending entry. The key and value arrays the SDK decoded become the message's
     * without a copy: the response is read once and then dropped.
     */
    static Pending fromItem(String table, Map<String, AttributeValue> item) {
        int bucket = Math.toIntExact(requiredNumber(item, BUCKET));
        long seq = requiredNumber(item, SEQ);
        try {
            OutboxMessage message = StoredMessages.rebuild(UUID.fromString(required(item, ID).s()), bucket,
                    required(item, TOPIC).s(), bytesOrNull(item.get(KEY)), bytesOrNull(item.get(VALUE)),
                    OutboxHeaderCodec.decode(required(item, HEADERS).b().asByteArrayUnsafe()),
                    item.containsKey(PARTITION) ? Math.toIntExact(requiredNumber(item, PARTITION)) : null,
                    Instant.ofEpochMilli(requiredNumber(item, CREATED_AT)));
            return new Pending(message, new Handle(table, seq));
        } catch (RuntimeException e) {
            throw new IllegalStateException("corrupt outbox item in table " + table + " (bucket " + bucket + ", seq "
                    + seq + "): " + e.getMessage(), e);
        }
    }

    /**
     * An item's size as DynamoDB counts it: for each attribute the UTF-8 length of its name plus
     * the value's size (strings: UTF-8 bytes; binaries: raw bytes; numbers: one byte per two
     * significant digits plus one).
     */
    static long itemSize(Map<String, AttributeValue> item) {
        long size = 0;
        for (Map.Entry<String, AttributeValue> e : item.entrySet()) {
            size += e.getKey().getBytes(StandardCharsets.UTF_8).length;
            AttributeValue v = e.getValue();
            if (v.s() != null) {
                size += v.s().getBytes(StandardCharsets.UTF_8).length;
            } else if (v.n() != null) {
                size += numberSize(v.n());
            } else if (v.b() != null) {
                size += v.b().asByteArrayUnsafe().length;
            } else {
                throw new IllegalArgumentException("unexpected attribute type in outbox item: " + e.getKey());
            }
        }
        return size;
    }

    private static long numberSize(String number) {
        String digits = new BigDecimal(number).unscaledValue().abs().toString().replaceAll("^0+|0+$", "");
        return (Math.max(1, digits.length()) + 1) / 2 + 1;
    }

    static AttributeValue number(long n) {
        return AttributeValue.fromN(Long.toString(n));
    }

    static AttributeValue required(Map<String, AttributeValue> item, String name) {
        AttributeValue v = item.get(name);
        if (v == null) {
            throw new IllegalStateException("attribute '" + name + "' is missing");
        }
        return v;
    }

    static long requiredNumber(Map<String, AttributeValue> item, String name) {
        String n = required(item, name).n();
        if (n == null) {
            throw new IllegalStateException("attribute '" + name + "' is not a number");
        }
        return Long.parseLong(n);
    }

    private static byte[] bytesOrNull(AttributeValue v) {
        return v == null ? null : v.b().asByteArrayUnsafe();
    }

    /** The handle of a pending entry (S2): the messages table it was read from and its sort key. */
    record Handle(String table, long seq) {
    }
}
