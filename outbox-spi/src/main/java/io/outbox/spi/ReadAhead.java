package io.outbox.spi;

import java.util.List;
import java.util.Optional;

/**
 * Optional store capability C5: reads a bucket's next batch while the batch before it is still
 * being published and not yet deleted, so that the relay's store time and publish time overlap
 * (the pipelined drain, option {@code prefetch} of the relay). A store without it is drained one
 * batch at a time: read, publish, delete, read.
 *
 * <p>The batch returned is exactly the one {@link OutboxStore#nextBatch} would return if the
 * messages of {@code inFlight} had been deleted: the oldest pending messages of the bucket, in
 * enqueue order (S1) within the same count and byte budget, leaving out those of {@code inFlight}
 * (which count against neither). It is defined by exclusion, not as
 * "after the last position read": a row whose writer reserved its place (an auto-increment id, a
 * sequence, E5) before {@code inFlight} was read but committed only afterwards sorts before the
 * rows behind {@code inFlight}, and comes back first, as it would from {@code nextBatch} once
 * {@code inFlight} is deleted. So a relay that reads ahead publishes in the same order as one that
 * does not.
 *
 * <p>{@link OutboxStore#markPublished} accepts a prefix of any batch this relay read and has not
 * deleted, not only of the latest one: while batch {@code n + 1} is read ahead, batch {@code n} is
 * still deleted afterwards. Messages of {@code inFlight} that were deleted meanwhile are simply
 * not pending any more. A store that cannot exclude rows natively can implement this method with
 * {@link io.outbox.spi.support.ReadAheads#byFiltering}: one {@code nextBatch} of
 * {@code maxCount + inFlight.size()} messages and {@code maxBytes} plus the bytes in flight,
 * filtered.
 *
 * <p>Thread-safe (S12). A store offers it through {@link OutboxStore#readAhead()}: a store that
 * implements it itself implements {@link Self}, which returns the store there. The kit's
 * {@code optional_C5_*} rules check it.
 */
public interface ReadAhead {

    /**
     * The bucket's oldest pending messages other than those of {@code inFlight} (C5).
     *
     * @param bucket the bucket, {@code >= 0}
     * @param inFlight entries this store returned for the bucket (from {@link OutboxStore#nextBatch}
     *     or this method) that are being published; not null, may be empty (then this is
     *     {@code nextBatch}); entries of it deleted meanwhile, or read by another store, are ignored
     * @param maxCount the most messages to return, {@code >= 1}
     * @param maxBytes the most message bytes to return, {@code >= 1}, counted as by
     *     {@link OutboxStore#nextBatch(int, int, long)}: the first message is returned even when it
     *     alone is over it
     * @return at most {@code maxCount} entries within the budget, none of {@code inFlight}, oldest
     *     first, immutable; empty when nothing else is pending
     * @throws IllegalArgumentException if {@code bucket < 0}, {@code maxCount < 1} or
     *     {@code maxBytes < 1}
     * @throws NullPointerException if {@code inFlight} is null
     * @throws CorruptMessageException as {@link OutboxStore#nextBatch}: for the first row that
     *     cannot be decoded, carrying the rows ahead of it (none of {@code inFlight})
     * @throws RuntimeException on a database error; the relay discards the read and reads again
     *     from the bucket's head after the publish
     */
    List<Pending> nextBatchExcluding(int bucket, List<Pending> inFlight, int maxCount, long maxBytes);

    /**
     * {@link #nextBatchExcluding(int, List, int, long)} without a byte bound, for tools and tests.
     *
     * @param bucket the bucket, {@code >= 0}
     * @param inFlight the entries to leave out; not null
     * @param maxCount the most messages to return, {@code >= 1}
     * @return as {@link #nextBatchExcluding(int, List, int, long)}
     * @throws IllegalArgumentException if {@code bucket < 0} or {@code maxCount < 1}
     * @throws NullPointerException if {@code inFlight} is null
     */
    default List<Pending> nextBatchExcluding(int bucket, List<Pending> inFlight, int maxCount) {
        return nextBatchExcluding(bucket, inFlight, maxCount, Long.MAX_VALUE);
    }

    /**
     * A store that is its own {@link ReadAhead}: implementing this interface makes
     * {@link OutboxStore#readAhead()} return the store (C5), with no accessor to write.
     */
    interface Self extends OutboxStore, ReadAhead {

        /**
         * This store, which is its own {@link ReadAhead} (C5).
         *
         * @return this store
         */
        @Override
        default Optional<ReadAhead> readAhead() {
            return Optional.of(this);
        }
    }
}
