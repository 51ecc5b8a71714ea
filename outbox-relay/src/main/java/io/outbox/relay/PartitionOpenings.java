package io.outbox.relay;

import io.outbox.OutboxBucket;
import io.outbox.OutboxMessage;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * Rule K8: a producer's first record to a partition is sent alone, and the partition's next
 * records only after its acknowledgement.
 *
 * <p>Why: a broker names itself leader of a new partition in its metadata a moment before it acts
 * as leader. A burst into a topic created just before can have its first produce request refused
 * with {@code NOT_LEADER_OR_FOLLOWER} while the requests pipelined behind it land; the broker,
 * with no sequence state of the producer on the partition yet, accepts their sequence numbers
 * above 0. The refused request's retries are then refused as {@code OUT_OF_ORDER_SEQUENCE_NUMBER}
 * until {@code delivery.timeout.ms} (two minutes by default), and a later retry of the batch writes
 * its records after the records that followed them. Once one record of the producer is acknowledged on a partition, the
 * broker holds the producer's sequence there and refuses a gap instead. A record whose opening
 * fails leaves the partition closed; the next record for it opens it again.
 *
 * <p>The partition is the message's own, or Kafka's keyed placement (the same hash as the buckets,
 * {@link OutboxBucket#forKey}) over the topic's partition count. A keyless message with no
 * partition is placed by the producer's sticky partitioner and sent at once.
 *
 * <p>One instance per producer. Thread-safe: a thread that finds a partition being opened by
 * another waits for that opening to end. Every wait ends by a deadline the caller gives (one per
 * batch); past it, records are sent at once, as without this rule.
 */
final class PartitionOpenings {

    /**
     * True once the partition's opening record is acknowledged. Absent: nobody has opened it, or
     * the opening failed (its entry removed before it completes false).
     */
    private final Map<TopicPartition, CompletableFuture<Boolean>> openings = new ConcurrentHashMap<>();

    /**
     * The partition {@code m} goes to, or null when the producer chooses it.
     *
     * @param partitions the topic's partition count; null when unknown
     */
    static TopicPartition target(OutboxMessage m, Integer partitions) {
        if (m.partition() != null) {
            return new TopicPartition(m.topic(), m.partition());
        }
        if (m.key() == null || partitions == null || partitions < 1) {
            return null;
        }
        return new TopicPartition(m.topic(), OutboxBucket.forKey(m.key(), partitions));
    }

    /** Whether a record to {@code partition} may be sent without waiting. */
    boolean isOpen(TopicPartition partition) {
        CompletableFuture<Boolean> opening = openings.get(partition);
        return opening != null && Boolean.TRUE.equals(opening.getNow(false));
    }

    /**
     * Sends {@code record} to {@code partition}: at once when the partition is open; else after an
     * opening in progress ends, or as the opening itself, returning once it is acknowledged or
     * failed. A wait that reaches {@code deadlineNanos} ({@link System#nanoTime()}) ends there: the
     * record is sent (or, as the opening, left in flight) without more waiting.
     *
     * @throws InterruptedException if interrupted while waiting; the record is then not sent
     *     unless it is the opening
     */
    void send(Producer<byte[], byte[]> producer, TopicPartition partition, ProducerRecord<byte[], byte[]> record,
              Callback callback, long deadlineNanos) throws InterruptedException {
        while (true) {
            CompletableFuture<Boolean> opening = openings.get(partition);
            if (opening == null) {
                CompletableFuture<Boolean> mine = new CompletableFuture<>();
                if (openings.putIfAbsent(partition, mine) == null) {
                    open(producer, partition, record, callback, mine);
                    await(mine, deadlineNanos);
                    return;
                }
            } else {
                Boolean opened = await(opening, deadlineNanos);
                if (opened == null || opened) { // out of time, or open
                    producer.send(record, callback);
                    return;
                }
                // that opening failed: this record may open the partition
            }
        }
    }

    private void open(Producer<byte[], byte[]> producer, TopicPartition partition,
                      ProducerRecord<byte[], byte[]> record, Callback callback, CompletableFuture<Boolean> mine) {
        try {
            producer.send(record, (metadata, error) -> {
                settle(partition, mine, error == null);
                callback.onCompletion(metadata, error);
            });
        } catch (RuntimeException e) {
            settle(partition, mine, false);
            throw e;
        }
    }

    private void settle(TopicPartition partition, CompletableFuture<Boolean> opening, boolean acknowledged) {
        if (!acknowledged) {
            openings.remove(partition, opening);
        }
        opening.complete(acknowledged);
    }

    /** The opening's outcome, or null when the deadline came first. */
    private static Boolean await(CompletableFuture<Boolean> opening, long deadlineNanos) throws InterruptedException {
        try {
            return opening.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            return null;
        } catch (ExecutionException e) {
            return false; // not reached: openings complete normally
        }
    }
}
