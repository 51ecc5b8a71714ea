package io.outbox.tck;

import io.outbox.spi.support.InboxArguments;

import io.outbox.InboxRetention;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * An in-memory inbox for the kit's own tests: correct without a fault (a lock per marker key held
 * for the whole transaction, as a database's row lock is), or with one deliberate fault, so that
 * the kit can be shown to catch it.
 */
final class InMemoryInbox {

    /** Deliberate mistakes an inbox implementation could make: the inbox kit test that catches each, and its rules. */
    enum Fault implements Bite {
        REPEAT_WRITES_THE_EFFECT("required_I1_firstDeliveryOnceThenRepeats", "I1",
                "a repeat answers repeat but lets the business effect be written again"),
        CHECK_THEN_INSERT("required_I1_concurrentDeliveriesOfOneIdHaveExactlyOneFirst", "I1",
                "reads whether the marker exists, then writes it, with no lock or unique key between"),
        MARKER_OUTSIDE_TRANSACTION("required_I1_rollbackLeavesNoMarker", "I1",
                "writes the marker at once, outside the caller's transaction, so a rollback keeps it"),
        UNCOMMITTED_MARKER_MEANS_REPEAT("required_I1_concurrentDeliveryAfterARollbackIsFirst", "I1",
                "answers repeat at once when another transaction holds the marker, without waiting for its outcome"),
        KEY_WITHOUT_CONSUMER("required_I1_sameIdCountsOncePerConsumerName", "I1",
                "keys the marker by message id alone"),
        CLEANUP_INCLUSIVE_CUTOFF("required_I2_retentionDeletesOnlyOldMarkers", "I2",
                "deletes markers exactly one window old too"),
        UNBOUNDED_BATCH("required_I2_cleanupRunsInBoundedBatches", "I2", "ignores the batch size"),
        COUNTS_WHAT_IT_READ("required_I2_concurrentCleanupsDeleteEachMarkerOnce", "I2",
                "a cleanup batch counts the expired markers it read, not those it deleted"),
        MARKERS_EXPIRE_ON_THEIR_OWN("required_I2_markersStayUntilTheCleanupRemovesThem", "I2",
                "firstDelivery treats a marker older than the window as absent");

        private final Bite.Declared declared;

        Fault(String caughtBy, String rules, String fault) {
            this.declared = new Bite.Declared(caughtBy, rules, fault);
        }

        @Override
        public Bite.Declared declared() {
            return declared;
        }
    }

    /** The shared "database" of one test. */
    static final class Storage {
        final Map<String, Long> markers = new ConcurrentHashMap<>();
        final Map<String, Long> effects = new ConcurrentHashMap<>();
        final Map<String, ReentrantLock> locks = new ConcurrentHashMap<>();
        final Set<String> inFlight = ConcurrentHashMap.newKeySet();
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
                if (fault == Fault.COUNTS_WHAT_IT_READ) {
                    List<String> expired = storage.markers.entrySet().stream().filter(e -> e.getValue() < cutoff)
                            .map(Map.Entry::getKey).limit(batchSize).toList();
                    LockSupport.parkNanos(5_000_000); // the round trip between the read and the delete
                    expired.forEach(storage.markers::remove);
                    return expired.size();
                }
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
                if (fault == Fault.UNCOMMITTED_MARKER_MEANS_REPEAT && storage.inFlight.contains(key)) {
                    return false;
                }
                ReentrantLock lock = storage.locks.computeIfAbsent(key, k -> new ReentrantLock());
                lock.lock();
                storage.inFlight.add(key);
                try {
                    Long marker = storage.markers.get(key);
                    long seenAt = clock.millis();
                    boolean first = marker == null
                            || (fault == Fault.MARKERS_EXPIRE_ON_THEIR_OWN && marker < seenAt - retention.toMillis());
                    if (first && fault == Fault.MARKER_OUTSIDE_TRANSACTION) {
                        storage.markers.put(key, seenAt);
                    }
                    Thread.sleep(holdOpen.toMillis());
                    if ((first || fault == Fault.REPEAT_WRITES_THE_EFFECT) && commit) {
                        storage.markers.put(key, first ? seenAt : marker);
                        storage.effects.merge(consumer + "/" + messageId, 1L, Long::sum);
                    }
                    return first;
                } finally {
                    storage.inFlight.remove(key);
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
