package io.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.Random;
import java.util.UUID;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Rule E2: bucket placement. */
class OutboxBucketTest {

    @ParameterizedTest(name = "{0} partitions")
    @ValueSource(ints = {1, 2, 3, 7, 8, 12, 16, 31, 64, 100, 1000})
    void e2_keyedBucketEqualsKafkasDefaultKeyedPartitionForRandomKeys(int partitions) {
        Random random = new Random(partitions);
        for (int i = 0; i < 5_000; i++) {
            byte[] key = new byte[random.nextInt(64)];
            random.nextBytes(key);
            assertThat(OutboxBucket.forKey(key, partitions))
                    .as("key #%d of length %d", i, key.length)
                    .isEqualTo(BuiltInPartitioner.partitionForKey(key, partitions));
        }
    }

    @Test
    void e2_createdMessageUsesKafkasPlacementForStringKeys() {
        Random random = new Random(42);
        for (int i = 0; i < 2_000; i++) {
            String key = "customer-" + random.nextInt(1_000_000);
            OutboxMessage message = OutboxMessage.create("orders", key, "v", new StringSerializer(),
                    new StringSerializer(), 12);
            byte[] keyBytes = new StringSerializer().serialize("orders", key);
            assertThat(message.bucket()).isEqualTo(BuiltInPartitioner.partitionForKey(keyBytes, 12));
        }
    }

    @Test
    void e2_emptyKeyIsAKeyAndHashesLikeKafka() {
        byte[] empty = new byte[0];
        for (int n = 1; n <= 64; n++) {
            assertThat(OutboxBucket.forKey(empty, n)).isEqualTo(Utils.toPositive(Utils.murmur2(empty)) % n);
        }
        OutboxMessage a = OutboxMessage.create("t", new byte[0], null, new ByteArraySerializer(),
                new ByteArraySerializer(), 16);
        OutboxMessage b = OutboxMessage.create("t", new byte[0], null, new ByteArraySerializer(),
                new ByteArraySerializer(), 16);
        assertThat(a.bucket()).isEqualTo(b.bucket()).isEqualTo(OutboxBucket.forKey(empty, 16));
        assertThat(a.keyLength()).isZero();
    }

    @Test
    void e2_nullKeyIsSpreadByMessageIdBigEndianBytes() {
        int buckets = 8;
        int[] counts = new int[buckets];
        int n = 16_000;
        for (int i = 0; i < n; i++) {
            OutboxMessage m = OutboxMessage.create("t", null, "v", new StringSerializer(), new StringSerializer(),
                    buckets);
            UUID id = m.messageId();
            byte[] idBytes = ByteBuffer.allocate(16).putLong(id.getMostSignificantBits())
                    .putLong(id.getLeastSignificantBits()).array();
            assertThat(m.bucket()).isEqualTo(BuiltInPartitioner.partitionForKey(idBytes, buckets));
            counts[m.bucket()]++;
        }
        // Each bucket expects 2,000; 1,700..2,300 is more than 6 standard deviations wide.
        assertThat(java.util.Arrays.stream(counts).boxed().toList()).allSatisfy(c -> assertThat(c).isBetween(1_700, 2_300));
    }

    @Test
    void e2_explicitPartitionWinsOverKey() {
        for (int p = 0; p < 50; p++) {
            OutboxMessage m = OutboxMessage.create("t", "same-key", "v", new StringSerializer(),
                    new StringSerializer(), java.util.List.of(), 8, p);
            assertThat(m.bucket()).isEqualTo(p % 8);
            assertThat(m.partition()).isEqualTo(p);
        }
    }

    @Test
    void e3_bucketCountAndPartitionAreValidated() {
        assertThatThrownBy(() -> OutboxBucket.forKey(new byte[1], 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bucketCount").hasMessageContaining("0");
        assertThatThrownBy(() -> OutboxBucket.forKey(new byte[1], OutboxBucket.MAX_BUCKET_COUNT + 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("bucketCount must be at most 65536 but was 65537");
        assertThat(OutboxBucket.forKey(new byte[1], OutboxBucket.MAX_BUCKET_COUNT)).isBetween(0, 65_535);
        assertThatThrownBy(() -> OutboxBucket.forPartition(-3, 8))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("partition").hasMessageContaining("-3");
    }
}
