package io.outbox.store.mongodb;

import io.outbox.OutboxMessage;
import io.outbox.spi.Pending;
import io.outbox.spi.support.OutboxHeaderCodec;
import io.outbox.spi.support.StoredMessages;
import java.time.Instant;
import java.util.UUID;
import org.bson.BsonBinary;
import org.bson.BsonBinarySubType;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonInvalidOperationException;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * The BSON shape of one outbox message, written and read without the client's codec registry, so
 * the store behaves the same whatever {@code uuidRepresentation} the caller's client has.
 *
 * <pre>
 * { _id: UUID (binary subtype 4, the message id), bucket: int32, seq: int64,
 *   topic: string, key: binary | null, value: binary | null,
 *   headers: binary (OutboxHeaderCodec), partition: int32 | null, createdAt: date (epoch ms) }
 * </pre>
 */
final class MessageDocuments {

    static final String ID = "_id";
    static final String BUCKET = "bucket";
    static final String SEQ = "seq";
    static final String TOPIC = "topic";
    static final String KEY = "key";
    static final String VALUE = "value";
    static final String HEADERS = "headers";
    static final String PARTITION = "partition";
    static final String CREATED_AT = "createdAt";

    private MessageDocuments() {
    }

    /**
     * The document for a message. Its encoded size is at most
     * {@link MongoOutboxStore#DOCUMENT_OVERHEAD_BYTES} plus the message's payload size.
     */
    static BsonDocument toDocument(OutboxMessage message, long seq) {
        BsonDocument document = new BsonDocument(ID, new BsonBinary(message.messageId()));
        document.put(BUCKET, new BsonInt32(message.bucket()));
        document.put(SEQ, new BsonInt64(seq));
        document.put(TOPIC, new BsonString(message.topic()));
        document.put(KEY, binaryOrNull(StoredMessages.key(message))); // the message's own arrays, only read
        document.put(VALUE, binaryOrNull(StoredMessages.value(message)));
        document.put(HEADERS, new BsonBinary(StoredMessages.encodedHeaders(message)));
        document.put(PARTITION, message.partition() == null ? BsonNull.VALUE : new BsonInt32(message.partition()));
        document.put(CREATED_AT, new BsonDateTime(message.createdAt().toEpochMilli()));
        return document;
    }

    /**
     * Reads a message document as a pending entry. The key and value arrays the driver decoded
     * become the message's without a copy: the document is read once and then dropped.
     *
     * @throws IllegalStateException naming the document and the field when it is malformed
     */
    static Pending fromDocument(BsonDocument document, String collection) {
        try {
            UUID messageId = document.getBinary(ID).asUuid();
            OutboxMessage message = StoredMessages.rebuild(messageId, document.getInt32(BUCKET).getValue(),
                    document.getString(TOPIC).getValue(), bytesOrNull(document, KEY), bytesOrNull(document, VALUE),
                    OutboxHeaderCodec.decode(document.getBinary(HEADERS).getData()), partition(document),
                    Instant.ofEpochMilli(document.getDateTime(CREATED_AT).getValue()));
            return new Pending(message, new Handle(collection, messageId, document.getInt64(SEQ).getValue()));
        } catch (BsonInvalidOperationException | IllegalArgumentException e) {
            throw new IllegalStateException("corrupt outbox message document _id=" + describeId(document)
                    + " in collection " + collection + ": " + e.getMessage(), e);
        }
    }

    /**
     * The handle of a pending entry (S2): the {@code database.collection} the document was read
     * from, its {@code _id} (the message id) and its sequence number.
     */
    record Handle(String collection, UUID id, long seq) {
    }

    private static String describeId(BsonDocument document) {
        BsonValue id = document.get(ID);
        if (id != null && id.isBinary() && id.asBinary().getType() == BsonBinarySubType.UUID_STANDARD.getValue()) {
            return id.asBinary().asUuid().toString();
        }
        return String.valueOf(id);
    }

    private static BsonValue binaryOrNull(byte[] bytes) {
        return bytes == null ? BsonNull.VALUE : new BsonBinary(bytes);
    }

    private static byte[] bytesOrNull(BsonDocument document, String field) {
        BsonValue value = document.get(field);
        if (value == null) {
            throw new BsonInvalidOperationException("field '" + field + "' is missing");
        }
        return value.isNull() ? null : value.asBinary().getData();
    }

    private static Integer partition(BsonDocument document) {
        BsonValue value = document.get(PARTITION);
        if (value == null) {
            throw new BsonInvalidOperationException("field '" + PARTITION + "' is missing");
        }
        return value.isNull() ? null : value.asInt32().getValue();
    }
}
