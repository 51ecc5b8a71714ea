package io.outbox.relay;

import io.outbox.OutboxBucket;
import io.outbox.spi.LeaseRequest;
import io.outbox.spi.OutboxMisconfigurationException;
import java.io.IOException;
import java.net.InetAddress;
import java.time.Duration;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;

/**
 * The relay's settings, immutable and validated at construction (rule R10).
 *
 * <p>Build them with {@link #builder()} or parse them from Kafka-style dotted keys with
 * {@link #fromProperties(Map)}; {@link #defaults()} is every default with a generated relay id.
 * Every option has a property key (the {@code *_CONFIG} constants) and is defined once, in
 * {@link #configDef()}: its type, default, valid range (the validator's {@code toString()}, for
 * example {@code 1-65536}) and documentation. The builder starts from those defaults and
 * {@link Builder#build()} checks every value against those ranges, so the definition, the
 * validation, the standalone relay's {@code --help} text and the reference page
 * {@code docs/reference/relay-options.md} (both rendered from it) cannot disagree. Rules between
 * options (the renew interval below the lease duration, and so on) are checked after the ranges.
 *
 * <p>The message-id header is not a relay option: the relay never reads it. It belongs to the
 * publisher ({@link io.outbox.relay.kafka.KafkaOutboxPublisher.Builder#messageIdHeader(String)}).
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class RelayOptions {

    /** Key of {@link #relayId()}. */
    public static final String RELAY_ID_CONFIG = "relay.id";
    /** Key of {@link #bucketCount()}. */
    public static final String BUCKET_COUNT_CONFIG = "bucket.count";
    /** Key of {@link #batchSize()}. */
    public static final String BATCH_SIZE_CONFIG = "batch.size";
    /** Key of {@link #batchMaxBytes()}, in bytes. */
    public static final String BATCH_MAX_BYTES_CONFIG = "batch.max.bytes";
    /** Key of {@link #pollInterval()}, in milliseconds. */
    public static final String POLL_INTERVAL_MS_CONFIG = "poll.interval.ms";
    /** Key of {@link #leaseDuration()}, in milliseconds. */
    public static final String LEASE_DURATION_MS_CONFIG = "lease.duration.ms";
    /** Key of {@link #leaseRenewInterval()}, in milliseconds. */
    public static final String LEASE_RENEW_INTERVAL_MS_CONFIG = "lease.renew.interval.ms";
    /** Key of {@link #errorBackoff()}, in milliseconds. */
    public static final String ERROR_BACKOFF_MS_CONFIG = "error.backoff.ms";
    /** Key of {@link #maxErrorBackoff()}, in milliseconds. */
    public static final String ERROR_BACKOFF_MAX_MS_CONFIG = "error.backoff.max.ms";
    /** Key of {@link #maxPublishDuration()}, in milliseconds. */
    public static final String MAX_PUBLISH_DURATION_MS_CONFIG = "max.publish.duration.ms";
    /** Key of {@link #closeTimeout()}, in milliseconds. */
    public static final String CLOSE_TIMEOUT_MS_CONFIG = "close.timeout.ms";
    /** Key of {@link #storeConcurrency()}. */
    public static final String STORE_CONCURRENCY_CONFIG = "store.concurrency";
    /** Key of {@link #poisonPolicy()}. */
    public static final String POISON_POLICY_CONFIG = "poison.policy";
    /** Key of {@link #prefetch()}. */
    public static final String PREFETCH_CONFIG = "prefetch";
    /** Key of {@link #backlogSampledByBucketZeroOwner()}. */
    public static final String METRICS_BACKLOG_BUCKET_ZERO_OWNER_CONFIG = "metrics.backlog.bucket0.owner.only";
    /** Key of {@link #poisonMaxAttempts()}. */
    public static final String POISON_MAX_ATTEMPTS_CONFIG = "poison.max.attempts";

    /** Default {@link #bucketCount()}: 8. */
    public static final int DEFAULT_BUCKET_COUNT = 8;
    /** Default {@link #batchSize()}: 500 messages. */
    public static final int DEFAULT_BATCH_SIZE = 500;
    /**
     * The share of the heap ({@link Runtime#maxMemory()}) that the default
     * {@link #batchMaxBytes()} gives all batches a relay may hold at once: one quarter.
     */
    public static final int DEFAULT_BATCH_HEAP_DIVISOR = 4;
    /** The smallest default {@link #batchMaxBytes()}: 1 MiB. */
    public static final long MIN_DEFAULT_BATCH_MAX_BYTES = 1L << 20;
    /** Largest {@link #batchMaxBytes()}: 1 TiB. */
    public static final long MAX_BATCH_MAX_BYTES = 1L << 40;
    /** Default {@link #pollInterval()}: 1 s. */
    public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofSeconds(1);
    /** Default {@link #leaseDuration()}: 30 s. */
    public static final Duration DEFAULT_LEASE_DURATION = Duration.ofSeconds(30);
    /** Default {@link #leaseRenewInterval()}: 10 s. */
    public static final Duration DEFAULT_LEASE_RENEW_INTERVAL = Duration.ofSeconds(10);
    /** Default {@link #errorBackoff()}: 1 s. */
    public static final Duration DEFAULT_ERROR_BACKOFF = Duration.ofSeconds(1);
    /** Default {@link #maxErrorBackoff()}: 30 s. */
    public static final Duration DEFAULT_MAX_ERROR_BACKOFF = Duration.ofSeconds(30);
    /** Default {@link #closeTimeout()}: 30 s. */
    public static final Duration DEFAULT_CLOSE_TIMEOUT = Duration.ofSeconds(30);
    /** Default {@link #storeConcurrency()}: 4 threads. */
    public static final int DEFAULT_STORE_CONCURRENCY = 4;
    /** Default {@link #prefetch()}: on. */
    public static final boolean DEFAULT_PREFETCH = true;
    /** Default {@link #backlogSampledByBucketZeroOwner()}: off, every relay samples. */
    public static final boolean DEFAULT_METRICS_BACKLOG_BUCKET_ZERO_OWNER = false;
    /** Default {@link #poisonPolicy()}: {@link PoisonPolicy#BLOCK}. */
    public static final PoisonPolicy DEFAULT_POISON_POLICY = PoisonPolicy.BLOCK;
    /** Default {@link #poisonMaxAttempts()}: {@value}. */
    public static final int DEFAULT_POISON_MAX_ATTEMPTS = 5;
    /** Largest {@link #poisonMaxAttempts()}. */
    public static final int MAX_POISON_MAX_ATTEMPTS = 1000;

    /** Largest {@link #bucketCount()}. */
    public static final int MAX_BUCKET_COUNT = OutboxBucket.MAX_BUCKET_COUNT;
    /** Largest {@link #batchSize()}. */
    public static final int MAX_BATCH_SIZE = 100_000;
    /** Largest {@link #storeConcurrency()}. */
    public static final int MAX_STORE_CONCURRENCY = 256;
    /** Longest duration any option accepts: one day. */
    public static final Duration MAX_DURATION = Duration.ofDays(1);

    private static final long MAX_MS = MAX_DURATION.toMillis();
    private static final ConfigDef CONFIG_DEF = new ConfigDef()
            .define(RELAY_ID_CONFIG, ConfigDef.Type.STRING, null, OptionRange.relayId(), ConfigDef.Importance.HIGH,
                    "This relay's id, unique among the relays sharing a store: 1 to 128 characters, not blank, no "
                            + "control characters. Default: host name, process id and a random suffix.")
            .define(BUCKET_COUNT_CONFIG, ConfigDef.Type.INT, DEFAULT_BUCKET_COUNT,
                    OptionRange.count(1, MAX_BUCKET_COUNT, ""), ConfigDef.Importance.HIGH,
                    "The number of ordering buckets. Must be the same on every writer and relay of a store; "
                            + "equal to the topic's partition count, a bucket is a partition.")
            .define(BATCH_SIZE_CONFIG, ConfigDef.Type.INT, DEFAULT_BATCH_SIZE,
                    OptionRange.count(1, MAX_BATCH_SIZE, " messages"), ConfigDef.Importance.MEDIUM,
                    "The most messages read and published per bucket per sweep.")
            .define(BATCH_MAX_BYTES_CONFIG, ConfigDef.Type.LONG, null,
                    OptionRange.bytes(1, MAX_BATCH_MAX_BYTES, true), ConfigDef.Importance.MEDIUM,
                    "The most message bytes (key, value and headers as stored) read per batch; a message larger "
                            + "than this is read and published alone. Default: a quarter of the maximum heap "
                            + "divided by the batches the relay may hold at once (" + BUCKET_COUNT_CONFIG
                            + ", twice that with " + PREFETCH_CONFIG + "), at least 1 MiB.")
            .define(POLL_INTERVAL_MS_CONFIG, ConfigDef.Type.LONG, DEFAULT_POLL_INTERVAL.toMillis(),
                    OptionRange.millis(1, MAX_MS, false), ConfigDef.Importance.MEDIUM,
                    "How often, in milliseconds, the relay looks for pending messages without a wake-up.")
            .define(LEASE_DURATION_MS_CONFIG, ConfigDef.Type.LONG, DEFAULT_LEASE_DURATION.toMillis(),
                    OptionRange.millis(2, MAX_MS, false), ConfigDef.Importance.MEDIUM,
                    "How long, in milliseconds, a bucket lease lasts after the call that granted or renewed it; "
                            + "a dead relay's buckets are taken over after this long. More than "
                            + LEASE_RENEW_INTERVAL_MS_CONFIG + ".")
            .define(LEASE_RENEW_INTERVAL_MS_CONFIG, ConfigDef.Type.LONG, DEFAULT_LEASE_RENEW_INTERVAL.toMillis(),
                    OptionRange.millis(1, MAX_MS, false), ConfigDef.Importance.MEDIUM,
                    "How often, in milliseconds, the relay renews its leases and rebalances buckets, also "
                            + "while a publish is in flight. Less than " + LEASE_DURATION_MS_CONFIG + ".")
            .define(ERROR_BACKOFF_MS_CONFIG, ConfigDef.Type.LONG, DEFAULT_ERROR_BACKOFF.toMillis(),
                    OptionRange.millis(1, MAX_MS, false), ConfigDef.Importance.LOW,
                    "The first wait, in milliseconds, after a failed publish or store call; doubled after "
                            + "each further failure in a row, up to " + ERROR_BACKOFF_MAX_MS_CONFIG + ".")
            .define(ERROR_BACKOFF_MAX_MS_CONFIG, ConfigDef.Type.LONG, DEFAULT_MAX_ERROR_BACKOFF.toMillis(),
                    OptionRange.millis(1, MAX_MS, false), ConfigDef.Importance.LOW,
                    "The longest wait, in milliseconds, after failures in a row. At least "
                            + ERROR_BACKOFF_MS_CONFIG + ".")
            .define(MAX_PUBLISH_DURATION_MS_CONFIG, ConfigDef.Type.LONG, null, OptionRange.millis(1, MAX_MS, true),
                    ConfigDef.Importance.MEDIUM,
                    "The longest one publish call may take, in milliseconds, whole batch included. Required, "
                            + "and only used, when the store cannot renew leases during a publish; plus "
                            + LEASE_RENEW_INTERVAL_MS_CONFIG + " it must be less than " + LEASE_DURATION_MS_CONFIG
                            + ". A publish taking longer stops the relay.")
            .define(CLOSE_TIMEOUT_MS_CONFIG, ConfigDef.Type.LONG, DEFAULT_CLOSE_TIMEOUT.toMillis(),
                    OptionRange.millis(0, MAX_MS, false), ConfigDef.Importance.LOW,
                    "How long, in milliseconds, close() waits for an in-flight publish to finish.")
            .define(STORE_CONCURRENCY_CONFIG, ConfigDef.Type.INT, DEFAULT_STORE_CONCURRENCY,
                    OptionRange.count(1, MAX_STORE_CONCURRENCY, " threads"), ConfigDef.Importance.MEDIUM,
                    "The number of threads making store calls for the owned buckets: reading batches and "
                            + "deleting acknowledged prefixes. Publishes are asynchronous and hold no thread, so up "
                            + "to one batch per owned bucket can be in flight to Kafka whatever this number; a bucket "
                            + "never has two. Each thread uses one store connection at a time: give a pooled store "
                            + "(JDBC pool.size) at least store.concurrency + 2 connections (lease calls, renewal); "
                            + "fewer only makes store calls wait for a connection. 1 makes the store calls one at a "
                            + "time.")
            .define(POISON_POLICY_CONFIG, ConfigDef.Type.STRING, DEFAULT_POISON_POLICY.configName(),
                    OptionRange.choice("block", "dead-letter"), ConfigDef.Importance.MEDIUM,
                    "What happens to a message that fails for a reason of its own (too large for Kafka, an "
                            + "invalid topic or partition, a row the store cannot decode; never a broker outage). "
                            + "block: its bucket waits behind it, attempts counted, a WARN at most once a minute. "
                            + "dead-letter: after " + POISON_MAX_ATTEMPTS_CONFIG + " such failures it is moved to "
                            + "the store's dead letters and its bucket goes on (the key's later messages are then "
                            + "delivered before it); needs a store with dead letters (capability C4).")
            .define(POISON_MAX_ATTEMPTS_CONFIG, ConfigDef.Type.INT, DEFAULT_POISON_MAX_ATTEMPTS,
                    OptionRange.count(1, MAX_POISON_MAX_ATTEMPTS, " failures"), ConfigDef.Importance.MEDIUM,
                    "With " + POISON_POLICY_CONFIG + "=dead-letter: how many message-specific failures in a row "
                            + "move a message to the dead letters.")
            .define(PREFETCH_CONFIG, ConfigDef.Type.BOOLEAN, DEFAULT_PREFETCH, OptionRange.bool(),
                    ConfigDef.Importance.LOW,
                    "Whether a bucket's next batch is read while its batch in flight is being published, so "
                            + "that store time and publish time overlap. Only with a store that can read ahead "
                            + "(capability C5); nothing is deleted before its acknowledgement, and a batch read "
                            + "ahead of a failed publish is discarded and read again.")
            .define(METRICS_BACKLOG_BUCKET_ZERO_OWNER_CONFIG, ConfigDef.Type.BOOLEAN,
                    DEFAULT_METRICS_BACKLOG_BUCKET_ZERO_OWNER, OptionRange.bool(), ConfigDef.Importance.LOW,
                    "Whether only the relay that owns bucket 0 samples the store's backlog for its metrics (rule "
                            + "O4), so that a fleet runs one count query instead of one per relay; the others "
                            + "report outbox.relay.pending.available 0. Needs a store with capability C2.");

    private final String relayId;
    private final int bucketCount;
    private final int batchSize;
    private final Long configuredBatchMaxBytes;
    private final long batchMaxBytes;
    private final Duration pollInterval;
    private final Duration leaseDuration;
    private final Duration leaseRenewInterval;
    private final Duration errorBackoff;
    private final Duration maxErrorBackoff;
    private final Duration maxPublishDuration;
    private final Duration closeTimeout;
    private final int storeConcurrency;
    private final PoisonPolicy poisonPolicy;
    private final int poisonMaxAttempts;
    private final boolean prefetch;
    private final boolean backlogSampledByBucketZeroOwner;

    private RelayOptions(Builder b) {
        // R10: every value against its range in the one definition, in definition order.
        Map<String, Object> values = new LinkedHashMap<>();
        values.put(RELAY_ID_CONFIG, b.relayId);
        values.put(BUCKET_COUNT_CONFIG, b.bucketCount);
        values.put(BATCH_SIZE_CONFIG, b.batchSize);
        values.put(BATCH_MAX_BYTES_CONFIG, b.batchMaxBytes);
        values.put(POLL_INTERVAL_MS_CONFIG, b.pollInterval);
        values.put(LEASE_DURATION_MS_CONFIG, b.leaseDuration);
        values.put(LEASE_RENEW_INTERVAL_MS_CONFIG, b.leaseRenewInterval);
        values.put(ERROR_BACKOFF_MS_CONFIG, b.errorBackoff);
        values.put(ERROR_BACKOFF_MAX_MS_CONFIG, b.maxErrorBackoff);
        values.put(MAX_PUBLISH_DURATION_MS_CONFIG, b.maxPublishDuration);
        values.put(CLOSE_TIMEOUT_MS_CONFIG, b.closeTimeout);
        values.put(STORE_CONCURRENCY_CONFIG, b.storeConcurrency);
        values.put(POISON_POLICY_CONFIG, b.poisonPolicy == null ? null : b.poisonPolicy.configName());
        values.put(POISON_MAX_ATTEMPTS_CONFIG, b.poisonMaxAttempts);
        values.put(PREFETCH_CONFIG, b.prefetch);
        values.put(METRICS_BACKLOG_BUCKET_ZERO_OWNER_CONFIG, b.backlogSampledByBucketZeroOwner);
        CONFIG_DEF.configKeys().forEach((key, definition) ->
                ((OptionRange) definition.validator).check(key, values.get(key)));
        this.relayId = b.relayId == null ? defaultRelayId() : b.relayId;
        this.bucketCount = b.bucketCount;
        this.batchSize = b.batchSize;
        this.pollInterval = b.pollInterval;
        this.leaseDuration = b.leaseDuration;
        this.leaseRenewInterval = b.leaseRenewInterval;
        this.errorBackoff = b.errorBackoff;
        this.maxErrorBackoff = b.maxErrorBackoff;
        this.maxPublishDuration = b.maxPublishDuration;
        this.closeTimeout = b.closeTimeout;
        this.storeConcurrency = b.storeConcurrency;
        this.poisonPolicy = b.poisonPolicy;
        this.poisonMaxAttempts = b.poisonMaxAttempts;
        this.prefetch = b.prefetch;
        this.configuredBatchMaxBytes = b.batchMaxBytes;
        this.batchMaxBytes = b.batchMaxBytes != null ? b.batchMaxBytes
                : defaultBatchMaxBytes(Runtime.getRuntime().maxMemory(), bucketCount, prefetch);
        this.backlogSampledByBucketZeroOwner = b.backlogSampledByBucketZeroOwner;
        if (leaseRenewInterval.toMillis() >= leaseDuration.toMillis()) {
            throw crossField(LEASE_RENEW_INTERVAL_MS_CONFIG + " (" + leaseRenewInterval.toMillis()
                    + ") must be less than " + LEASE_DURATION_MS_CONFIG + " (" + leaseDuration.toMillis() + ")");
        }
        if (maxErrorBackoff.toMillis() < errorBackoff.toMillis()) {
            throw crossField(ERROR_BACKOFF_MAX_MS_CONFIG + " (" + maxErrorBackoff.toMillis() + ") must be at least "
                    + ERROR_BACKOFF_MS_CONFIG + " (" + errorBackoff.toMillis() + ")");
        }
        if (maxPublishDuration != null
                && maxPublishDuration.toMillis() + leaseRenewInterval.toMillis() >= leaseDuration.toMillis()) {
            throw crossField(MAX_PUBLISH_DURATION_MS_CONFIG + " (" + maxPublishDuration.toMillis() + ") plus "
                    + LEASE_RENEW_INTERVAL_MS_CONFIG + " (" + leaseRenewInterval.toMillis() + ") must be less than "
                    + LEASE_DURATION_MS_CONFIG + " (" + leaseDuration.toMillis() + "), so that a publish that starts "
                    + "on a fresh lease ends before the lease does");
        }
    }

    /**
     * A builder holding every default and no relay id (one is generated at {@link Builder#build()}).
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Every default, with a newly generated relay id.
     *
     * @return the options
     */
    public static RelayOptions defaults() {
        return builder().build();
    }

    /**
     * Parses options from string settings with the keys of {@link #configDef()}; missing keys take
     * their defaults.
     *
     * @param properties the settings, for example {@code bucket.count=16}; not null
     * @return the options
     * @throws OutboxMisconfigurationException naming the key and the bad value when a key is
     *     unknown, a value does not parse, or a value or combination is out of range
     */
    public static RelayOptions fromProperties(Map<String, String> properties) {
        Objects.requireNonNull(properties, "properties must not be null");
        Set<String> unknown = new TreeSet<>(properties.keySet());
        unknown.removeAll(CONFIG_DEF.names());
        if (!unknown.isEmpty()) {
            throw new OutboxMisconfigurationException("unknown relay option(s) " + unknown + "; the relay accepts "
                    + new TreeSet<>(CONFIG_DEF.names()));
        }
        // Types only here: build() checks the ranges, so both ways in report a bad value alike.
        Map<String, Object> parsed = new LinkedHashMap<>();
        CONFIG_DEF.configKeys().forEach((key, definition) -> {
            String value = properties.get(key);
            try {
                parsed.put(key, value == null ? definition.defaultValue
                        : ConfigDef.parseType(key, value, definition.type));
            } catch (ConfigException e) {
                throw new OutboxMisconfigurationException("relay option " + key + " must be " + typeName(definition)
                        + " but was '" + value + "'", e);
            }
        });
        return builder()
                .relayId((String) parsed.get(RELAY_ID_CONFIG))
                .bucketCount((Integer) parsed.get(BUCKET_COUNT_CONFIG))
                .batchSize((Integer) parsed.get(BATCH_SIZE_CONFIG))
                .batchMaxBytes((Long) parsed.get(BATCH_MAX_BYTES_CONFIG))
                .pollInterval(millis(parsed, POLL_INTERVAL_MS_CONFIG))
                .leaseDuration(millis(parsed, LEASE_DURATION_MS_CONFIG))
                .leaseRenewInterval(millis(parsed, LEASE_RENEW_INTERVAL_MS_CONFIG))
                .errorBackoff(millis(parsed, ERROR_BACKOFF_MS_CONFIG))
                .maxErrorBackoff(millis(parsed, ERROR_BACKOFF_MAX_MS_CONFIG))
                .maxPublishDuration(millis(parsed, MAX_PUBLISH_DURATION_MS_CONFIG))
                .closeTimeout(millis(parsed, CLOSE_TIMEOUT_MS_CONFIG))
                .storeConcurrency((Integer) parsed.get(STORE_CONCURRENCY_CONFIG))
                .poisonPolicy(poisonPolicy((String) parsed.get(POISON_POLICY_CONFIG)))
                .poisonMaxAttempts((Integer) parsed.get(POISON_MAX_ATTEMPTS_CONFIG))
                .prefetch((Boolean) parsed.get(PREFETCH_CONFIG))
                .backlogSampledByBucketZeroOwner((Boolean) parsed.get(METRICS_BACKLOG_BUCKET_ZERO_OWNER_CONFIG))
                .build();
    }

    /** The policy by its configuration name; an unknown name is left to build() to report. */
    private static PoisonPolicy poisonPolicy(String name) {
        OptionRange range = (OptionRange) CONFIG_DEF.configKeys().get(POISON_POLICY_CONFIG).validator;
        range.check(POISON_POLICY_CONFIG, name);
        return PoisonPolicy.forName(name);
    }

    private static String typeName(ConfigDef.ConfigKey definition) {
        return switch (definition.type) {
            case INT -> "an int";
            case LONG -> definition.name.endsWith(".bytes") ? "a long (bytes)" : "a long (milliseconds)";
            case BOOLEAN -> "true or false";
            default -> "a " + definition.type.toString().toLowerCase(Locale.ROOT);
        };
    }

    private static Duration millis(Map<String, Object> parsed, String key) {
        Long value = (Long) parsed.get(key);
        return value == null ? null : Duration.ofMillis(value);
    }

    /**
     * Every option's key, type, default, valid range and documentation, for a {@code --help}
     * text ({@link ConfigDef#toRst()}) or a configuration UI.
     *
     * @return a new copy of the definition
     */
    public static ConfigDef configDef() {
        return new ConfigDef(CONFIG_DEF);
    }

    /**
     * A relay id unique to this call: the host name, the process id and eight random hex digits,
     * for example {@code web-7f9c-4711-3fa85f64}. The host name comes from the {@code HOSTNAME}
     * or {@code COMPUTERNAME} environment variable, else from the local address; characters other
     * than letters, digits, '.', '_' and '-' become '_'.
     *
     * @return a valid relay id of at most 100 characters
     */
    public static String defaultRelayId() {
        String host = System.getenv("HOSTNAME");
        if (host == null || host.isBlank()) {
            host = System.getenv("COMPUTERNAME");
        }
        if (host == null || host.isBlank()) {
            try {
                host = InetAddress.getLocalHost().getHostName();
            } catch (IOException | SecurityException e) {
                host = "host";
            }
        }
        host = host.replaceAll("[^A-Za-z0-9._-]", "_");
        if (host.length() > 64) {
            host = host.substring(0, 64);
        }
        byte[] random = new byte[4];
        ThreadLocalRandom.current().nextBytes(random);
        return host + "-" + ProcessHandle.current().pid() + "-" + HexFormat.of().formatHex(random);
    }

    /**
     * This relay's id; two relays sharing a store must never share an id.
     *
     * @return the id, valid for {@link LeaseRequest}
     */
    public String relayId() {
        return relayId;
    }

    /**
     * The number of buckets, the same on every writer and relay of a store.
     *
     * @return the bucket count, in {@code [1, 65536]}
     */
    public int bucketCount() {
        return bucketCount;
    }

    /**
     * The most messages read and published per bucket per sweep (R4).
     *
     * @return the batch size, in {@code [1, 100000]}
     */
    public int batchSize() {
        return batchSize;
    }

    /**
     * The most message bytes read per batch (S1): the relay passes it to
     * {@link io.outbox.spi.OutboxStore#nextBatch(int, int, long)}, which counts a message's key,
     * value and encoded headers ({@link io.outbox.spi.support.BatchBytes}) and returns a message
     * larger than this alone. Set, or else derived from the heap by
     * {@link #defaultBatchMaxBytes(long, int, boolean)} with {@link Runtime#maxMemory()}.
     *
     * @return the budget in bytes, in {@code [1, 2^40]}
     */
    public long batchMaxBytes() {
        return batchMaxBytes;
    }

    /**
     * The default {@link #batchMaxBytes()}: a quarter ({@link #DEFAULT_BATCH_HEAP_DIVISOR}) of the
     * maximum heap shared by the batches a relay may hold at once, one per owned bucket (at most
     * {@code bucketCount}) and twice that with {@code prefetch} (a batch in flight plus the one
     * read ahead), and at least {@link #MIN_DEFAULT_BATCH_MAX_BYTES}. For example 256 MiB of heap,
     * 8 buckets, prefetch on: 256 MiB / 4 / 16 = 4 MiB. Above about 64 buckets per relay the floor
     * may exceed that share; set {@value #BATCH_MAX_BYTES_CONFIG} then.
     *
     * @param maxHeapBytes the maximum heap, as {@link Runtime#maxMemory()} reports it ({@link Long#MAX_VALUE}
     *     when unlimited); {@code >= 0}
     * @param bucketCount the relay's bucket count, {@code >= 1}
     * @param prefetch whether batches are read ahead
     * @return the budget in bytes, in {@code [1 MiB, 1 TiB]}
     * @throws IllegalArgumentException if {@code maxHeapBytes < 0} or {@code bucketCount < 1}
     */
    public static long defaultBatchMaxBytes(long maxHeapBytes, int bucketCount, boolean prefetch) {
        if (maxHeapBytes < 0) {
            throw new IllegalArgumentException("maxHeapBytes must be >= 0 but was " + maxHeapBytes);
        }
        if (bucketCount < 1) {
            throw new IllegalArgumentException("bucketCount must be >= 1 but was " + bucketCount);
        }
        long batches = (long) bucketCount * (prefetch ? 2 : 1);
        long share = maxHeapBytes / DEFAULT_BATCH_HEAP_DIVISOR / batches;
        return Math.min(MAX_BATCH_MAX_BYTES, Math.max(MIN_DEFAULT_BATCH_MAX_BYTES, share));
    }

    /**
     * How often the relay looks for pending messages without a wake-up (R8).
     *
     * @return the interval, at least 1 ms
     */
    public Duration pollInterval() {
        return pollInterval;
    }

    /**
     * How long a lease lasts, counted from before the call that granted or renewed it (R1).
     *
     * @return the duration, at least 2 ms and more than {@link #leaseRenewInterval()}
     */
    public Duration leaseDuration() {
        return leaseDuration;
    }

    /**
     * How often leases are renewed and buckets rebalanced, also during a publish (R5).
     *
     * @return the interval, at least 1 ms and less than {@link #leaseDuration()}
     */
    public Duration leaseRenewInterval() {
        return leaseRenewInterval;
    }

    /**
     * The first wait after a failure; it doubles with each further failure in a row (R3).
     *
     * @return the backoff, at least 1 ms
     */
    public Duration errorBackoff() {
        return errorBackoff;
    }

    /**
     * The cap of the exponential error backoff (R3).
     *
     * @return the cap, at least {@link #errorBackoff()}
     */
    public Duration maxErrorBackoff() {
        return maxErrorBackoff;
    }

    /**
     * The longest one publish call may take, whole batch included; required, and only used, when
     * the store has no {@link io.outbox.spi.LeaseRenewal} (R5; its {@code leaseRenewal()} is empty).
     *
     * @return the budget, or null when not set
     */
    public Duration maxPublishDuration() {
        return maxPublishDuration;
    }

    /**
     * How long {@link OutboxRelay#close()} waits for an in-flight publish (R9).
     *
     * @return the timeout, at least 0
     */
    public Duration closeTimeout() {
        return closeTimeout;
    }

    /**
     * The number of threads making store calls for the owned buckets: reading batches and
     * deleting acknowledged prefixes. Publishes are asynchronous and hold no thread, so up to one
     * batch per owned bucket can be in flight whatever this number; a bucket never has two (R2).
     * A pooled store should have at least this many connections plus two (lease calls, renewal);
     * fewer only makes store calls wait for a connection.
     *
     * @return the thread count, in {@code [1, 256]}
     */
    public int storeConcurrency() {
        return storeConcurrency;
    }

    /**
     * What happens to a message that fails for a reason of its own (R12).
     *
     * @return the policy; default {@link PoisonPolicy#BLOCK}
     */
    public PoisonPolicy poisonPolicy() {
        return poisonPolicy;
    }

    /**
     * With {@link PoisonPolicy#DEAD_LETTER}: how many message-specific failures in a row move a
     * message to the dead letters (R12).
     *
     * @return the attempts, in {@code [1, 1000]}
     */
    public int poisonMaxAttempts() {
        return poisonMaxAttempts;
    }

    /**
     * Whether the relay reads a bucket's next batch while the batch before it is being published
     * (the pipelined drain). Only a store with capability C5 ({@link io.outbox.spi.ReadAhead}) reads
     * ahead; with any other store, or when off, a bucket is read, published and deleted one batch
     * at a time. Rules R1-R14 hold either way: a batch read ahead is published only after the
     * batch before it was acknowledged whole and deleted, and only while the lease has been held
     * without a break since it was read; after a failed publish it is discarded and read again.
     *
     * @return whether to read ahead; default {@value #DEFAULT_PREFETCH}
     */
    public boolean prefetch() {
        return prefetch;
    }

    /**
     * Whether only the relay that owns bucket 0 samples the store's backlog for
     * {@link MicrometerRelayMetrics} (rule O4): a fleet then runs one count query, and the other
     * relays report the backlog unavailable ({@code outbox.relay.pending.available} 0, NaN values).
     *
     * @return whether only the bucket-0 owner samples; default
     *     {@value #DEFAULT_METRICS_BACKLOG_BUCKET_ZERO_OWNER}
     */
    public boolean backlogSampledByBucketZeroOwner() {
        return backlogSampledByBucketZeroOwner;
    }

    /**
     * These options as string settings that {@link #fromProperties(Map)} reads back to equal
     * options; {@value #BATCH_MAX_BYTES_CONFIG} and {@value #MAX_PUBLISH_DURATION_MS_CONFIG} are left
     * out when not set (the budget is then derived from the heap of the process that reads them).
     *
     * @return the settings by key, in definition order; a new mutable map
     */
    public Map<String, String> toProperties() {
        Map<String, String> p = new LinkedHashMap<>();
        p.put(RELAY_ID_CONFIG, relayId);
        p.put(BUCKET_COUNT_CONFIG, Integer.toString(bucketCount));
        p.put(BATCH_SIZE_CONFIG, Integer.toString(batchSize));
        if (configuredBatchMaxBytes != null) {
            p.put(BATCH_MAX_BYTES_CONFIG, Long.toString(configuredBatchMaxBytes));
        }
        p.put(POLL_INTERVAL_MS_CONFIG, Long.toString(pollInterval.toMillis()));
        p.put(LEASE_DURATION_MS_CONFIG, Long.toString(leaseDuration.toMillis()));
        p.put(LEASE_RENEW_INTERVAL_MS_CONFIG, Long.toString(leaseRenewInterval.toMillis()));
        p.put(ERROR_BACKOFF_MS_CONFIG, Long.toString(errorBackoff.toMillis()));
        p.put(ERROR_BACKOFF_MAX_MS_CONFIG, Long.toString(maxErrorBackoff.toMillis()));
        if (maxPublishDuration != null) {
            p.put(MAX_PUBLISH_DURATION_MS_CONFIG, Long.toString(maxPublishDuration.toMillis()));
        }
        p.put(CLOSE_TIMEOUT_MS_CONFIG, Long.toString(closeTimeout.toMillis()));
        p.put(STORE_CONCURRENCY_CONFIG, Integer.toString(storeConcurrency));
        p.put(POISON_POLICY_CONFIG, poisonPolicy.configName());
        p.put(POISON_MAX_ATTEMPTS_CONFIG, Integer.toString(poisonMaxAttempts));
        p.put(PREFETCH_CONFIG, Boolean.toString(prefetch));
        p.put(METRICS_BACKLOG_BUCKET_ZERO_OWNER_CONFIG, Boolean.toString(backlogSampledByBucketZeroOwner));
        return p;
    }

    /**
     * A builder initialized with these options.
     *
     * @return a new builder holding every value of this instance, relay id included
     */
    public Builder toBuilder() {
        return builder().relayId(relayId).bucketCount(bucketCount).batchSize(batchSize)
                .batchMaxBytes(configuredBatchMaxBytes).pollInterval(pollInterval)
                .leaseDuration(leaseDuration).leaseRenewInterval(leaseRenewInterval).errorBackoff(errorBackoff)
                .maxErrorBackoff(maxErrorBackoff).maxPublishDuration(maxPublishDuration).closeTimeout(closeTimeout)
                .storeConcurrency(storeConcurrency).poisonPolicy(poisonPolicy).poisonMaxAttempts(poisonMaxAttempts)
                .prefetch(prefetch).backlogSampledByBucketZeroOwner(backlogSampledByBucketZeroOwner);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RelayOptions other && toProperties().equals(other.toProperties());
    }

    @Override
    public int hashCode() {
        return toProperties().hashCode();
    }

    /** Lists every option by key. */
    @Override
    public String toString() {
        return "RelayOptions" + toProperties();
    }

    private static Object defaultOf(String key) {
        return CONFIG_DEF.configKeys().get(key).defaultValue;
    }

    private static Duration defaultMillis(String key) {
        Long millis = (Long) defaultOf(key);
        return millis == null ? null : Duration.ofMillis(millis);
    }

    /**
     * A rule between options, stated with each option's value beside its key, for example
     * {@code lease.renew.interval.ms (10000) must be less than lease.duration.ms (5000)}.
     */
    private static OutboxMisconfigurationException crossField(String rule) {
        return new OutboxMisconfigurationException("relay options: " + rule);
    }

    /**
     * Collects options; {@link #build()} validates them all (R10). Not thread-safe.
     */
    public static final class Builder {

        private String relayId;
        private int bucketCount = (Integer) defaultOf(BUCKET_COUNT_CONFIG);
        private int batchSize = (Integer) defaultOf(BATCH_SIZE_CONFIG);
        private Long batchMaxBytes = (Long) defaultOf(BATCH_MAX_BYTES_CONFIG);
        private Duration pollInterval = defaultMillis(POLL_INTERVAL_MS_CONFIG);
        private Duration leaseDuration = defaultMillis(LEASE_DURATION_MS_CONFIG);
        private Duration leaseRenewInterval = defaultMillis(LEASE_RENEW_INTERVAL_MS_CONFIG);
        private Duration errorBackoff = defaultMillis(ERROR_BACKOFF_MS_CONFIG);
        private Duration maxErrorBackoff = defaultMillis(ERROR_BACKOFF_MAX_MS_CONFIG);
        private Duration maxPublishDuration = defaultMillis(MAX_PUBLISH_DURATION_MS_CONFIG);
        private Duration closeTimeout = defaultMillis(CLOSE_TIMEOUT_MS_CONFIG);
        private int storeConcurrency = (Integer) defaultOf(STORE_CONCURRENCY_CONFIG);
        private PoisonPolicy poisonPolicy = PoisonPolicy.forName((String) defaultOf(POISON_POLICY_CONFIG));
        private int poisonMaxAttempts = (Integer) defaultOf(POISON_MAX_ATTEMPTS_CONFIG);
        private boolean prefetch = (Boolean) defaultOf(PREFETCH_CONFIG);
        private boolean backlogSampledByBucketZeroOwner =
                (Boolean) defaultOf(METRICS_BACKLOG_BUCKET_ZERO_OWNER_CONFIG);

        private Builder() {
        }

        /**
         * Sets {@value #RELAY_ID_CONFIG}.
         *
         * @param relayId 1 to 128 characters, not blank, no control characters; null for a
         *     generated id ({@link #defaultRelayId()})
         * @return this builder
         */
        public Builder relayId(String relayId) {
            this.relayId = relayId;
            return this;
        }

        /**
         * Sets {@value #BUCKET_COUNT_CONFIG}.
         *
         * @param bucketCount in {@code [1, 65536]}; default 8
         * @return this builder
         */
        public Builder bucketCount(int bucketCount) {
            this.bucketCount = bucketCount;
            return this;
        }

        /**
         * Sets {@value #BATCH_SIZE_CONFIG}.
         *
         * @param batchSize messages per bucket per sweep, in {@code [1, 100000]}; default 500
         * @return this builder
         */
        public Builder batchSize(int batchSize) {
            this.batchSize = batchSize;
            return this;
        }

        /**
         * Sets {@value #BATCH_MAX_BYTES_CONFIG}.
         *
         * @param batchMaxBytes message bytes per batch, in {@code [1, 2^40]}; null (the default) to
         *     derive it from the heap ({@link #defaultBatchMaxBytes(long, int, boolean)})
         * @return this builder
         */
        public Builder batchMaxBytes(Long batchMaxBytes) {
            this.batchMaxBytes = batchMaxBytes;
            return this;
        }

        /**
         * Sets {@value #POLL_INTERVAL_MS_CONFIG}.
         *
         * @param pollInterval in {@code [1 ms, 1 day]}; default 1 s
         * @return this builder
         */
        public Builder pollInterval(Duration pollInterval) {
            this.pollInterval = pollInterval;
            return this;
        }

        /**
         * Sets {@value #LEASE_DURATION_MS_CONFIG}.
         *
         * @param leaseDuration in {@code [2 ms, 1 day]}, more than the renew interval; default 30 s
         * @return this builder
         */
        public Builder leaseDuration(Duration leaseDuration) {
            this.leaseDuration = leaseDuration;
            return this;
        }

        /**
         * Sets {@value #LEASE_RENEW_INTERVAL_MS_CONFIG}.
         *
         * @param leaseRenewInterval in {@code [1 ms, 1 day]}, less than the lease duration;
         *     default 10 s
         * @return this builder
         */
        public Builder leaseRenewInterval(Duration leaseRenewInterval) {
            this.leaseRenewInterval = leaseRenewInterval;
            return this;
        }

        /**
         * Sets {@value #ERROR_BACKOFF_MS_CONFIG}.
         *
         * @param errorBackoff in {@code [1 ms, 1 day]}; default 1 s
         * @return this builder
         */
        public Builder errorBackoff(Duration errorBackoff) {
            this.errorBackoff = errorBackoff;
            return this;
        }

        /**
         * Sets {@value #ERROR_BACKOFF_MAX_MS_CONFIG}.
         *
         * @param maxErrorBackoff in {@code [1 ms, 1 day]}, at least the error backoff; default 30 s
         * @return this builder
         */
        public Builder maxErrorBackoff(Duration maxErrorBackoff) {
            this.maxErrorBackoff = maxErrorBackoff;
            return this;
        }

        /**
         * Sets {@value #MAX_PUBLISH_DURATION_MS_CONFIG}.
         *
         * @param maxPublishDuration in {@code [1 ms, 1 day]}, and plus the renew interval less than
         *     the lease duration; null (the default) for none
         * @return this builder
         */
        public Builder maxPublishDuration(Duration maxPublishDuration) {
            this.maxPublishDuration = maxPublishDuration;
            return this;
        }

        /**
         * Sets {@value #CLOSE_TIMEOUT_MS_CONFIG}.
         *
         * @param closeTimeout in {@code [0, 1 day]}; default 30 s
         * @return this builder
         */
        public Builder closeTimeout(Duration closeTimeout) {
            this.closeTimeout = closeTimeout;
            return this;
        }

        /**
         * Sets {@value #STORE_CONCURRENCY_CONFIG}.
         *
         * @param storeConcurrency threads making store calls (batch reads, deletes), in
         *     {@code [1, 256]}; default 4
         * @return this builder
         */
        public Builder storeConcurrency(int storeConcurrency) {
            this.storeConcurrency = storeConcurrency;
            return this;
        }

        /**
         * Sets {@value #POISON_POLICY_CONFIG}.
         *
         * @param poisonPolicy not null; default {@link PoisonPolicy#BLOCK}
         * @return this builder
         */
        public Builder poisonPolicy(PoisonPolicy poisonPolicy) {
            this.poisonPolicy = poisonPolicy;
            return this;
        }

        /**
         * Sets {@value #POISON_MAX_ATTEMPTS_CONFIG}.
         *
         * @param poisonMaxAttempts in {@code [1, 1000]}; default {@value #DEFAULT_POISON_MAX_ATTEMPTS}
         * @return this builder
         */
        public Builder poisonMaxAttempts(int poisonMaxAttempts) {
            this.poisonMaxAttempts = poisonMaxAttempts;
            return this;
        }

        /**
         * Sets {@value #PREFETCH_CONFIG}.
         *
         * @param prefetch whether to read a bucket's next batch during the publish of the one before
         *     (needs a store with capability C5); default {@value #DEFAULT_PREFETCH}
         * @return this builder
         */
        public Builder prefetch(boolean prefetch) {
            this.prefetch = prefetch;
            return this;
        }

        /**
         * Sets {@value #METRICS_BACKLOG_BUCKET_ZERO_OWNER_CONFIG} (rule O4).
         *
         * @param bucketZeroOwnerOnly whether only the owner of bucket 0 samples the store's backlog;
         *     default {@value #DEFAULT_METRICS_BACKLOG_BUCKET_ZERO_OWNER}
         * @return this builder
         */
        public Builder backlogSampledByBucketZeroOwner(boolean bucketZeroOwnerOnly) {
            this.backlogSampledByBucketZeroOwner = bucketZeroOwnerOnly;
            return this;
        }

        /**
         * Validates every option and builds the options.
         *
         * @return the options
         * @throws OutboxMisconfigurationException naming the option (by its key) and the bad value:
         *     a value outside the range {@link #configDef()} states for it, or two values that
         *     contradict each other
         */
        public RelayOptions build() {
            return new RelayOptions(this);
        }
    }
}
