package io.outbox.store.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.spi.LeaseRequest;
import io.outbox.tck.TckClock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.GetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.PutItemResponse;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemResponse;

/**
 * C1 on a backend that refuses a renewal without returning the old item: the store reads the
 * lease to tell "already longer" (still held) from "lost". Fake client; no server needed.
 */
class RefusedRenewalTest {

    private static final TckClock CLOCK = new TckClock(Instant.parse("2031-01-01T00:00:00Z"));
    private static final Duration LEASE = Duration.ofSeconds(30);

    private static List<Integer> renewAgainst(String storedOwner) {
        Map<String, AttributeValue> stored = new HashMap<>(CoordinationItems.leaseKey(0));
        stored.put(CoordinationItems.BUCKET, AttributeValue.fromN("0"));
        stored.put(CoordinationItems.OWNER, AttributeValue.fromS(storedOwner));
        stored.put(CoordinationItems.EXPIRES_AT, AttributeValue.fromN(Long.toString(CLOCK.millis() + 2 * LEASE.toMillis())));
        DelegatingDynamoDbClient client = new DelegatingDynamoDbClient(null) {
            @Override
            public PutItemResponse putItem(PutItemRequest request) {
                return PutItemResponse.builder().build();
            }

            @Override
            public UpdateItemResponse updateItem(UpdateItemRequest request) {
                throw ConditionalCheckFailedException.builder().message("The conditional request failed").build();
            }

            @Override
            public GetItemResponse getItem(GetItemRequest request) {
                return GetItemResponse.builder().item(stored).build();
            }
        };
        try (DynamoDbOutboxStore store = DynamoDbOutboxStore.builder(client).clock(CLOCK).build()) {
            List<Integer> held = store.renewBucketLeases(new LeaseRequest("relay-a", 4, LEASE, List.of(0)));
            assertThat(store.refusedConditionalWrites()).isEqualTo(1);
            return held;
        }
    }

    @Test
    void aLeaseAlreadyLongerIsStillHeld() {
        assertThat(renewAgainst("relay-a")).containsExactly(0);
    }

    @Test
    void aLeaseTakenOverIsLost() {
        assertThat(renewAgainst("relay-b")).isEmpty();
    }
}
