package io.outbox.spi.support;

import io.outbox.OutboxMessage;
import io.outbox.spi.CorruptMessageException;
import io.outbox.spi.OutboxStore;
import io.outbox.spi.ReadAhead;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;

/**
 * A ready implementation of capability C5 ({@link ReadAhead}) for stores that cannot leave rows
 * out natively. Stateless and thread-safe.
 */
public final class ReadAheads {

    private ReadAheads() {
    }

    /**
     * {@link ReadAhead#nextBatchExcluding} over {@link OutboxStore#nextBatch}: reads
     * {@code maxCount + inFlight.size()} messages from the bucket's head and leaves out those of
     * {@code inFlight} by message id. Exact whatever happened meanwhile: messages of
     * {@code inFlight} deleted since are not read, late-committed rows sort where the store puts
     * them. It reads up to twice the rows a batch needs; a store that can filter in its query
     * ({@code id NOT IN (...)}) should.
     *
     * @param store the store to read from; not null
     * @param bucket the bucket, {@code >= 0}
     * @param inFlight the messages to leave out; not null, no null elements
     * @param maxCount the most messages to return, {@code >= 1}
     * @return at most {@code maxCount} messages, none of {@code inFlight}, oldest first, immutable
     * @throws IllegalArgumentException if {@code bucket < 0} or {@code maxCount < 1}
     * @throws NullPointerException if {@code store} or {@code inFlight} is null
     * @throws CorruptMessageException when {@code nextBatch} finds an undecodable row before
     *     {@code maxCount} others: the same row, with the messages ahead of it that are not in
     *     {@code inFlight}
     */
    public static List<OutboxMessage> byFiltering(OutboxStore store, int bucket, List<OutboxMessage> inFlight,
                                                  int maxCount) {
        Objects.requireNonNull(store, "store must not be null");
        StoreArguments.requireBucket(bucket);
        StoreArguments.requireMaxCount(maxCount);
        Set<UUID> excluded = new HashSet<>();
        for (OutboxMessage m : Objects.requireNonNull(inFlight, "inFlight must not be null")) {
            excluded.add(Objects.requireNonNull(m, "inFlight must not contain null").messageId());
        }
        int read = (int) Math.min(Integer.MAX_VALUE, (long) maxCount + excluded.size());
        try {
            return keep(store.nextBatch(bucket, read), excluded, maxCount);
        } catch (CorruptMessageException e) {
            List<OutboxMessage> before = keep(e.messagesBefore(), excluded, maxCount);
            if (before.size() == maxCount) {
                return before; // the undecodable row is behind this batch
            }
            throw new CorruptMessageException(e.bucket(), e.messageId(), before, e.getMessage(), e.getCause());
        }
    }

    private static List<OutboxMessage> keep(List<OutboxMessage> read, Set<UUID> excluded, int maxCount) {
        List<OutboxMessage> kept = new ArrayList<>(Math.min(maxCount, read.size()));
        for (OutboxMessage m : read) {
            if (kept.size() == maxCount) {
                break;
            }
            if (!excluded.contains(m.messageId())) {
                kept.add(m);
            }
        }
        return List.copyOf(kept);
    }
}
