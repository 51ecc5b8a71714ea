package io.outbox.store.mongodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.OutboxHeader;
import io.outbox.OutboxMessage;
import io.outbox.spi.Pending;
import io.outbox.spi.support.StoredMessages;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.junit.jupiter.api.Test;

/** The document encoding and the arithmetic behind the declared payload limit (S10). */
class MessageDocumentsTest {

    static long encodedSize(BsonDocument document) {
        return new RawBsonDocument(document, new BsonDocumentCodec()).getByteBuffer().remaining();
    }

    private static OutboxMessage withEverythingEmpty(String topic, byte[] key, Integer partition) {
        return StoredMessages.rebuild(UUID.randomUUID(), Integer.MAX_VALUE, topic, key, new byte[0], List.of(),
                partition, Instant.parse("2106-02-07T06:28:16.001Z"));
    }

    @Test
    void S10_theOverheadIsThatOfTheWorstCaseDocument() {
        OutboxMessage worst = withEverythingEmpty("t".repeat(OutboxMessage.MAX_TOPIC_LENGTH), new byte[0], 0);
        BsonDocument document = MessageDocuments.toDocument(worst, Long.MAX_VALUE);
        assertThat(encodedSize(document) - StoredMessages.payloadSize(worst))
                .isEqualTo(MongoOutboxStore.DOCUMENT_OVERHEAD_BYTES);
        assertThat(MongoOutboxStore.MAX_PAYLOAD_BYTES).isEqualTo(16L * 1024 * 1024 - 387).isEqualTo(16_776_829L);
    }

    @Test
    void S10_nullKeysNullPartitionsAndShorterTopicsOnlyShrinkTheDocument() {
        OutboxMessage lean = withEverythingEmpty("t", null, null);
        assertThat(encodedSize(MessageDocuments.toDocument(lean, 1)) - StoredMessages.payloadSize(lean))
                .isLessThan(MongoOutboxStore.DOCUMENT_OVERHEAD_BYTES);
    }

    @Test
    void S10_everyFieldRoundTripsThroughTheDocument() {
        OutboxMessage original = StoredMessages.rebuild(UUID.randomUUID(), 5, "orders", new byte[0], null,
                List.of(OutboxHeader.of("a", null), OutboxHeader.of("a", new byte[0]), OutboxHeader.ofUtf8("é", "x")),
                3, Instant.parse("1999-12-31T23:59:59.999Z"));
        Pending read = MessageDocuments.fromDocument(MessageDocuments.toDocument(original, 42), "db.messages");
        assertThat(read.message()).isEqualTo(original);
        assertThat(read.handle()).isEqualTo(new MessageDocuments.Handle("db.messages", original.messageId(), 42));
        assertThat(read.message().key()).isEmpty();
        assertThat(read.message().value()).isNull();
    }

    @Test
    void aMalformedDocumentNamesTheFieldAndTheId() {
        OutboxMessage original = withEverythingEmpty("orders", null, null);
        BsonDocument document = MessageDocuments.toDocument(original, 1);
        document.put(MessageDocuments.BUCKET, new BsonString("seven"));
        assertThatThrownBy(() -> MessageDocuments.fromDocument(document, "db.outbox_messages"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(original.messageId().toString())
                .hasMessageContaining("db.outbox_messages");
        document.put(MessageDocuments.BUCKET, new BsonInt32(1));
        document.remove(MessageDocuments.KEY);
        assertThatThrownBy(() -> MessageDocuments.fromDocument(document, "db.outbox_messages"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("'key' is missing");
    }
}
