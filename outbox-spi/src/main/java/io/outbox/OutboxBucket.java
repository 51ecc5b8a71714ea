package io.outbox;

import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.UUID;
import org.apache.kafka.common.utils.Utils;

/**
 * Bucket placement (rule E2). A bucket is the unit of ordering and of leasing: messages of one
 * bucket are published in enqueue order by the single relay holding the bucket's lease.
 *
 * <ul>
 *   <li>Explicit partition {@code p}: bucket {@code p % bucketCount}, so records pinned to one
 *       partition share one submission order.</li>
 *   <li>Non-null key (an empty key is a key): {@code toPositive(murmur2(keyBytes)) % bucketCount},
 *       exactly Kafka's default keyed placement. With {@code bucketCount} equal to the topic's
 *       partition count, a bucket is a partition.</li>
 *   <li>Null key: the same hash over the message id's 16 big-endian bytes, which spreads keyless
 *       records evenly.</li>
 * </ul>
 * This placement is part of the stored data and never changes between releases. All methods are
 * pure and thread-safe.
 */
public final class OutboxBucket {

    /** The largest bucket count: more buckets than this only cost lease rows and probe work. */
    public static final int MAX_BUCKET_COUNT = 65_536;

    private OutboxBucket() {
    }

    /**
     * The bucket of a message.
     *
     * @param keyBytes the serialized key; null for a keyless record
     * @param partition the explicit partition, or null
     * @param messageId the message id, used when both key and partition are null; not null
     * @param bucketCount the number of buckets, {@code >= 1}
     * @return the bucket, in {@code [0, bucketCount)}
     * @throws IllegalArgumentException if {@code bucketCount < 1} or {@code partition < 0}
     * @throws NullPointerException if {@code messageId} is null
     */
    public static int of(byte[] keyBytes, Integer partition, UUID messageId, int bucketCount) {
        Objects.requireNonNull(messageId, "messageId must not be null");
        if (partition != null) {
            return forPartition(partition, bucketCount);
        }
        if (keyBytes != null) {
            return forKey(keyBytes, bucketCount);
        }
        return forMessageId(messageId, bucketCount);
    }

    /**
     * The bucket of a record sent to an explicit partition.
     *
     * @param partition the partition, {@code >= 0}
     * @param bucketCount the number of buckets, {@code >= 1}
     * @return {@code partition % bucketCount}
     * @throws IllegalArgumentException if {@code partition < 0} or {@code bucketCount < 1}
     */
    public static int forPartition(int partition, int bucketCount) {
        requireBucketCount(bucketCount);
        if (partition < 0) {
            throw new IllegalArgumentException("partition must be >= 0 but was " + partition);
        }
        return partition % bucketCount;
    }

    /**
     * The bucket of a keyed record: Kafka's default keyed partition for {@code bucketCount}
     * partitions.
     *
     * @param keyBytes the serialized key; not null, may be empty
     * @param bucketCount the number of buckets, {@code >= 1}
     * @return {@code toPositive(murmur2(keyBytes)) % bucketCount}
     * @throws IllegalArgumentException if {@code bucketCount < 1}
     * @throws NullPointerException if {@code keyBytes} is null
     */
    public static int forKey(byte[] keyBytes, int bucketCount) {
        requireBucketCount(bucketCount);
        Objects.requireNonNull(keyBytes, "keyBytes must not be null");
        return Utils.toPositive(Utils.murmur2(keyBytes)) % bucketCount;
    }

    /**
     * The bucket of a keyless record: the keyed hash over the message id's 16 big-endian bytes
     * (most significant long first).
     *
     * @param messageId the message id; not null
     * @param bucketCount the number of buckets, {@code >= 1}
     * @return the bucket, in {@code [0, bucketCount)}
     * @throws IllegalArgumentException if {@code bucketCount < 1}
     * @throws NullPointerException if {@code messageId} is null
     */
    public static int forMessageId(UUID messageId, int bucketCount) {
        Objects.requireNonNull(messageId, "messageId must not be null");
        byte[] bytes = ByteBuffer.allocate(16)
                .putLong(messageId.getMostSignificantBits())
                .putLong(messageId.getLeastSignificantBits())
                .array();
        return forKey(bytes, bucketCount);
    }

    /**
     * Checks a bucket count (E3).
     *
     * @param bucketCount the number of buckets
     * @return {@code bucketCount}
     * @throws IllegalArgumentException if {@code bucketCount} is below 1 or above
     *     {@value #MAX_BUCKET_COUNT}, naming the value
     */
    public static int requireBucketCount(int bucketCount) {
        if (bucketCount < 1) {
            throw new IllegalArgumentException("bucketCount must be >= 1 but was " + bucketCount);
        }
        if (bucketCount > MAX_BUCKET_COUNT) {
            throw new IllegalArgumentException("bucketCount must be at most " + MAX_BUCKET_COUNT + " but was "
                    + bucketCount);
        }
        return bucketCount;
    }
}
