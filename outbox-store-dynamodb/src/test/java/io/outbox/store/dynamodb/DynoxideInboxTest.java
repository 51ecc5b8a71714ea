package io.outbox.store.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.outbox.spi.OutboxMisconfigurationException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionCheck;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;

/** DynamoDbInbox on dynoxide: how a caller with its own request learns "repeat", and the guards. */
class DynoxideInboxTest {

    @Test
    void I1_aCallerSendingItsOwnRequestTellsARepeatFromTheCancellationReasons() {
        try (DynamoDbClient client = DynamoDbBackend.dynoxide().newClient()) {
            String table = "inbox_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
            DynamoDbInbox inbox = DynamoDbInbox.builder(client).table(table).build();
            inbox.createSchema(Duration.ofMinutes(1));
            try {
                UUID id = UUID.randomUUID();
                client.transactWriteItems(r -> r.transactItems(inbox.marker("billing", id)));
                TransactionCanceledException repeat = catchThrowableOfType(TransactionCanceledException.class,
                        () -> client.transactWriteItems(r -> r.transactItems(inbox.marker("billing", id))));
                assertThat(DynamoDbInbox.isRepeat(repeat, 0)).isTrue();
                assertThatThrownBy(() -> DynamoDbInbox.isRepeat(repeat, 1))
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("item 1");

                // A business condition that fails is no repeat: firstDelivery rethrows it, nothing written.
                TransactWriteItem failing = TransactWriteItem.builder().conditionCheck(ConditionCheck.builder()
                        .tableName(table)
                        .key(Map.of(DynamoDbInbox.MESSAGE_ID, AttributeValue.fromS("absent"),
                                DynamoDbInbox.CONSUMER, AttributeValue.fromS("absent")))
                        .conditionExpression("attribute_exists(seenAt)").build()).build();
                UUID other = UUID.randomUUID();
                TransactionCanceledException business = catchThrowableOfType(TransactionCanceledException.class,
                        () -> inbox.firstDelivery("billing", other, List.of(failing)));
                assertThat(business).as("the business condition's cancellation is rethrown").isNotNull();
                assertThat(DynamoDbInbox.isRepeat(business, 1)).isFalse();
                assertThat(inbox.hasMarker("billing", other)).isFalse();
                assertThat(inbox.firstDelivery("billing", other, List.of())).isTrue();
                assertThat(inbox.firstDelivery("billing", other, List.of(failing)))
                        .as("a repeat, whatever the business items").isFalse();
            } finally {
                client.deleteTable(r -> r.tableName(table));
            }
        }
    }

    @Test
    void verifyTableNamesAnAbsentTableAndBadSettingsAreRefused() {
        try (DynamoDbClient client = DynamoDbBackend.dynoxide().newClient()) {
            DynamoDbInbox absent = DynamoDbInbox.builder(client).table("inbox_absent_" + UUID.randomUUID()).build();
            assertThatThrownBy(absent::verifySchema).isInstanceOf(OutboxMisconfigurationException.class)
                    .hasMessageContaining(absent.table());
            assertThatThrownBy(() -> DynamoDbInbox.builder(client).table("a b").build())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'a b'");
            assertThatThrownBy(() -> absent.marker("billing\u0000", UUID.randomUUID()))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> absent.firstDelivery("billing", UUID.randomUUID(),
                    java.util.Collections.nCopies(100, TransactWriteItem.builder().build())))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("100 business items");
        }
    }
}
