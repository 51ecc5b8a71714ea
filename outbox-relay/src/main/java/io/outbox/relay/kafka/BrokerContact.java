package io.outbox.relay.kafka;

import io.outbox.relay.BrokerUnreachableException;
import io.outbox.relay.internal.LogText;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * When the publisher last heard from the cluster (a metadata answer, an Admin answer, an
 * acknowledged record), and the one WARN line, at most every {@link #WARN_INTERVAL}, that says no
 * broker of the bootstrap servers answers: the producer's own connection
 * warnings are many per second, and the standalone relay quiets them. Thread-safe: the publishes
 * of several buckets and the producer's I/O thread use it.
 */
final class BrokerContact {

    /** The shortest time between two WARN lines about an unreachable cluster. */
    static final Duration WARN_INTERVAL = Duration.ofSeconds(30);

    private static final Logger LOG = LoggerFactory.getLogger(KafkaOutboxPublisher.class);

    private final String bootstrapServers;
    private final long createdNanos = System.nanoTime();
    /** Nanos of the last contact, or {@link Long#MIN_VALUE} for none yet. */
    private final AtomicLong lastContactNanos = new AtomicLong(Long.MIN_VALUE);
    /** Nanos of the last WARN line, or {@link Long#MIN_VALUE} for none yet. */
    private final AtomicLong lastWarnNanos = new AtomicLong(Long.MIN_VALUE);

    BrokerContact(Object bootstrapServers) {
        this.bootstrapServers = LogText.oneLine(String.valueOf(bootstrapServers));
    }

    /** The cluster answered. */
    void succeeded() {
        lastContactNanos.set(System.nanoTime());
    }

    /**
     * The error for a metadata wait that timed out while the cluster did not answer an Admin
     * request either; logs the WARN line when the last one is older than {@link #WARN_INTERVAL}.
     */
    BrokerUnreachableException unreachable(Throwable cause) {
        long now = System.nanoTime();
        long last = lastContactNanos.get();
        String since = last == Long.MIN_VALUE
                ? "no successful contact since the publisher started " + seconds(now - createdNanos) + " s ago"
                : "last successful contact " + seconds(now - last) + " s ago";
        String message = "no broker of bootstrap.servers=" + bootstrapServers + " answers: " + since;
        long warned = lastWarnNanos.get();
        if ((warned == Long.MIN_VALUE || now - warned >= WARN_INTERVAL.toNanos())
                && lastWarnNanos.compareAndSet(warned, now)) {
            LOG.warn("cannot reach the Kafka cluster; publishing is retried with backoff (this line repeats at most "
                    + "every {} s) bootstrap.servers={} {}; cause={}", WARN_INTERVAL.toSeconds(), bootstrapServers,
                    since, LogText.oneLine(String.valueOf(cause)));
        }
        return new BrokerUnreachableException(message, cause);
    }

    private static long seconds(long nanos) {
        return TimeUnit.NANOSECONDS.toSeconds(nanos);
    }
}
