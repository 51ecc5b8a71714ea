package io.outbox.relay.kafka;

import io.outbox.relay.internal.LogText;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Remembers each topic's partition count as the publisher last saw it and logs one ERROR when it
 * changes or the topic vanishes from the producer's metadata: Kafka places a keyed record by
 * {@code hash(key) % partitions}, so a new count moves keys to other partitions, and records a key
 * already has on its old partition are no longer ordered with its new ones. A topic deleted while
 * relays run and re-created (by the broker's auto-creation, with its default count, or by hand)
 * is the usual cause. Thread-safe (concurrent maps): the store threads of several buckets' publishes
 * report to it at once.
 */
final class TopicWatch {

    private static final Logger LOG = LoggerFactory.getLogger(KafkaOutboxPublisher.class);

    private final Map<String, Integer> partitions = new ConcurrentHashMap<>();
    private final Map<String, Boolean> vanished = new ConcurrentHashMap<>();

    /**
     * Records a successful metadata answer; logs once per change of the count.
     *
     * @return true when the topic has fewer partitions than before: records in flight to the lost
     *     ones wait in the producer until {@code delivery.timeout.ms}
     */
    boolean observed(String topic, Integer count) {
        if (count == null) {
            return false;
        }
        vanished.remove(topic);
        Integer before = partitions.put(topic, count);
        if (before != null && !before.equals(count)) {
            LOG.error("partition count changed from {} to {} topic='{}': keys now map to other partitions, so "
                    + "records of a key on its old partition and on its new one are not ordered; create topics "
                    + "before relays start and never re-create them while they run", before, count,
                    LogText.visible(topic));
        }
        return before != null && count < before;
    }

    /** The partition count last seen for {@code topic}, or null. */
    Integer known(String topic) {
        return partitions.get(topic);
    }

    /** Records a failed metadata wait; logs once when a topic the publisher knew is gone. */
    void missing(String topic) {
        Integer before = partitions.get(topic);
        if (before != null && vanished.putIfAbsent(topic, Boolean.TRUE) == null) {
            LOG.error("topic vanished from the producer's metadata topic='{}' partitions={} now=none: it was "
                    + "deleted or the brokers are unreachable; a topic re-created with another partition count "
                    + "maps keys to other partitions", LogText.visible(topic), before);
        }
    }
}
