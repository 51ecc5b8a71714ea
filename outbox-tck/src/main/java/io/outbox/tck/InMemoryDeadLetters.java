package io.outbox.tck;

import io.outbox.OutboxMessage;
import io.outbox.spi.DeadLetter;
import io.outbox.spi.DeadLetterConflictException;
import io.outbox.spi.DeadLetterFailure;
import io.outbox.spi.DeadLetters;
import io.outbox.spi.HeadFailure;
import io.outbox.spi.Pending;
import io.outbox.spi.support.StoreArguments;
import io.outbox.spi.support.StoredMessages;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.function.BiFunction;
import java.util.function.LongSupplier;

/**
 * The dead letters of {@link InMemoryOutboxStore} (capability C4): a map by message id, ordered
 * by the id's text form. Moves and replays take one lock, so they are atomic towards each other;
 * towards {@code markPublished} the removal of the pending entry is one atomic
 * {@link ConcurrentMap#remove(Object, Object)}, so a message is either published or moved,
 * never both. The failing heads' records ({@link DeadLetters#recordHeadFailure}) are a map by
 * bucket, reported only while their message is the bucket's head.
 */
final class InMemoryDeadLetters implements DeadLetters {

    private final Clock clock;
    private final ConcurrentMap<Integer, ConcurrentNavigableMap<Long, Pending>> messages;
    private final LongSupplier nextSequence;
    private final BiFunction<OutboxMessage, Long, Pending> stored;
    private final TreeMap<String, DeadLetter> deadLetters = new TreeMap<>();
    private final Map<Integer, HeadFailure> headFailures = new HashMap<>();

    InMemoryDeadLetters(Clock clock, ConcurrentMap<Integer, ConcurrentNavigableMap<Long, Pending>> messages,
                        LongSupplier nextSequence, BiFunction<OutboxMessage, Long, Pending> stored) {
        this.clock = clock;
        this.messages = messages;
        this.nextSequence = nextSequence;
        this.stored = stored;
    }

    @Override
    public synchronized boolean moveToDeadLetters(int bucket, UUID messageId, DeadLetterFailure failure) {
        StoreArguments.requireBucket(bucket);
        Objects.requireNonNull(messageId, "messageId must not be null");
        Objects.requireNonNull(failure, "failure must not be null");
        ConcurrentNavigableMap<Long, Pending> rows = messages.get(bucket);
        if (rows == null) {
            return false;
        }
        for (Map.Entry<Long, Pending> row : rows.entrySet()) {
            OutboxMessage m = row.getValue().message();
            if (!m.messageId().equals(messageId)) {
                continue;
            }
            DeadLetter existing = deadLetters.get(messageId.toString());
            byte[] headers = StoredMessages.encodedHeaders(m);
            if (existing != null && !existing.sameRecord(m.topic(), m.key(), m.value(), headers, m.partition())) {
                throw new DeadLetterConflictException(bucket, messageId, "the in-memory dead letters");
            }
            if (!rows.remove(row.getKey(), row.getValue())) {
                return false; // published meanwhile
            }
            // A repeat of a dead letter (same record) keeps the first one's creation time, with the new failure.
            deadLetters.put(messageId.toString(), new DeadLetter(messageId, bucket, m.topic(), m.key(), m.value(),
                    headers, m.partition(), existing == null ? m.createdAt() : existing.createdAt(), failure,
                    Instant.ofEpochMilli(clock.millis())));
            HeadFailure head = headFailures.get(bucket);
            if (head != null && head.messageId().equals(messageId)) {
                headFailures.remove(bucket);
            }
            return true;
        }
        return false;
    }

    @Override
    public synchronized boolean recordHeadFailure(int bucket, UUID messageId, DeadLetterFailure failure) {
        StoreArguments.requireBucket(bucket);
        Objects.requireNonNull(messageId, "messageId must not be null");
        Objects.requireNonNull(failure, "failure must not be null");
        ConcurrentNavigableMap<Long, Pending> rows = messages.get(bucket);
        if (rows == null || rows.values().stream().noneMatch(p -> p.message().messageId().equals(messageId))) {
            return false;
        }
        headFailures.put(bucket, new HeadFailure(bucket, messageId, failure));
        return true;
    }

    @Override
    public synchronized List<HeadFailure> headFailures(List<Integer> buckets) {
        List<HeadFailure> found = new ArrayList<>();
        for (int bucket : StoreArguments.requireBuckets(buckets)) {
            HeadFailure head = headFailures.get(bucket);
            ConcurrentNavigableMap<Long, Pending> rows = messages.get(bucket);
            Map.Entry<Long, Pending> first = rows == null ? null : rows.firstEntry();
            if (head != null && first != null && first.getValue().message().messageId().equals(head.messageId())) {
                found.add(head);
            }
        }
        return List.copyOf(found);
    }

    @Override
    public synchronized List<DeadLetter> deadLetters(UUID after, int limit) {
        DeadLetters.requireLimit(limit);
        Map<String, DeadLetter> tail = after == null ? deadLetters : deadLetters.tailMap(after.toString(), false);
        return tail.values().stream().limit(limit).toList();
    }

    @Override
    public synchronized Optional<DeadLetter> deadLetter(UUID messageId) {
        return Optional.ofNullable(deadLetters.get(Objects.requireNonNull(messageId, "messageId must not be null")
                .toString()));
    }

    @Override
    public synchronized boolean replayDeadLetter(UUID messageId) {
        DeadLetter d = deadLetters.get(Objects.requireNonNull(messageId, "messageId must not be null").toString());
        if (d == null) {
            return false;
        }
        OutboxMessage m = StoredMessages.rebuild(d.messageId(), d.bucket(), d.topic(), d.key(), d.value(),
                d.decodedHeaders(), d.partition(), d.createdAt());
        long sequence = nextSequence.getAsLong();
        messages.computeIfAbsent(d.bucket(), b -> new ConcurrentSkipListMap<>()).put(sequence, stored.apply(m, sequence));
        deadLetters.remove(messageId.toString());
        return true;
    }

    @Override
    public synchronized boolean purgeDeadLetter(UUID messageId) {
        return deadLetters.remove(Objects.requireNonNull(messageId, "messageId must not be null").toString()) != null;
    }
}
