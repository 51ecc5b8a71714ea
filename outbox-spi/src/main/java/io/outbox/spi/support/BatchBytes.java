package io.outbox.spi.support;

import io.outbox.OutboxMessage;
import io.outbox.spi.OutboxStore;
import io.outbox.spi.Pending;
import java.util.ArrayList;
import java.util.List;

/**
 * The byte budget of one {@link OutboxStore#nextBatch} call (rule S1), counted once for every
 * store: a message's bytes are its {@link StoredMessages#payloadSize} (serialized key, serialized
 * value and headers as {@link OutboxHeaderCodec} encodes them, the units of a store's largest
 * payload, S10). A batch holds the longest prefix of the bucket's oldest messages whose bytes add
 * up to at most {@code maxBytes}, except that its first message is always taken, alone when it
 * alone is over the budget, so a bucket never stalls behind a message larger than the budget.
 *
 * <p>A store reading row by row asks {@link #admit} before it keeps a row and stops at the first
 * refusal; a store that computes sizes in its query uses the same arithmetic. One instance per
 * read; not thread-safe.
 */
public final class BatchBytes {

    private final long maxBytes;
    private long taken;
    private int count;

    /**
     * A budget for one batch.
     *
     * @param maxBytes the most message bytes, {@code >= 1}; {@link Long#MAX_VALUE} for no bound
     * @throws IllegalArgumentException if {@code maxBytes < 1}
     */
    public BatchBytes(long maxBytes) {
        this.maxBytes = StoreArguments.requireMaxBytes(maxBytes);
    }

    /**
     * The bytes a message counts against a batch's budget: {@link StoredMessages#payloadSize}.
     *
     * @param message the message; not null
     * @return its key, value and encoded header bytes, {@code >= 1}
     * @throws NullPointerException if {@code message} is null
     */
    public static long of(OutboxMessage message) {
        return StoredMessages.payloadSize(message);
    }

    /**
     * Whether the next message of the batch fits: always for the first, else when the bytes taken
     * so far plus {@code size} stay within the budget. A message admitted counts; a refused one
     * does not, and ends the batch (it is a prefix).
     *
     * @param size the message's bytes ({@link #of}), {@code >= 0}
     * @return true when the message belongs to the batch
     */
    public boolean admit(long size) {
        if (count > 0 && size > maxBytes - taken) {
            return false;
        }
        taken = size > Long.MAX_VALUE - taken ? Long.MAX_VALUE : taken + size;
        count++;
        return true;
    }

    /**
     * {@link #admit} for a message.
     *
     * @param message the message; not null
     * @return true when the message belongs to the batch
     */
    public boolean admit(OutboxMessage message) {
        return admit(of(message));
    }

    /**
     * The bytes admitted so far.
     *
     * @return the sum of the admitted sizes, saturated at {@link Long#MAX_VALUE}
     */
    public long taken() {
        return taken;
    }

    /**
     * The longest prefix of {@code read} within the budget, the first entry always included.
     *
     * @param read entries in batch order; not null, no null elements
     * @param maxBytes the budget, {@code >= 1}
     * @return the prefix; immutable
     * @throws IllegalArgumentException if {@code maxBytes < 1}
     */
    public static List<Pending> prefix(List<Pending> read, long maxBytes) {
        BatchBytes budget = new BatchBytes(maxBytes);
        List<Pending> kept = new ArrayList<>(read.size());
        for (Pending p : read) {
            if (!budget.admit(p.message())) {
                break;
            }
            kept.add(p);
        }
        return List.copyOf(kept);
    }
}
