package io.outbox.spring;

import io.outbox.relay.OutboxRelay;
import io.outbox.spi.OutboxStore;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.IntStream;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * The {@code outbox} Actuator endpoint ({@code /actuator/outbox} once exposed): the relay's state
 * and the pending messages per bucket. Read-only. Thread-safe.
 */
@Endpoint(id = "outbox")
public final class OutboxEndpoint {

    /** The most pending messages counted per bucket; a bucket holding more shows this number and {@code capped}. */
    public static final int PENDING_COUNT_CAP = 1000;

    private final OutboxStore store;
    private final OutboxRelay relay;
    private final OutboxRelayMonitor monitor;
    private final int bucketCount;

    /**
     * An endpoint.
     *
     * @param store the store; not null
     * @param relay the relay, or null when this application runs none
     * @param monitor what the relay reported, or null
     * @param bucketCount {@code outbox.bucket-count}
     */
    public OutboxEndpoint(OutboxStore store, OutboxRelay relay, OutboxRelayMonitor monitor, int bucketCount) {
        this.store = Objects.requireNonNull(store, "store must not be null");
        this.relay = relay;
        this.monitor = monitor;
        this.bucketCount = OutboxRelaySettings.bucketCount(bucketCount);
    }

    /**
     * The pending messages of one bucket, counted up to a cap.
     *
     * @param count pending messages, at most {@link #PENDING_COUNT_CAP}
     * @param capped true when the bucket holds at least {@link #PENDING_COUNT_CAP}
     */
    public record BucketPending(int count, boolean capped) {
    }

    /**
     * The endpoint's answer.
     *
     * @param relayRunning whether a relay runs in this application
     * @param relayId its id, or null without a relay
     * @param bucketCount the configured bucket count
     * @param ownedBuckets the buckets it leases, ascending
     * @param stalledBuckets buckets whose publishes failed since their last success
     * @param pending pending messages per bucket that has any, ascending by bucket
     */
    public record Report(boolean relayRunning, String relayId, int bucketCount, List<Integer> ownedBuckets,
                         Map<Integer, OutboxRelayMonitor.Stall> stalledBuckets, Map<Integer, BucketPending> pending) {
    }

    /**
     * Reads the state: one store call to find the buckets with pending messages, then one batch read
     * (at most {@link #PENDING_COUNT_CAP} rows) per such bucket.
     *
     * @return the report
     */
    @ReadOperation
    public Report outbox() {
        List<Integer> all = IntStream.range(0, bucketCount).boxed().toList();
        Map<Integer, BucketPending> pending = new LinkedHashMap<>();
        for (int bucket : store.bucketsWithPending(all)) {
            int count = store.nextBatch(bucket, PENDING_COUNT_CAP).size();
            pending.put(bucket, new BucketPending(count, count >= PENDING_COUNT_CAP));
        }
        return new Report(relay != null && relay.isRunning(), relay == null ? null : relay.relayId(), bucketCount,
                monitor == null ? List.of() : monitor.ownedBuckets(),
                monitor == null ? Map.of() : monitor.stalledBuckets(), pending);
    }
}
