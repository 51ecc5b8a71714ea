package io.outbox.relay;

import io.outbox.OutboxBucket;
import io.outbox.OutboxHeader;
import io.outbox.OutboxMessage;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.serialization.StringSerializer;

/** Builds outbox messages for tests. */
final class TestMessages {

    private static final StringSerializer STRING = new StringSerializer();

    private TestMessages() {
    }

    static OutboxMessage message(String topic, String key, String value, int bucketCount, Clock clock) {
        return OutboxMessage.create(topic, key, value, STRING, STRING, List.<OutboxHeader>of(), bucketCount, null,
                clock);
    }

    static List<OutboxMessage> messages(String topic, String key, int count, int bucketCount, Clock clock) {
        List<OutboxMessage> list = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            list.add(message(topic, key, key + "-" + i, bucketCount, clock));
        }
        return list;
    }

    /** A key that hashes to the bucket, found by trying "k0", "k1", ... */
    static String keyFor(int bucket, int bucketCount) {
        for (int i = 0; ; i++) {
            String key = "k" + i;
            if (OutboxBucket.forKey(key.getBytes(StandardCharsets.UTF_8), bucketCount) == bucket) {
                return key;
            }
        }
    }
}
