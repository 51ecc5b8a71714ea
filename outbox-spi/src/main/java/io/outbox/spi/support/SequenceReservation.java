package io.outbox.spi.support;

import io.outbox.OutboxMessage;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Per-bucket sequence numbers for stores without an auto-increment (rule E5): one atomic
 * increment per distinct bucket of a batch reserves that bucket's numbers ({@code $inc} with
 * upsert on MongoDB, {@code UpdateItem ADD} on DynamoDB), and the numbers are handed to the
 * messages in list order, so messages of one bucket keep their order within the batch. Gaps
 * (a reservation whose transaction never commits) are harmless; only monotonicity matters.
 *
 * <p>Stateless and thread-safe; the counter is called on the calling thread.
 */
public final class SequenceReservation {

    private SequenceReservation() {
    }

    /**
     * Reserves a bucket's numbers with one atomic increment.
     *
     * @param <E> the checked exception the counter throws ({@link RuntimeException} when none)
     */
    @FunctionalInterface
    public interface Counter<E extends Exception> {
        /**
         * Adds {@code count} to the bucket's counter atomically, creating it at 0 if absent.
         *
         * @param bucket the bucket
         * @param count how many numbers to reserve, {@code >= 1}
         * @return the counter's value after the increment: the last number reserved
         * @throws E on a database error
         */
        long reserve(int bucket, int count) throws E;
    }

    /**
     * Reserves numbers for a batch: one {@link Counter#reserve} per distinct bucket, in the order
     * the buckets first appear.
     *
     * @param <E> the counter's exception
     * @param messages the batch; not null, no null elements; may be empty (then nothing is reserved)
     * @param counter the store's atomic increment; not null
     * @return each message's sequence number, by position in {@code messages}; within a bucket
     *     strictly increasing in list order
     * @throws NullPointerException if an argument or element is null
     * @throws IllegalStateException if the counter returns a value below {@code count} (a corrupt
     *     counter)
     * @throws E whatever the counter throws; numbers reserved before stay as gaps
     */
    public static <E extends Exception> long[] reserve(List<OutboxMessage> messages, Counter<E> counter)
            throws E {
        Objects.requireNonNull(messages, "messages must not be null");
        Objects.requireNonNull(counter, "counter must not be null");
        Map<Integer, Integer> countByBucket = new LinkedHashMap<>();
        for (OutboxMessage message : messages) {
            countByBucket.merge(Objects.requireNonNull(message, "messages must not contain null").bucket(), 1,
                    Integer::sum);
        }
        Map<Integer, Long> next = new LinkedHashMap<>();
        for (Map.Entry<Integer, Integer> bucket : countByBucket.entrySet()) {
            int count = bucket.getValue();
            long last = counter.reserve(bucket.getKey(), count);
            if (last < count) {
                throw new IllegalStateException("the sequence counter of bucket " + bucket.getKey() + " returned "
                        + last + " after adding " + count + ": it is corrupt");
            }
            next.put(bucket.getKey(), last - count + 1);
        }
        long[] seqs = new long[messages.size()];
        for (int i = 0; i < seqs.length; i++) {
            seqs[i] = next.merge(messages.get(i).bucket(), 1L, Long::sum) - 1;
        }
        return seqs;
    }
}
