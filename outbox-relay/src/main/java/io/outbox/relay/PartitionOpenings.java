package io.outbox.relay;

import io.outbox.OutboxBucket;
import io.outbox.OutboxMessage;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * Rule K8: a producer's first record to a partition is sent alone, and the partition's next
 * records only after its acknowledgement.
 *
 * <p>Why: a broker names itself leader of a new partition in its metadata a moment before it acts
 * as leader. A burst into a topic created just before can have its first produce request refused
 * with {@code NOT_LEADER_OR_FOLLOWER} while the requests pipelined behind it land; the broker,
 * with no sequence state of the producer on the partition yet, accepts their sequence numbers
 * above 0. The refused request's records then come back as {@code OUT_OF_ORDER_SEQUENCE_NUMBER}
 * until {@code delivery.timeout.ms} (two minutes by default), and a retry writes them after the
 * records that followed them. Once one record of the producer is acknowledged on a partition, the
 * broker holds the producer's sequence there and refuses a gap instead. A record whose opening
 * fails leaves the partition closed; the next record for it opens it again.
 *
 * <p>The partition is the message's own, or Kafka's keyed placement (the same hash as the buckets,
 * {@link OutboxBucket#forKey}) over the topic's partition count. A keyless message with no
 * partition is placed by the producer's sticky partitioner and sent at once.
 *
 * <p>One instance per producer. Thread-safe: a thread that finds a partition being opened by
 * another waits for that opening to end.
 */
final class PartitionOpenings {

    /** Completed normally: the partition is open. Absent: nobody has opened it, or the opening failed. */
    private final Map<TopicPartition, CompletableFuture<Void>> openings = new ConcurrentHashMap<>();

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
        CompletableFuture<Void> opening = openings.get(partition);
        return opening != null && opening.isDone() && !opening.isCompletedExceptionally();
    }

    /**
     * Sends {@code record} to {@code partition}: at once when the partition is open; else, after an
     * opening in progress ends, or as the opening itself, returning once it is acknowledged or
     * failed (at most {@code delivery.timeout.ms}).
     *
     * @return the send's future
     * @throws InterruptedException if interrupted while waiting for an acknowledgement
     */
    Future<RecordMetadata> send(Producer<byte[], byte[]> producer, TopicPartition partition,
                                ProducerRecord<byte[], byte[]> record, Callback callback) throws InterruptedException {
        while (true) {
            CompletableFuture<Void> opening = openings.get(partition);
            if (opening == null) {
                CompletableFuture<Void> mine = new CompletableFuture<>();
                if (openings.putIfAbsent(partition, mine) == null) {
                    return open(producer, partition, record, callback, mine);
                }
            } else if (!opening.isDone()) {
                try {
                    opening.get();
                } catch (ExecutionException e) {
                    // that opening failed: this record may open the partition
                }
            } else if (!opening.isCompletedExceptionally()) {
                return producer.send(record, callback);
            }
        }
    }

    private Future<RecordMetadata> open(Producer<byte[], byte[]> producer, TopicPartition partition,
                                        ProducerRecord<byte[], byte[]> record, Callback callback,
                                        CompletableFuture<Void> mine) throws InterruptedException {
        boolean opened = false;
        try {
            Future<RecordMetadata> sent = producer.send(record, callback);
            try {
                sent.get();
                opened = true;
            } catch (ExecutionException e) {
                // the callback has the error; the partition stays closed
            }
            return sent;
        } finally {
            if (opened) {
                mine.complete(null);
            } else {
                openings.remove(partition, mine);
                mine.completeExceptionally(new IllegalStateException("opening " + partition + " failed"));
            }
        }
    }
}
