package io.outbox.spi.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.OutboxHeader;
import io.outbox.OutboxMessage;
import io.outbox.OutboxPayloadTooLargeException;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/** The stored form of a message: rebuilt without copies (S10), payload arithmetic (S10). */
class StoredMessagesTest {

    private static final ByteArraySerializer BYTES = new ByteArraySerializer();

    @Test
    void s10_aRebuiltMessageOwnsTheDriversArraysAndHandsThemOutWithoutCopies() {
        byte[] key = {1};
        byte[] value = {2, 3};
        UUID id = UUID.randomUUID();
        OutboxMessage m = StoredMessages.rebuild(id, 3, "t", key, value, List.of(OutboxHeader.of("h", null)), 5,
                Instant.ofEpochMilli(42));
        assertThat(StoredMessages.key(m)).isSameAs(key);
        assertThat(StoredMessages.value(m)).isSameAs(value);
        assertThat(m.key()).as("the application's accessor still copies").isNotSameAs(key).isEqualTo(key);
        assertThat(m.value()).isNotSameAs(value).isEqualTo(value);
        assertThat(m).isEqualTo(StoredMessages.rebuild(id, 3, "t", new byte[] {1}, new byte[] {2, 3},
                List.of(OutboxHeader.of("h", null)), 5, Instant.ofEpochMilli(42)));
        OutboxMessage keyless = StoredMessages.rebuild(id, 3, "t", null, null, List.of(), null, Instant.EPOCH);
        assertThat(StoredMessages.key(keyless)).isNull();
        assertThat(StoredMessages.value(keyless)).isNull();
    }

    @Test
    void s10_aCreatedMessageHandsItsBytesToTheStoreWithoutAnotherCopy() {
        OutboxMessage m = OutboxMessage.create("t", new byte[] {1}, new byte[] {2}, BYTES, BYTES, 4);
        assertThat(StoredMessages.value(m)).isSameAs(StoredMessages.value(m)).containsExactly(2);
        assertThat(StoredMessages.key(m)).isSameAs(StoredMessages.key(m)).containsExactly(1);
    }

    @Test
    void s10_rebuildValidatesAndTruncatesToMillis() {
        UUID id = UUID.randomUUID();
        OutboxMessage m = StoredMessages.rebuild(id, 3, "t", null, null, List.of(), 5,
                Instant.parse("2026-01-01T00:00:00.123456789Z"));
        assertThat(m.createdAt()).isEqualTo(Instant.parse("2026-01-01T00:00:00.123Z"));
        assertThatThrownBy(() -> StoredMessages.rebuild(id, -1, "t", null, null, List.of(), null, Instant.EPOCH))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("bucket must be >= 0 but was -1");
        assertThatThrownBy(() -> StoredMessages.rebuild(id, 0, "t", null, null, List.of(), -2, Instant.EPOCH))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("-2");
        assertThatThrownBy(() -> StoredMessages.rebuild(id, 0, "a b", null, null, List.of(), null, Instant.EPOCH))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'a b'");
        assertThatNullPointerException().isThrownBy(() -> StoredMessages.rebuild(null, 0, "t", null, null,
                List.of(), null, Instant.EPOCH)).withMessageContaining("messageId");
        assertThatNullPointerException().isThrownBy(() -> StoredMessages.rebuild(id, 0, "t", null, null,
                List.of(), null, null)).withMessageContaining("createdAt");
        assertThatNullPointerException().isThrownBy(() -> StoredMessages.rebuild(id, 0, "t", null, null,
                null, null, Instant.EPOCH)).withMessageContaining("headers");
    }

    @Test
    void s10_payloadSizeCountsKeyValueAndEncodedHeaders() {
        OutboxMessage m = OutboxMessage.create("t", new byte[3], new byte[100], BYTES, BYTES,
                List.of(OutboxHeader.of("ab", new byte[4])), 4);
        assertThat(StoredMessages.payloadSize(m)).isEqualTo(3 + 100 + StoredMessages.encodedHeaders(m).length);
        assertThat(StoredMessages.encodedHeaders(m)).hasSize(1 + 4 + 4 + 2 + 4 + 4)
                .isEqualTo(OutboxHeaderCodec.encode(m.headers()));
        assertThat(StoredMessages.requirePayloadAtMost(m, StoredMessages.payloadSize(m))).isSameAs(m);
        assertThatThrownBy(() -> StoredMessages.requirePayloadAtMost(m, StoredMessages.payloadSize(m) - 1))
                .isInstanceOf(OutboxPayloadTooLargeException.class)
                .hasMessageContaining(m.messageId().toString())
                .hasMessageContaining(String.valueOf(StoredMessages.payloadSize(m)))
                .hasMessageContaining("nothing was written");
    }

    @Test
    void s10_theTooLargeErrorNamesKeyValueAndHeadersAsStoredAndTheLargestKeyAndValueWithoutHeaders() {
        OutboxMessage m = OutboxMessage.create("t", new byte[3], new byte[100], BYTES, BYTES,
                List.of(OutboxHeader.of("ab", new byte[4])), 4);
        OutboxMessage bare = OutboxMessage.create("t", null, new byte[96], BYTES, BYTES, 4);
        assertThat(StoredMessages.payloadSize(bare)).as("no headers are stored as %s bytes",
                OutboxHeaderCodec.EMPTY_ENCODED_SIZE).isEqualTo(101);
        assertThatThrownBy(() -> StoredMessages.requirePayloadAtMost(m, 100))
                .isInstanceOfSatisfying(OutboxPayloadTooLargeException.class, e -> {
                    assertThat(e.messageId()).isEqualTo(m.messageId());
                    assertThat(e.payloadBytes()).isEqualTo(122);
                    assertThat(e.maxPayloadBytes()).isEqualTo(100);
                })
                .hasMessageContaining("payload of 122 bytes (key 3 + value 100 + headers 19 as stored, 5 for none), "
                        + "more than this store's limit of 100 bytes; without headers, key and value may hold 95 "
                        + "bytes together");
        assertThatThrownBy(() -> StoredMessages.requirePayloadAtMost(bare, 100))
                .hasMessageContaining("key 0 + value 96 + headers 5");
    }
}
