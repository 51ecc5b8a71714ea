package io.outbox.relay;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.outbox.spi.PendingMetrics;
import io.outbox.spi.PendingSnapshot;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reports a relay's activity to a Micrometer registry; register it with
 * {@link OutboxRelay.Builder#listener(RelayListener)}. Needs {@code io.micrometer:micrometer-core}
 * on the class path (an optional dependency of this module).
 *
 * <table class="striped">
 *   <caption>Meters</caption>
 *   <thead><tr><th>name</th><th>type</th><th>unit</th><th>meaning</th></tr></thead>
 *   <tbody>
 *   <tr><td>{@code outbox.relay.published}</td><td>counter</td><td>messages</td>
 *       <td>messages acknowledged by the broker and deleted from the store</td></tr>
 *   <tr><td>{@code outbox.relay.publish.failures}</td><td>counter</td><td>batches</td>
 *       <td>publishes that left messages unacknowledged (each is retried)</td></tr>
 *   <tr><td>{@code outbox.relay.store.errors}</td><td>counter</td><td>errors</td>
 *       <td>failed store calls (each is retried)</td></tr>
 *   <tr><td>{@code outbox.relay.dead.lettered}</td><td>counter</td><td>messages</td>
 *       <td>messages moved to the store's dead letters (R12, C4)</td></tr>
 *   <tr><td>{@code outbox.relay.message.failures}</td><td>counter, tag {@code cause} (exception class)</td>
 *       <td>failures</td><td>message-specific failures (too large, invalid topic or partition, a row
 *       that cannot be decoded); never broker outages</td></tr>
 *   <tr><td>{@code outbox.relay.stalled.buckets}</td><td>gauge</td><td>buckets</td>
 *       <td>owned buckets waiting behind a head with counted message-specific failures</td></tr>
 *   <tr><td>{@code outbox.relay.failing.head.attempts}</td><td>gauge</td><td>attempts</td>
 *       <td>counted attempts of the head that has been failing longest; 0 when none</td></tr>
 *   <tr><td>{@code outbox.relay.owned.buckets}</td><td>gauge</td><td>buckets</td>
 *       <td>buckets this relay holds leases for</td></tr>
 *   <tr><td>{@code outbox.relay.pending.messages}</td><td>gauge</td><td>messages</td>
 *       <td>pending messages in the whole store (capability C2); NaN when unknown</td></tr>
 *   <tr><td>{@code outbox.relay.pending.oldest.age}</td><td>gauge</td><td>seconds</td>
 *       <td>age of the oldest pending message (C2); 0 when none, NaN when unknown</td></tr>
 *   </tbody>
 * </table>
 *
 * <p>The backlog gauges exist only when a {@link PendingMetrics} store is given; it is sampled on
 * a daemon thread every sample interval, never on the publishing path or per scrape. Several
 * relays on one store report the same backlog: aggregate it with max, not sum. Tags such as
 * {@code outbox=orders} are added to every meter; do not tag with relay ids or message ids.
 *
 * <p>Thread-safe. {@link #close()} stops the sampler and removes the meters.
 */
public final class MicrometerRelayMetrics implements RelayListener, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(MicrometerRelayMetrics.class);

    private final MeterRegistry registry;
    private final List<Meter> meters = new ArrayList<>();
    private final Counter published;
    private final Counter publishFailures;
    private final Counter storeErrors;
    private final AtomicInteger ownedBuckets = new AtomicInteger();
    private final Tags common;
    private final Counter deadLettered;
    /** Failing heads by bucket: first failure (epoch ms) and attempts. */
    private final java.util.concurrent.ConcurrentMap<Integer, long[]> failingHeads =
            new java.util.concurrent.ConcurrentHashMap<>();
    private final ScheduledExecutorService sampler;
    private volatile double pendingMessages = Double.NaN;
    private volatile double oldestAgeSeconds = Double.NaN;

    /**
     * Registers the counters and the owned-buckets gauge, without backlog gauges.
     *
     * @param registry where to register; not null
     * @param tags tags for every meter; not null, may be empty
     */
    public MicrometerRelayMetrics(MeterRegistry registry, Iterable<Tag> tags) {
        this(registry, Tags.of(Objects.requireNonNull(tags, "tags must not be null")), null, null);
    }

    /**
     * Registers every meter, with backlog gauges sampled from the store (C2).
     *
     * @param registry where to register; not null
     * @param tags tags for every meter; not null, may be empty
     * @param backlog the store's backlog capability; not null
     * @param sampleInterval how often to sample it, also the query timeout; positive
     */
    public MicrometerRelayMetrics(MeterRegistry registry, Iterable<Tag> tags, PendingMetrics backlog,
                                  Duration sampleInterval) {
        this(registry, Tags.of(Objects.requireNonNull(tags, "tags must not be null")),
                Objects.requireNonNull(backlog, "backlog must not be null"), requirePositive(sampleInterval));
    }

    private MicrometerRelayMetrics(MeterRegistry registry, Tags common, PendingMetrics backlog,
                                   Duration sampleInterval) {
        this.registry = Objects.requireNonNull(registry, "registry must not be null");
        this.common = common;
        deadLettered = add(Counter.builder("outbox.relay.dead.lettered").baseUnit("messages").tags(common)
                .description("Messages moved to the store's dead letters").register(registry));
        add(Gauge.builder("outbox.relay.stalled.buckets", failingHeads, java.util.Map::size).baseUnit("buckets")
                .tags(common).description("Owned buckets waiting behind a failing head message").register(registry));
        add(Gauge.builder("outbox.relay.failing.head.attempts", this, MicrometerRelayMetrics::oldestHeadAttempts)
                .baseUnit("attempts").tags(common)
                .description("Attempts of the head message that has been failing longest").register(registry));
        published = add(Counter.builder("outbox.relay.published").baseUnit("messages").tags(common)
                .description("Messages acknowledged by the broker and deleted from the store").register(registry));
        publishFailures = add(Counter.builder("outbox.relay.publish.failures").baseUnit("batches").tags(common)
                .description("Publishes that left messages unacknowledged").register(registry));
        storeErrors = add(Counter.builder("outbox.relay.store.errors").baseUnit("errors").tags(common)
                .description("Failed store calls").register(registry));
        add(Gauge.builder("outbox.relay.owned.buckets", ownedBuckets, AtomicInteger::get).baseUnit("buckets")
                .tags(common).description("Buckets this relay holds leases for").register(registry));
        if (backlog == null) {
            sampler = null;
            return;
        }
        add(Gauge.builder("outbox.relay.pending.messages", this, m -> m.pendingMessages).baseUnit("messages")
                .tags(common).description("Pending messages in the whole store").register(registry));
        add(Gauge.builder("outbox.relay.pending.oldest.age", this, m -> m.oldestAgeSeconds).baseUnit("seconds")
                .tags(common).description("Age of the oldest pending message").register(registry));
        sampler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "outbox-relay-metrics");
            t.setDaemon(true);
            return t;
        });
        sampler.scheduleWithFixedDelay(() -> sample(backlog, sampleInterval), 0,
                sampleInterval.toMillis(), TimeUnit.MILLISECONDS);
    }

    private <M extends Meter> M add(M meter) {
        meters.add(meter);
        return meter;
    }

    private void sample(PendingMetrics backlog, Duration timeout) {
        try {
            PendingSnapshot snapshot = backlog.pendingMetrics(timeout);
            pendingMessages = snapshot.pendingCount();
            oldestAgeSeconds = snapshot.oldestCreatedAt() == null
                    ? (snapshot.pendingCount() == 0 ? 0 : Double.NaN)
                    : Math.max(0, System.currentTimeMillis() - snapshot.oldestCreatedAt().toEpochMilli()) / 1000.0;
        } catch (RuntimeException e) {
            pendingMessages = Double.NaN;
            oldestAgeSeconds = Double.NaN;
            LOG.debug("backlog sample failed: {}", e.toString());
        }
    }

    private double oldestHeadAttempts() {
        long[] oldest = null;
        for (long[] head : failingHeads.values()) {
            if (oldest == null || head[0] < oldest[0]) {
                oldest = head;
            }
        }
        return oldest == null ? 0 : oldest[1];
    }

    @Override
    public void onOwnedBucketsChanged(List<Integer> buckets) {
        ownedBuckets.set(buckets.size());
        failingHeads.keySet().retainAll(buckets);
    }

    @Override
    public void onPublished(int bucket, int count) {
        published.increment(count);
        failingHeads.remove(bucket); // the head went out
    }

    @Override
    public void onMessageFailed(int bucket, java.util.UUID messageId, int attempts, Throwable error) {
        Counter failures = Counter.builder("outbox.relay.message.failures").baseUnit("failures").tags(common)
                .tag("cause", error.getClass().getName())
                .description("Message-specific failures, by exception class").register(registry);
        synchronized (meters) {
            if (!meters.contains(failures)) {
                meters.add(failures);
            }
        }
        failures.increment();
        long now = System.currentTimeMillis();
        failingHeads.compute(bucket, (b, head) -> attempts == 1 || head == null
                ? new long[] {now, attempts} : new long[] {head[0], attempts});
    }

    @Override
    public void onDeadLettered(int bucket, java.util.UUID messageId, io.outbox.spi.DeadLetterFailure failure) {
        deadLettered.increment();
        failingHeads.remove(bucket);
    }

    @Override
    public void onPublishFailed(int bucket, int acknowledged, Throwable error) {
        publishFailures.increment();
    }

    @Override
    public void onStoreError(Throwable error) {
        storeErrors.increment();
    }

    /** Stops sampling and removes every meter from the registry. Idempotent. */
    @Override
    public void close() {
        if (sampler != null) {
            sampler.shutdownNow();
        }
        synchronized (meters) {
            meters.forEach(registry::remove);
            meters.clear();
        }
    }

    private static Duration requirePositive(Duration interval) {
        Objects.requireNonNull(interval, "sampleInterval must not be null");
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("sampleInterval must be positive but was " + interval);
        }
        return interval;
    }
}
