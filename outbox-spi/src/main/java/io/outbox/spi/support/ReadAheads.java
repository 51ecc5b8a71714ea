package io.outbox.spi.support;

import io.outbox.OutboxMessage;
import io.outbox.spi.CorruptMessageException;
import io.outbox.spi.OutboxStore;
import io.outbox.spi.Pending;
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
     * {@code maxCount + inFlight.size()} messages and {@code maxBytes} plus the bytes of
     * {@code inFlight} from the bucket's head and leaves out those of {@code inFlight} by message id,
     * keeping the budget (S1, {@link BatchBytes}) for the rest. Exact whatever happened meanwhile:
     * messages of {@code inFlight} deleted since are not read, late-committed rows sort where the
     * store puts them. It reads up to twice the rows a batch needs; a store that can filter in its
     * query ({@code id NOT IN (...)}) should.
     *
     * @param store the store to read from; not null
     * @param bucket the bucket, {@code >= 0}
     * @param inFlight the entries to leave out, by message id; not null, no null elements
     * @param maxCount the most messages to return, {@code >= 1}
     * @param maxBytes the most message bytes to return, {@code >= 1}
     * @return at most {@code maxCount} entries within the budget, none of {@code inFlight}, oldest
     *     first, immutable
     * @throws IllegalArgumentException if {@code bucket < 0}, {@code maxCount < 1} or {@code maxBytes < 1}
     * @throws NullPointerException if {@code store} or {@code inFlight} is null
     * @throws CorruptMessageException when {@code nextBatch} finds an undecodable row before
     *     {@code maxCount} others: the same row, with the entries ahead of it that are not in
     *     {@code inFlight}
     */
    public static List<Pending> byFiltering(OutboxStore store, int bucket, List<Pending> inFlight, int maxCount,
                                            long maxBytes) {
        Objects.requireNonNull(store, "store must not be null");
        StoreArguments.requireBucket(bucket);
        StoreArguments.requireMaxCount(maxCount);
        StoreArguments.requireMaxBytes(maxBytes);
        Set<UUID> excluded = new HashSet<>();
        long inFlightBytes = 0;
        for (Pending p : Objects.requireNonNull(inFlight, "inFlight must not be null")) {
            OutboxMessage m = Objects.requireNonNull(p, "inFlight must not contain null").message();
            if (excluded.add(m.messageId())) {
                inFlightBytes = saturated(inFlightBytes, BatchBytes.of(m));
            }
        }
        int read = (int) Math.min(Integer.MAX_VALUE, (long) maxCount + excluded.size());
        try {
            List<Pending> kept = keep(store.nextBatch(bucket, read, saturated(maxBytes, inFlightBytes)), excluded,
                    maxCount, maxBytes);
            if (kept.isEmpty() && !excluded.isEmpty()) {
                // The first message after those in flight may be over the budget alone: read it alone.
                kept = keep(store.nextBatch(bucket, excluded.size() + 1, Long.MAX_VALUE), excluded, 1, maxBytes);
            }
            return kept;
        } catch (CorruptMessageException e) {
            List<Pending> before = keep(e.messagesBefore(), excluded, maxCount, Long.MAX_VALUE);
            if (before.size() == maxCount || !BatchBytes.prefix(before, maxBytes).equals(before)) {
                return BatchBytes.prefix(before, maxBytes); // the undecodable row is behind this batch
            }
            throw new CorruptMessageException(e.bucket(), e.messageId(), before, e.getMessage(), e.getCause());
        }
    }

    /**
     * {@link #byFiltering(OutboxStore, int, List, int, long)} without a byte bound.
     *
     * @param store the store to read from; not null
     * @param bucket the bucket, {@code >= 0}
     * @param inFlight the entries to leave out, by message id; not null, no null elements
     * @param maxCount the most messages to return, {@code >= 1}
     * @return at most {@code maxCount} entries, none of {@code inFlight}, oldest first, immutable
     * @throws IllegalArgumentException if {@code bucket < 0} or {@code maxCount < 1}
     * @throws NullPointerException if {@code store} or {@code inFlight} is null
     * @throws CorruptMessageException as the five-argument form
     */
    public static List<Pending> byFiltering(OutboxStore store, int bucket, List<Pending> inFlight, int maxCount) {
        return byFiltering(store, bucket, inFlight, maxCount, Long.MAX_VALUE);
    }

    private static long saturated(long a, long b) {
        return b > Long.MAX_VALUE - a ? Long.MAX_VALUE : a + b;
    }

    private static List<Pending> keep(List<Pending> read, Set<UUID> excluded, int maxCount, long maxBytes) {
        List<Pending> kept = new ArrayList<>(Math.min(maxCount, read.size()));
        BatchBytes budget = new BatchBytes(maxBytes);
        for (Pending p : read) {
            if (kept.size() == maxCount) {
                break;
            }
            if (!excluded.contains(p.message().messageId())) {
                if (!budget.admit(p.message())) {
                    break;
                }
                kept.add(p);
            }
        }
        return List.copyOf(kept);
    }
}
