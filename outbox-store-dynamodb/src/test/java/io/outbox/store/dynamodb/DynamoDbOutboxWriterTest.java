package io.outbox.store.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.OutboxMessage;
import io.outbox.spi.support.StoredMessages;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.CancellationReason;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsRequest;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsResponse;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemResponse;

/**
 * The writer's handling of cancelled transactions, on a fake client: the emulator never cancels
 * for TransactionConflict or throttling, so these paths are tested here.
 */
class DynamoDbOutboxWriterTest {

    private static TransactionCanceledException cancelled(String... codes) {
        return TransactionCanceledException.builder().message("cancelled")
                .cancellationReasons(Arrays.stream(codes).map(c -> CancellationReason.builder().code(c).build()).toList())
                .build();
    }

    /** A client whose sequence counter always answers and whose transactions fail as scripted. */
    private static final class ScriptedClient extends DelegatingDynamoDbClient {
        final List<RuntimeException> failures;
        final AtomicInteger transactions = new AtomicInteger();
        private long seq;

        ScriptedClient(RuntimeException... failures) {
            super(null);
            this.failures = new ArrayList<>(List.of(failures));
        }

        @Override
        public synchronized UpdateItemResponse updateItem(UpdateItemRequest request) {
            seq += Long.parseLong(request.expressionAttributeValues().get(":n").n());
            return UpdateItemResponse.builder().attributes(Map.of("seq", AttributeValue.fromN(Long.toString(seq))))
                    .build();
        }

        @Override
        public TransactWriteItemsResponse transactWriteItems(TransactWriteItemsRequest request) {
            transactions.incrementAndGet();
            if (!failures.isEmpty()) {
                throw failures.remove(0);
            }
            return TransactWriteItemsResponse.builder().build();
        }
    }

    private static List<OutboxMessage> oneMessage() {
        return List.of(StoredMessages.rebuild(UUID.randomUUID(), 0, "t", null, new byte[] {1}, List.of(), null,
                Instant.EPOCH));
    }

    @Test
    void aCancellationForTransientReasonsIsSentAgain() {
        ScriptedClient client = new ScriptedClient(cancelled("None", "TransactionConflict"),
                cancelled("ThrottlingError", "None"));
        DynamoDbOutboxStore.builder(client).build().writer().enqueue(oneMessage());
        assertThat(client.transactions).hasValue(3);
    }

    @Test
    void aFailedConditionIsThrownAtOnce() {
        TransactionCanceledException condition = cancelled("ConditionalCheckFailed", "TransactionConflict");
        ScriptedClient client = new ScriptedClient(condition);
        assertThatThrownBy(() -> DynamoDbOutboxStore.builder(client).build().writer()
                .enqueue(oneMessage())).isSameAs(condition);
        assertThat(client.transactions).hasValue(1);
    }

    @Test
    void transientCancellationsStopAfterTheLastAttempt() {
        RuntimeException[] conflicts = new RuntimeException[DynamoDbOutboxWriter.MAX_TRANSACTION_ATTEMPTS];
        Arrays.setAll(conflicts, i -> cancelled("TransactionConflict"));
        ScriptedClient client = new ScriptedClient(conflicts);
        assertThatThrownBy(() -> DynamoDbOutboxStore.builder(client).build().writer()
                .enqueue(oneMessage())).isSameAs(conflicts[conflicts.length - 1]);
        assertThat(client.transactions).hasValue(DynamoDbOutboxWriter.MAX_TRANSACTION_ATTEMPTS);
    }

    @Test
    void onlyTransientReasonsCount() {
        assertThat(DynamoDbOutboxWriter.isTransient(cancelled("None", "ProvisionedThroughputExceeded"))).isTrue();
        assertThat(DynamoDbOutboxWriter.isTransient(cancelled("RequestLimitExceeded"))).isTrue();
        assertThat(DynamoDbOutboxWriter.isTransient(cancelled("None", "None"))).isFalse();
        assertThat(DynamoDbOutboxWriter.isTransient(cancelled("ValidationError", "TransactionConflict"))).isFalse();
        assertThat(DynamoDbOutboxWriter.isTransient(TransactionCanceledException.builder().message("x").build()))
                .isFalse();
    }

    @Test
    void anEmptyEnqueueMakesNoCall() {
        ScriptedClient client = new ScriptedClient();
        DynamoDbOutboxStore.builder(client).build().writer().enqueue(List.of());
        assertThat(client.transactions).hasValue(0);
    }
}
