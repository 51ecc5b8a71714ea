package io.outbox.spi;

import io.outbox.OutboxMessage;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * One pending message as a store read it: the message and the store's opaque handle, what the
 * store needs to delete exactly that row (rule S2): a row id, a document id and sequence, a sort
 * key. {@link OutboxStore#nextBatch} returns these and {@link OutboxStore#markPublished} takes a
 * prefix of them back; nobody but the store that made a handle looks inside it.
 *
 * <p>Equal when message and handle are equal. Immutable when the handle is, as every store's
 * is; thread-safe then. {@link #toString()} shows the message's {@link OutboxMessage#toString()},
 * never its key, value or header values.
 *
 * @param message the message; not null
 * @param handle the store's native identifier of the row; not null, immutable, with an
 *     {@code equals} that tells rows apart
 */
public record Pending(OutboxMessage message, Object handle) {

    /**
     * Creates an entry.
     *
     * @param message the message; not null
     * @param handle the store's native identifier of the row; not null
     * @throws NullPointerException if {@code message} or {@code handle} is null
     */
    public Pending {
        Objects.requireNonNull(message, "message must not be null");
        Objects.requireNonNull(handle, "handle must not be null");
    }

    /**
     * The messages of a batch, in its order, for what needs only the messages (a publisher).
     *
     * @param batch the entries; not null, no null elements
     * @return their messages in the same order; immutable
     * @throws NullPointerException if {@code batch} or an element is null
     */
    public static List<OutboxMessage> messages(List<Pending> batch) {
        List<OutboxMessage> messages = new ArrayList<>(batch.size());
        for (Pending p : batch) {
            messages.add(p.message());
        }
        return List.copyOf(messages);
    }
}
