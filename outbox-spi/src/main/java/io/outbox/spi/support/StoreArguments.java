package io.outbox.spi.support;

import io.outbox.OutboxMessage;
import io.outbox.spi.LeaseRequest;
import io.outbox.spi.OutboxStore;
import io.outbox.spi.Pending;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * The argument checks of the store SPI, written once: every store (JDBC, MongoDB, DynamoDB, the
 * kit's in-memory store, a user's) calls these at the top of its {@link OutboxStore} methods, so
 * that all of them refuse the same bad arguments with the same messages. The compatibility kit
 * pins each check with a rule of its own ({@code required_S1_...}, {@code required_S2_...},
 * {@code required_S3_...}).
 *
 * <p>Every check throws {@link NullPointerException} for a null where none is allowed and
 * {@link IllegalArgumentException} naming the bad value otherwise. Stateless and thread-safe.
 */
public final class StoreArguments {

    private StoreArguments() {
    }

    /**
     * Checks a bucket argument of {@link OutboxStore#nextBatch} or {@link OutboxStore#markPublished}.
     *
     * @param bucket the bucket
     * @return {@code bucket}
     * @throws IllegalArgumentException if {@code bucket < 0}
     */
    public static int requireBucket(int bucket) {
        if (bucket < 0) {
            throw new IllegalArgumentException("bucket must be >= 0 but was " + bucket);
        }
        return bucket;
    }

    /**
     * Checks a bucket against a known bucket count.
     *
     * @param bucket the bucket
     * @param bucketCount the bucket count, {@code >= 1}
     * @return {@code bucket}
     * @throws IllegalArgumentException if {@code bucket} is outside {@code [0, bucketCount)}
     */
    public static int requireBucket(int bucket, int bucketCount) {
        if (bucket < 0 || bucket >= bucketCount) {
            throw new IllegalArgumentException("bucket must be in [0, " + bucketCount + ") but was " + bucket);
        }
        return bucket;
    }

    /**
     * Checks the {@code maxCount} of {@link OutboxStore#nextBatch} (S1).
     *
     * @param maxCount the most messages to return
     * @return {@code maxCount}
     * @throws IllegalArgumentException if {@code maxCount < 1}
     */
    public static int requireMaxCount(int maxCount) {
        if (maxCount < 1) {
            throw new IllegalArgumentException("maxCount must be >= 1 but was " + maxCount);
        }
        return maxCount;
    }

    /**
     * Checks the {@code maxBytes} of {@link OutboxStore#nextBatch} (S1), the batch's byte budget
     * as {@link BatchBytes} counts it.
     *
     * @param maxBytes the most message bytes to return
     * @return {@code maxBytes}
     * @throws IllegalArgumentException if {@code maxBytes < 1}
     */
    public static long requireMaxBytes(long maxBytes) {
        if (maxBytes < 1) {
            throw new IllegalArgumentException("maxBytes must be >= 1 but was " + maxBytes);
        }
        return maxBytes;
    }

    /**
     * Checks the argument of {@link OutboxStore#bucketsWithPending} (S3) and normalizes it.
     *
     * @param buckets the buckets to probe; not null, no null elements, each {@code >= 0}; may be
     *     empty and may repeat a bucket
     * @return the distinct buckets, ascending; immutable
     * @throws NullPointerException if the list or an element is null
     * @throws IllegalArgumentException if a bucket is negative (names it)
     */
    public static List<Integer> requireBuckets(List<Integer> buckets) {
        Objects.requireNonNull(buckets, "buckets must not be null");
        int[] sorted = new int[buckets.size()];
        int i = 0;
        for (Integer bucket : buckets) {
            Objects.requireNonNull(bucket, "buckets must not contain null");
            if (bucket < 0) {
                throw new IllegalArgumentException("buckets must be >= 0 but contain " + bucket);
            }
            sorted[i++] = bucket;
        }
        Arrays.sort(sorted);
        List<Integer> distinct = new ArrayList<>(sorted.length);
        for (int k = 0; k < sorted.length; k++) {
            if (k == 0 || sorted[k] != sorted[k - 1]) {
                distinct.add(sorted[k]);
            }
        }
        return List.copyOf(distinct);
    }

    /**
     * Checks the request of {@link OutboxStore#acquireBucketLeases} or a capability's lease call.
     * {@link LeaseRequest} validates its own fields; this only refuses null.
     *
     * @param request the request
     * @return {@code request}
     * @throws NullPointerException if it is null
     */
    public static LeaseRequest requireRequest(LeaseRequest request) {
        return Objects.requireNonNull(request, "request must not be null");
    }

    /**
     * Checks the arguments of {@link OutboxStore#markPublished} (S2): the bucket, and that every
     * entry is one this store read ({@code handleType}, the class of the handles its
     * {@link OutboxStore#nextBatch} puts in its {@link Pending} entries, accepted by
     * {@code readHere}) from that bucket. An entry with a handle of another store, or one of
     * another bucket, is refused before anything is deleted.
     *
     * @param <H> the store's handle type
     * @param bucket the bucket argument, {@code >= 0}
     * @param published the entries; not null, no null elements, may be empty
     * @param handleType the class of this store's handles; not null
     * @param readHere whether a handle of that type was made by this store (same table or
     *     collection, same instance: whatever the store can tell); not null
     * @param source what this store reads from, for the error message ("table public.outbox_messages")
     * @return the entries' handles cast to {@code handleType}, in the given order; immutable
     * @throws NullPointerException if an argument or element is null
     * @throws IllegalArgumentException if {@code bucket < 0}, an entry was not read by this store,
     *     or belongs to another bucket; the message names the message id and both buckets
     */
    public static <H> List<H> requirePublished(int bucket, List<Pending> published, Class<H> handleType,
                                               Predicate<? super H> readHere, String source) {
        requireBucket(bucket);
        Objects.requireNonNull(published, "published must not be null");
        Objects.requireNonNull(handleType, "handleType must not be null");
        Objects.requireNonNull(readHere, "readHere must not be null");
        List<H> handles = new ArrayList<>(published.size());
        for (Pending entry : published) {
            OutboxMessage message = Objects.requireNonNull(entry, "published must not contain null").message();
            if (!handleType.isInstance(entry.handle()) || !readHere.test(handleType.cast(entry.handle()))) {
                throw new IllegalArgumentException("message " + message.messageId() + " was not read by this store"
                        + " from " + source + ": markPublished takes only entries its nextBatch returned (rule S2)");
            }
            if (message.bucket() != bucket) {
                throw new IllegalArgumentException("message " + message.messageId() + " belongs to bucket "
                        + message.bucket() + ", not to bucket " + bucket + " (rule S2)");
            }
            handles.add(handleType.cast(entry.handle()));
        }
        return List.copyOf(handles);
    }
}
