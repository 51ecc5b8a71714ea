package io.outbox.spi;

import io.outbox.OutboxMessage;
import java.util.List;

/**
 * Optional store capability C5: reads a bucket's next batch while the batch before it is still
 * being published and not yet deleted, so that the relay's store time and publish time overlap
 * (the pipelined drain, option {@code prefetch} of the relay). A store without it is drained one
 * batch at a time: read, publish, delete, read.
 *
 * <p>The batch returned is exactly the one {@link OutboxStore#nextBatch} would return if the
 * messages of {@code inFlight} had been deleted: the oldest pending messages of the bucket, in
 * enqueue order (S1), leaving out those of {@code inFlight}. It is defined by exclusion, not as
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
 * {@code maxCount + inFlight.size()} messages, filtered.
 *
 * <p>Thread-safe (S12). The kit's {@code optional_C5_*} rules check it.
 */
public interface ReadAhead {

    /**
     * The bucket's oldest pending messages other than those of {@code inFlight} (C5).
     *
     * @param bucket the bucket, {@code >= 0}
     * @param inFlight messages this store returned for the bucket (from {@link OutboxStore#nextBatch}
     *     or this method) that are being published; not null, may be empty (then this is
     *     {@code nextBatch}); messages of it deleted meanwhile are ignored
     * @param maxCount the most messages to return, {@code >= 1}
     * @return at most {@code maxCount} messages, none of {@code inFlight}, oldest first, immutable;
     *     empty when nothing else is pending
     * @throws IllegalArgumentException if {@code bucket < 0} or {@code maxCount < 1}
     * @throws NullPointerException if {@code inFlight} is null
     * @throws CorruptMessageException as {@link OutboxStore#nextBatch}: for the first row that
     *     cannot be decoded, carrying the rows ahead of it (none of {@code inFlight})
     * @throws RuntimeException on a database error; the relay discards the read and reads again
     *     from the bucket's head after the publish
     */
    List<OutboxMessage> nextBatchExcluding(int bucket, List<OutboxMessage> inFlight, int maxCount);
}
