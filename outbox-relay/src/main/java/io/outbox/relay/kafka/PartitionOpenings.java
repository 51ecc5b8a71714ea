package io.outbox.relay.kafka;

import io.outbox.OutboxBucket;
import io.outbox.OutboxMessage;
import io.outbox.relay.FailureKind;
import io.outbox.relay.internal.LogText;
import io.outbox.spi.support.StoredMessages;
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
 * <p>One instance per producer. Thread-safe: publishing store threads send and wait, the
 * producer's I/O thread settles an opening with its record's acknowledgement. The opening record is sent without waiting; the next
 * record for the partition, of this batch or another thread's, waits for its acknowledgement,
 * so the openings of a batch's partitions overlap. Every wait ends by a deadline the caller gives
 * (one per batch). A wait that runs out, or an opening that fails for a reason other than its
 * own record (a broker that does not answer, say), stops the batch: its remaining records are
 * not sent (sending them would burst into the unopened partition, and with the topic's metadata
 * lost each send would block {@code max.block.ms}), and fail with a retriable error. An opening
 * that fails for its own record (R12: too large, say) leaves the partition to the next record.
 */
final class PartitionOpenings {

    /**
     * Completes null once the partition's opening record is acknowledged, or with the opening's
     * error; an entry whose opening failed is removed before it completes.
     */
    private final Map<TopicPartition, CompletableFuture<Throwable>> openings = new ConcurrentHashMap<>();
    /** False for {@link #none()}: every record goes at once. */
    private final boolean opens;

    /** Openings for a producer the publisher created (K8). */
    PartitionOpenings() {
        this(true);
    }

    private PartitionOpenings(boolean opens) {
        this.opens = opens;
    }

    /**
     * No openings: every record is sent at once. For a producer of the caller's, which may have
     * written to the partition before.
     */
    static PartitionOpenings none() {
        return new PartitionOpenings(false);
    }

    /**
     * The partition {@code m} goes to, or null when the producer chooses it.
     *
     * @param partitions the topic's partition count; null when unknown
     */
    static TopicPartition target(OutboxMessage m, Integer partitions) {
        if (m.partition() != null) {
            return new TopicPartition(m.topic(), m.partition());
        }
        byte[] key = StoredMessages.key(m);
        if (key == null || partitions == null || partitions < 1) {
            return null;
        }
        return new TopicPartition(m.topic(), OutboxBucket.forKey(key, partitions));
    }

    /** Forgets every opening: a new producer opens each partition again (K8). */
    void clear() {
        openings.clear();
    }

    /** Whether a record to {@code partition} may be sent without waiting. */
    boolean isOpen(TopicPartition partition) {
        CompletableFuture<Throwable> opening = openings.get(partition);
        return opening != null && opening.isDone() && opening.join() == null;
    }

    /**
     * Sends {@code record} to {@code partition}: at once when the partition is open, unknown (null:
     * the producer places the record) or this instance is {@link #none()}, or as its opening;
     * while another record opens it, after that record's acknowledgement, waiting at most until
     * {@code deadlineNanos} ({@link System#nanoTime()}).
     *
     * @return null when the record was sent; otherwise why it was not, a retriable error for it and
     *     the rest of its batch
     * @throws InterruptedException if interrupted while waiting; the record is then not sent
     */
    RuntimeException send(Producer<byte[], byte[]> producer, TopicPartition partition,
                          ProducerRecord<byte[], byte[]> record, Callback callback, long deadlineNanos)
            throws InterruptedException {
        if (partition == null || !opens || isOpen(partition)) {
            producer.send(record, callback);
            return null;
        }
        while (true) {
            CompletableFuture<Throwable> opening = openings.get(partition);
            if (opening == null) {
                CompletableFuture<Throwable> mine = new CompletableFuture<>();
                if (openings.putIfAbsent(partition, mine) == null) {
                    open(producer, partition, record, callback, mine);
                    return null;
                }
                continue;
            }
            Throwable failure;
            try {
                failure = opening.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                return new org.apache.kafka.common.errors.TimeoutException("not sent: the first record to " + partition
                        + " was not acknowledged in time (rule K8); the batch is retried");
            } catch (ExecutionException e) {
                failure = e.getCause(); // not reached: openings complete normally
            }
            if (failure == null) {
                producer.send(record, callback);
                return null;
            }
            if (FailureKind.classify(failure) != FailureKind.MESSAGE) {
                return new org.apache.kafka.common.errors.TimeoutException("not sent: the first record to "
                        + partition + " failed (rule K8): " + LogText.oneLine(failure.toString()), failure);
            }
            // that opening failed for its own record: this record may open the partition
        }
    }

    private void open(Producer<byte[], byte[]> producer, TopicPartition partition,
                      ProducerRecord<byte[], byte[]> record, Callback callback, CompletableFuture<Throwable> mine) {
        try {
            producer.send(record, (metadata, error) -> {
                settle(partition, mine, error);
                callback.onCompletion(metadata, error);
            });
        } catch (RuntimeException e) {
            settle(partition, mine, e);
            throw e;
        }
    }

    private void settle(TopicPartition partition, CompletableFuture<Throwable> opening, Throwable error) {
        if (error != null) {
            openings.remove(partition, opening);
        }
        opening.complete(error);
    }
}
