package io.outbox.relay.internal;

import io.outbox.spi.Pending;
import java.util.List;

/**
 * A bucket's next batch, read ahead during the publish of the batch before it (capability C5),
 * for the bucket's next task to publish without a read of its own. Immutable once made: a task
 * reads it, the loop thread keeps it, the next task publishes it.
 *
 * @param batch the messages, oldest first; not empty
 * @param breaks {@link LeaseTable#breaks()} as read before the lease check that preceded the read:
 *     the batch is used only while the count is unchanged (R1)
 */
record ReadBatch(List<Pending> batch, long breaks) {

    ReadBatch {
        batch = List.copyOf(batch);
    }
}
