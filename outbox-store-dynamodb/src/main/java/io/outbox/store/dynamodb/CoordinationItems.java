package io.outbox.store.dynamodb;

import java.util.HashMap;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The layout of the coordination table: one key schema ({@code pk} S, {@code sk} S) for three
 * kinds of item, grouped by partition key so that one Query reads a whole kind.
 *
 * <pre>
 *   pk "fleet",   sk "lease#0000000007"  bucket N, owner S (absent when free), expiresAt N (epoch ms)
 *   pk "fleet",   sk "relay#&lt;relayId&gt;"   relay S, lastSeen N (epoch ms)
 *   pk "counter", sk "0000000007"        bucket N, seq N (last sequence reserved in the bucket)
 * </pre>
 * Bucket numbers in sort keys are zero-padded to ten digits so that string order is numeric
 * order: {@code sk >= "0000000008"} finds the counters of buckets 8 and up (rule S8).
 */
final class CoordinationItems {

    static final String PK = "pk";
    static final String SK = "sk";

    static final String FLEET = "fleet";
    static final String COUNTER = "counter";
    static final String LEASE_PREFIX = "lease#";
    static final String RELAY_PREFIX = "relay#";

    static final String BUCKET = "bucket";
    static final String OWNER = "owner";
    static final String EXPIRES_AT = "expiresAt";
    static final String RELAY = "relay";
    static final String LAST_SEEN = "lastSeen";
    static final String SEQ = "seq";

    private CoordinationItems() {
    }

    static String padded(int bucket) {
        return String.format("%010d", bucket);
    }

    static Map<String, AttributeValue> key(String pk, String sk) {
        Map<String, AttributeValue> key = new HashMap<>(4);
        key.put(PK, AttributeValue.fromS(pk));
        key.put(SK, AttributeValue.fromS(sk));
        return key;
    }

    static Map<String, AttributeValue> leaseKey(int bucket) {
        return key(FLEET, LEASE_PREFIX + padded(bucket));
    }

    static Map<String, AttributeValue> relayKey(String relayId) {
        return key(FLEET, RELAY_PREFIX + relayId);
    }

    static Map<String, AttributeValue> counterKey(int bucket) {
        return key(COUNTER, padded(bucket));
    }
}
