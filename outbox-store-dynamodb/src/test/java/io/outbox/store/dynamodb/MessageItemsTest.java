package io.outbox.store.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.OutboxHeader;
import io.outbox.OutboxMessage;
import io.outbox.spi.Pending;
import io.outbox.spi.support.StoredMessages;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/** Item layout, size accounting and the payload limit arithmetic (S10). No server needed. */
class MessageItemsTest {

    @Test
    void sizesFollowDynamoDbsRules() {
        assertThat(MessageItems.itemSize(Map.of("ab", AttributeValue.fromS("é")))).isEqualTo(2 + 2);
        assertThat(MessageItems.itemSize(Map.of("b", AttributeValue.fromB(SdkBytes.fromByteArray(new byte[10])))))
                .isEqualTo(1 + 10);
        // Numbers: one byte per two significant digits, plus one; leading and trailing zeros do not count.
        assertThat(MessageItems.itemSize(Map.of("n", AttributeValue.fromN("1700000000000")))).isEqualTo(1 + 2);
        assertThat(MessageItems.itemSize(Map.of("n", AttributeValue.fromN("123")))).isEqualTo(1 + 3);
        assertThat(MessageItems.itemSize(Map.of("n", AttributeValue.fromN(Long.toString(Long.MAX_VALUE)))))
                .isEqualTo(1 + 11);
    }

    /** Everything but the payload takes at most 368 bytes; the store reserves 1,024. */
    @Test
    void theWorstCaseOverheadFitsTheReservedBytes() {
        OutboxMessage worst = StoredMessages.rebuild(UUID.randomUUID(), Integer.MAX_VALUE, "t".repeat(249), new byte[0],
                new byte[0], List.of(), Integer.MAX_VALUE, Instant.ofEpochMilli(Long.MAX_VALUE - 1));
        long overhead = MessageItems.itemSize(MessageItems.toItem(worst, Long.MAX_VALUE))
                - StoredMessages.payloadSize(worst);
        assertThat(overhead).isEqualTo(368).isLessThanOrEqualTo(MessageItems.RESERVED_ITEM_BYTES);
        assertThat(DynamoDbOutboxStore.MAX_PAYLOAD_BYTES).isEqualTo(408_576);
    }

    @Test
    void nullAndEmptyAreDifferentAttributes() {
        OutboxMessage nulls = StoredMessages.rebuild(UUID.randomUUID(), 1, "t", null, null, List.of(), null,
                Instant.EPOCH);
        OutboxMessage empties = StoredMessages.rebuild(UUID.randomUUID(), 1, "t", new byte[0], new byte[0],
                List.of(OutboxHeader.of("h", null)), 3, Instant.EPOCH);
        assertThat(MessageItems.toItem(nulls, 1)).doesNotContainKeys("key", "value", "partition");
        assertThat(MessageItems.toItem(empties, 1)).containsKeys("key", "value", "partition");
        assertThat(MessageItems.fromItem("t", MessageItems.toItem(nulls, 7)).message()).isEqualTo(nulls);
        Pending read = MessageItems.fromItem("t", MessageItems.toItem(empties, 8));
        assertThat(read.message()).isEqualTo(empties);
        assertThat(read.handle()).isEqualTo(new MessageItems.Handle("t", 8));
    }

    @Test
    void aCorruptItemIsReportedWithItsKey() {
        Map<String, AttributeValue> item = new java.util.HashMap<>(MessageItems.toItem(
                StoredMessages.rebuild(UUID.randomUUID(), 1, "t", null, null, List.of(), null, Instant.EPOCH), 5));
        item.put("headers", AttributeValue.fromB(SdkBytes.fromByteArray(new byte[] {9})));
        assertThatThrownBy(() -> MessageItems.fromItem("msgs", item)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("msgs").hasMessageContaining("bucket 1, seq 5");
    }
}
