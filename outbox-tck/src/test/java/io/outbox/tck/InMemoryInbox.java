package io.outbox.tck;

import io.outbox.spi.support.InboxArguments;

import io.outbox.InboxRetention;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * An in-memory inbox for the kit's own tests: correct by default (a lock per marker key held for
 * the whole transaction, as a database's row lock is), or with one deliberate fault, so that the
 * kit can be shown to catch it.
 */
final class InMemoryInbox {

    /** Deliberate mistakes an inbox implementation could make. */
    enum Fault {
        NONE,
        /** Reads whether the marker exists, then writes it, with no lock or unique key between. */
        CHECK_THEN_INSERT,
        /** Writes the marker at once, outside the caller's transaction, so a rollback keeps it. */
        MARKER_OUTSIDE_TRANSACTION,
        /** Keys the marker by message id alone. */
        KEY_WITHOUT_CONSUMER,
        /** Deletes markers exactly one window old too. */
        CLEANUP_INCLUSIVE_CUTOFF,
        /** Ignores the batch size. */
        UNBOUNDED_BATCH
    }

    /** The shared "database" of one test. */
    static final class Storage {
        final Map<String, Long> markers = new ConcurrentHashMap<>();
        final Map<String, Long> effects = new ConcurrentHashMap<>();
        final Map<String, ReentrantLock> locks = new ConcurrentHashMap<>();
    }

    private InMemoryInbox() {
    }

    static InboxTck.InboxFixture fixture(Fault fault, Storage storage, Clock clock, Duration retention, int batchSize) {
        InboxRetention cleanup = new InboxRetention() {
            @Override
            public Duration retention() {
                return retention;
            }

            @Override
            public int cleanupBatchSize() {
                return batchSize;
            }

            @Override
            public int deleteExpiredBatch() {
                return delete(clock.millis() - retention.toMillis());
            }

            @Override
            public long deleteExpired() {
                return InboxArguments.deleteInBatches(clock.millis() - retention.toMillis(), batchSize, this::delete);
            }

            private int delete(long cutoff) {
                int deleted = 0;
                for (Map.Entry<String, Long> marker : storage.markers.entrySet()) {
                    long seenAt = marker.getValue();
                    boolean expired = fault == Fault.CLEANUP_INCLUSIVE_CUTOFF ? seenAt <= cutoff : seenAt < cutoff;
                    // Conditional remove: of two concurrent cleanups only one counts a marker (I2).
                    if (expired && (fault == Fault.UNBOUNDED_BATCH || deleted < batchSize)
                            && storage.markers.remove(marker.getKey(), seenAt)) {
                        deleted++;
                    }
                }
                return deleted;
            }
        };
        return new InboxTck.InboxFixture() {
            @Override
            public boolean deliver(String consumer, UUID messageId, InboxTck.Ending ending, Duration holdOpen)
                    throws InterruptedException {
                String key = fault == Fault.KEY_WITHOUT_CONSUMER ? messageId.toString() : consumer + "/" + messageId;
                boolean commit = ending == InboxTck.Ending.COMMIT;
                if (fault == Fault.CHECK_THEN_INSERT) {
                    boolean first = !storage.markers.containsKey(key);
                    Thread.sleep(holdOpen.toMillis());
                    if (first && commit) {
                        storage.markers.put(key, clock.millis());
                        storage.effects.merge(consumer + "/" + messageId, 1L, Long::sum);
                    }
                    return first;
                }
                ReentrantLock lock = storage.locks.computeIfAbsent(key, k -> new ReentrantLock());
                lock.lock();
                try {
                    boolean first = !storage.markers.containsKey(key);
                    long seenAt = clock.millis();
                    if (first && fault == Fault.MARKER_OUTSIDE_TRANSACTION) {
                        storage.markers.put(key, seenAt);
                    }
                    Thread.sleep(holdOpen.toMillis());
                    if (first && commit) {
                        storage.markers.put(key, seenAt);
                        storage.effects.merge(consumer + "/" + messageId, 1L, Long::sum);
                    }
                    return first;
                } finally {
                    lock.unlock();
                }
            }

            @Override
            public boolean hasMarker(String consumer, UUID messageId) {
                return storage.markers.containsKey(fault == Fault.KEY_WITHOUT_CONSUMER ? messageId.toString()
                        : consumer + "/" + messageId);
            }

            @Override
            public long effects(String consumer, UUID messageId) {
                return storage.effects.getOrDefault(consumer + "/" + messageId, 0L);
            }

            @Override
            public InboxRetention retention() {
                return cleanup;
            }
        };
    }
}
