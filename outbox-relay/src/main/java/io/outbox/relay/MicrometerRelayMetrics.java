package io.outbox.relay;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.outbox.notify.NotificationTransport;
import io.outbox.relay.internal.LogText;
import io.outbox.spi.DeadLetterFailure;
import io.outbox.spi.PendingMetrics;
import io.outbox.spi.PendingSnapshot;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.ToDoubleFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reports a relay's activity to a Micrometer registry (rules O3, O4); register it with
 * {@link OutboxRelay.Builder#listener(RelayListener)}. Needs {@code io.micrometer:micrometer-core}
 * on the class path (an optional dependency of this module). The meters, their units, tags and
 * Prometheus names are declared in {@link RelayMeter} and listed in
 * {@code docs/reference/metrics.md}, which is generated from it.
 *
 * <p>The backlog gauges exist only when a {@link PendingMetrics} store is given; it is sampled on
 * a daemon thread every sample interval, never on the publishing path or per scrape. With the relay
 * option {@link RelayOptions#backlogSampledByBucketZeroOwner()} only the relay that owns bucket 0
 * runs the query, so a fleet runs one (O4); the others report {@code outbox.relay.pending.available}
 * 0 and NaN. Several relays on one store report the same backlog: aggregate it with max, not sum.
 * Tags such as {@code outbox=orders} are added to every meter; do not tag with relay ids or message
 * ids.
 *
 * <p>Thread-safe. {@link #close()} stops the sampler and removes the meters.
 */
public final class MicrometerRelayMetrics implements RelayListener, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(MicrometerRelayMetrics.class);

    private final MeterRegistry registry;
    private final List<Meter> meters = new ArrayList<>();
    private final Tags common;
    private final Counter published;
    private final Counter storeErrors;
    private final Counter deadLettered;
    private final Counter leaseExpirations;
    private final Counter leaseTakeovers;
    private final Counter fenced;
    private final Counter wakeUps;
    private final Timer publishDuration;
    private final Timer cycleDuration;
    private final Timer timeInOutbox;
    private final AtomicInteger up = new AtomicInteger();
    private final AtomicInteger bucketCount = new AtomicInteger();
    private final AtomicInteger ownedBuckets = new AtomicInteger();
    /** Owned buckets as last reported, for takeovers; guarded by itself. */
    private final Set<Integer> owned = new HashSet<>();
    private volatile boolean ownsBucketZero;
    /** Failing heads by bucket: first failure (epoch ms) and attempts. */
    private final ConcurrentMap<Integer, long[]> failingHeads = new ConcurrentHashMap<>();
    /** O4: from the relay's options, at its start. */
    private volatile boolean bucketZeroOwnerOnly;
    private final ScheduledExecutorService sampler;
    /** 1 connected, 0 down; the meters exist from the first report on (N6). */
    private final AtomicInteger notifyConnected = new AtomicInteger();
    private Counter notifyLosses;
    private volatile double pendingMessages = Double.NaN;
    private volatile double oldestAgeSeconds = Double.NaN;
    private volatile int pendingAvailable;

    /**
     * Registers every meter but the backlog gauges.
     *
     * @param registry where to register; not null
     * @param tags tags for every meter; not null, may be empty
     */
    public MicrometerRelayMetrics(MeterRegistry registry, Iterable<Tag> tags) {
        this(registry, Tags.of(Objects.requireNonNull(tags, "tags must not be null")), null, null);
    }

    /**
     * Registers every meter, with backlog gauges sampled from the store (C2), by this relay or,
     * when its options say so, only while it owns bucket 0 (O4).
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
        gauge(RelayMeter.UP, up, AtomicInteger::get);
        gauge(RelayMeter.BUCKETS, bucketCount, AtomicInteger::get);
        gauge(RelayMeter.OWNED_BUCKETS, ownedBuckets, AtomicInteger::get);
        published = counter(RelayMeter.PUBLISHED, Tags.empty());
        storeErrors = counter(RelayMeter.STORE_ERRORS, Tags.empty());
        deadLettered = counter(RelayMeter.DEAD_LETTERED, Tags.empty());
        gauge(RelayMeter.STALLED_BUCKETS, failingHeads, Map::size);
        gauge(RelayMeter.FAILING_HEAD_ATTEMPTS, this, MicrometerRelayMetrics::oldestHeadAttempts);
        leaseExpirations = counter(RelayMeter.LEASE_EXPIRATIONS, Tags.empty());
        leaseTakeovers = counter(RelayMeter.LEASE_TAKEOVERS, Tags.empty());
        fenced = counter(RelayMeter.FENCED, Tags.empty());
        wakeUps = counter(RelayMeter.WAKE_UPS, Tags.empty());
        for (FailureKind kind : List.of(FailureKind.RETRIABLE, FailureKind.MESSAGE, FailureKind.FATAL)) {
            counter(RelayMeter.PUBLISH_FAILURES, Tags.of("type", typeOf(kind)));
        }
        counter(RelayMeter.PUBLISH_FAILURES, Tags.of("type", "fenced"));
        counter(RelayMeter.POLLS, Tags.of("found", "true"));
        counter(RelayMeter.POLLS, Tags.of("found", "false"));
        publishDuration = timer(RelayMeter.PUBLISH_DURATION);
        cycleDuration = timer(RelayMeter.CYCLE_DURATION);
        timeInOutbox = timer(RelayMeter.TIME_IN_OUTBOX);
        if (backlog == null) {
            sampler = null;
            return;
        }
        gauge(RelayMeter.PENDING_MESSAGES, this, m -> m.pendingMessages);
        gauge(RelayMeter.PENDING_OLDEST_AGE, this, m -> m.oldestAgeSeconds);
        gauge(RelayMeter.PENDING_AVAILABLE, this, m -> m.pendingAvailable);
        sampler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "outbox-relay-metrics");
            t.setDaemon(true);
            return t;
        });
        sampler.scheduleWithFixedDelay(() -> sample(backlog, sampleInterval), 0,
                sampleInterval.toMillis(), TimeUnit.MILLISECONDS);
    }

    private <T> void gauge(RelayMeter meter, T state, ToDoubleFunction<T> value) {
        gauge(meter, state, value, common);
    }

    private <T> void gauge(RelayMeter meter, T state, ToDoubleFunction<T> value, Tags tags) {
        add(Gauge.builder(meter.meterName(), state, value).baseUnit(meter.baseUnit()).tags(tags)
                .description(meter.meaning()).register(registry));
    }

    private Counter counter(RelayMeter meter, Tags tags) {
        return add(Counter.builder(meter.meterName()).baseUnit(meter.baseUnit()).tags(common).tags(tags)
                .description(meter.meaning()).register(registry));
    }

    private Timer timer(RelayMeter meter) {
        return add(Timer.builder(meter.meterName()).tags(common).publishPercentileHistogram()
                .description(meter.meaning()).register(registry));
    }

    private <M extends Meter> M add(M meter) {
        synchronized (meters) {
            if (!meters.contains(meter)) {
                meters.add(meter);
            }
        }
        return meter;
    }

    private static String typeOf(FailureKind kind) {
        return kind.name().toLowerCase(Locale.ROOT);
    }

    private void sample(PendingMetrics backlog, Duration timeout) {
        if (bucketZeroOwnerOnly && !ownsBucketZero) {
            unavailable();
            return;
        }
        try {
            PendingSnapshot snapshot = backlog.pendingMetrics(timeout);
            pendingMessages = snapshot.pendingCount();
            oldestAgeSeconds = snapshot.oldestCreatedAt() == null
                    ? (snapshot.pendingCount() == 0 ? 0 : Double.NaN)
                    : Math.max(0, System.currentTimeMillis() - snapshot.oldestCreatedAt().toEpochMilli()) / 1000.0;
            pendingAvailable = 1;
        } catch (RuntimeException e) {
            unavailable();
            LOG.debug("backlog sample failed: {}", LogText.oneLine(e.toString()));
        }
    }

    private void unavailable() {
        pendingAvailable = 0;
        pendingMessages = Double.NaN;
        oldestAgeSeconds = Double.NaN;
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
    public void onStarted(RelayOptions options) {
        bucketZeroOwnerOnly = options.backlogSampledByBucketZeroOwner();
        bucketCount.set(options.bucketCount());
        up.set(1);
    }

    @Override
    public void onCycle(Duration took) {
        cycleDuration.record(took);
    }

    @Override
    public void onPoll(boolean foundWork) {
        counter(RelayMeter.POLLS, Tags.of("found", Boolean.toString(foundWork))).increment();
    }

    @Override
    public void onWakeUp() {
        wakeUps.increment();
    }

    @Override
    public void onLeasesExpired(List<Integer> buckets) {
        leaseExpirations.increment(buckets.size());
    }

    @Override
    public void onPublishCompleted(int bucket, int count, Duration took) {
        publishDuration.record(took);
    }

    @Override
    public void onTimesInOutbox(int bucket, List<Duration> times) {
        times.forEach(timeInOutbox::record);
    }

    @Override
    public void onOwnedBucketsChanged(List<Integer> buckets) {
        synchronized (owned) {
            int gained = 0;
            for (Integer bucket : buckets) {
                if (!owned.contains(bucket)) {
                    gained++;
                }
            }
            owned.clear();
            owned.addAll(buckets);
            leaseTakeovers.increment(gained);
        }
        ownedBuckets.set(buckets.size());
        ownsBucketZero = !buckets.isEmpty() && buckets.get(0) == 0;
        failingHeads.keySet().retainAll(buckets);
    }

    @Override
    public void onPublished(int bucket, int count) {
        published.increment(count);
        failingHeads.remove(bucket); // the head went out
    }

    @Override
    public void onMessageFailed(int bucket, UUID messageId, int attempts, Throwable error) {
        counter(RelayMeter.MESSAGE_FAILURES, Tags.of("cause", error.getClass().getName())).increment();
        long now = System.currentTimeMillis();
        failingHeads.compute(bucket, (b, head) -> attempts == 1 || head == null
                ? new long[] {now, attempts} : new long[] {head[0], attempts});
    }

    @Override
    public void onDeadLettered(int bucket, UUID messageId, DeadLetterFailure failure) {
        deadLettered.increment();
        failingHeads.remove(bucket);
    }

    @Override
    public void onPublishFailed(int bucket, int acknowledged, Throwable error) {
        boolean isFenced = error instanceof BucketFencedException;
        if (isFenced) {
            fenced.increment();
        }
        String type = isFenced ? "fenced" : typeOf(FailureKind.classify(error));
        counter(RelayMeter.PUBLISH_FAILURES, Tags.of("type", type)).increment();
    }

    @Override
    public void onStoreError(Throwable error) {
        storeErrors.increment();
    }

    @Override
    public void onNotificationStateChanged(NotificationTransport.State state) {
        synchronized (meters) {
            if (notifyLosses == null) {
                Tags tags = common.and("transport", state.transport());
                gauge(RelayMeter.NOTIFY_CONNECTED, notifyConnected, AtomicInteger::get, tags);
                notifyLosses = add(Counter.builder(RelayMeter.NOTIFY_LOSSES.meterName())
                        .baseUnit(RelayMeter.NOTIFY_LOSSES.baseUnit()).tags(tags)
                        .description(RelayMeter.NOTIFY_LOSSES.meaning()).register(registry));
            } else if (!state.connected() && notifyConnected.get() == 1) {
                notifyLosses.increment();
            }
            notifyConnected.set(state.connected() ? 1 : 0);
        }
    }

    @Override
    public void onTerminated(Throwable fatalError) {
        up.set(0);
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
