package io.outbox.tck;

import io.outbox.OutboxMessage;
import io.outbox.spi.OutboxStore;
import io.outbox.spi.Pending;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/**
 * The kit's bounded drain and its check that published entries are gone: helpers whose findings
 * are violations of S2, whichever test runs them. Stateless.
 */
final class KitChecks {

    /** How far {@link #published} looks into a bucket for entries that should be gone. */
    private static final int LOOK_AHEAD = 1_000;

    private KitChecks() {
    }

    /**
     * {@code markPublished}, then a check that none of the entries is pending any more.
     *
     * @param store the store
     * @param bucket the bucket
     * @param entries a prefix of a batch the store returned
     * @throws RuleViolation of S2 when an entry is still returned by {@code nextBatch}
     */
    static void published(OutboxStore store, int bucket, List<Pending> entries) {
        store.markPublished(bucket, entries);
        if (entries.isEmpty()) {
            return;
        }
        Set<UUID> gone = new HashSet<>(ids(entries));
        List<UUID> back = ids(store.nextBatch(bucket, LOOK_AHEAD)).stream().filter(gone::contains).toList();
        if (!back.isEmpty()) {
            throw new RuleViolation(RuleViolation.S2, "markPublished(" + bucket + ", " + entries.size()
                    + " entries) returned, but nextBatch(" + bucket + ", " + LOOK_AHEAD + ") still returns " + back.size()
                    + " of them: " + back);
        }
    }

    /**
     * Reads and publishes a bucket batch by batch until it is empty, at most {@code atMost}
     * messages: a store that never empties fails instead of filling the heap.
     *
     * @param store the store
     * @param bucket the bucket
     * @param batchSize the {@code maxCount} of each {@code nextBatch}
     * @param atMost how many messages the bucket can hold at most
     * @return the messages read, in order
     * @throws RuleViolation of S2 for an entry read again after it was published
     * @throws AssertionError for a batch over {@code batchSize}, or when the bucket held more than
     *     {@code atMost} messages
     */
    static List<OutboxMessage> drain(OutboxStore store, int bucket, int batchSize, int atMost) {
        List<OutboxMessage> all = new ArrayList<>();
        Set<UUID> published = new HashSet<>();
        for (List<Pending> batch = store.nextBatch(bucket, batchSize); !batch.isEmpty();
             batch = store.nextBatch(bucket, batchSize)) {
            if (batch.size() > batchSize) {
                throw new AssertionError("nextBatch(" + bucket + ", " + batchSize + ") returned " + batch.size()
                        + " messages (S1)");
            }
            for (UUID id : ids(batch)) {
                if (published.contains(id)) {
                    throw new RuleViolation(RuleViolation.S2, "nextBatch(" + bucket + ", " + batchSize
                            + ") returned message " + id + " again after markPublished(" + bucket + ", ...) of it");
                }
            }
            if (all.size() + batch.size() > atMost) {
                throw new AssertionError("bucket " + bucket + " did not empty: more than " + atMost
                        + " messages read from it, at most " + atMost + " were enqueued");
            }
            all.addAll(Pending.messages(batch));
            published.addAll(ids(batch));
            store.markPublished(bucket, batch);
        }
        return all;
    }

    private static List<UUID> ids(List<Pending> entries) {
        return entries.stream().map(p -> p.message().messageId()).toList();
    }
}
