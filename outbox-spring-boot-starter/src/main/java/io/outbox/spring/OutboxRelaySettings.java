package io.outbox.spring;

import io.outbox.relay.PoisonPolicy;
import io.outbox.relay.RelayOptions;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Turns {@link OutboxProperties} into {@link RelayOptions}, reporting a bad value under its
 * {@code outbox.*} property name rather than the relay's own option key (rule R10).
 */
final class OutboxRelaySettings {

    /** Relay option key to the starter's property, longest keys first so none hides another. */
    private static final Map<String, String> PROPERTY_NAMES = new LinkedHashMap<>();

    static {
        PROPERTY_NAMES.put(RelayOptions.MAX_PUBLISH_DURATION_MS_CONFIG, "outbox.relay.max-publish-duration");
        PROPERTY_NAMES.put(RelayOptions.LEASE_RENEW_INTERVAL_MS_CONFIG, "outbox.relay.lease-renew-interval");
        PROPERTY_NAMES.put(RelayOptions.ERROR_BACKOFF_MAX_MS_CONFIG, "outbox.relay.max-error-backoff");
        PROPERTY_NAMES.put(RelayOptions.LEASE_DURATION_MS_CONFIG, "outbox.relay.lease-duration");
        PROPERTY_NAMES.put(RelayOptions.POLL_INTERVAL_MS_CONFIG, "outbox.relay.poll-interval");
        PROPERTY_NAMES.put(RelayOptions.ERROR_BACKOFF_MS_CONFIG, "outbox.relay.error-backoff");
        PROPERTY_NAMES.put(RelayOptions.CLOSE_TIMEOUT_MS_CONFIG, "outbox.relay.close-timeout");
        PROPERTY_NAMES.put(RelayOptions.STORE_CONCURRENCY_CONFIG, "outbox.relay.store-concurrency");
        PROPERTY_NAMES.put(KafkaOutboxPublisher.MESSAGE_ID_HEADER_CONFIG, "outbox.relay.message-id-header");
        PROPERTY_NAMES.put(KafkaOutboxPublisher.TIME_IN_OUTBOX_SPAN_CONFIG, "outbox.tracing.time-in-outbox-span");
        PROPERTY_NAMES.put(RelayOptions.POISON_MAX_ATTEMPTS_CONFIG, "outbox.relay.poison-max-attempts");
        PROPERTY_NAMES.put(RelayOptions.POISON_POLICY_CONFIG, "outbox.relay.poison-policy");
        PROPERTY_NAMES.put(RelayOptions.PREFETCH_CONFIG, "outbox.relay.prefetch");
        PROPERTY_NAMES.put(RelayOptions.METRICS_BACKLOG_BUCKET_ZERO_OWNER_CONFIG,
                "outbox.relay.metrics-backlog-bucket0-owner-only");
        PROPERTY_NAMES.put(RelayOptions.BUCKET_COUNT_CONFIG, "outbox.bucket-count");
        PROPERTY_NAMES.put(RelayOptions.BATCH_MAX_BYTES_CONFIG, "outbox.relay.batch-max-bytes");
        PROPERTY_NAMES.put(RelayOptions.BATCH_SIZE_CONFIG, "outbox.relay.batch-size");
        PROPERTY_NAMES.put(RelayOptions.RELAY_ID_CONFIG, "outbox.relay.relay-id");
    }

    private OutboxRelaySettings() {
    }

    /**
     * Builds the relay options.
     *
     * @param properties the bound properties; not null
     * @return the options
     * @throws IllegalArgumentException naming the {@code outbox.*} property and its value when the
     *     relay refuses a value
     */
    static RelayOptions relayOptions(OutboxProperties properties) {
        OutboxProperties.Relay relay = properties.relay();
        try {
            RelayOptions.Builder builder = RelayOptions.builder().bucketCount(properties.bucketCount());
            set(relay.relayId(), builder::relayId);
            set(relay.batchSize(), builder::batchSize);
            set(relay.batchMaxBytes(), builder::batchMaxBytes);
            set(relay.pollInterval(), builder::pollInterval);
            set(relay.leaseDuration(), builder::leaseDuration);
            set(relay.leaseRenewInterval(), builder::leaseRenewInterval);
            set(relay.errorBackoff(), builder::errorBackoff);
            set(relay.maxErrorBackoff(), builder::maxErrorBackoff);
            set(relay.maxPublishDuration(), builder::maxPublishDuration);
            set(relay.closeTimeout(), builder::closeTimeout);
            set(relay.storeConcurrency(), builder::storeConcurrency);
            set(relay.poisonPolicy(), policy -> builder.poisonPolicy(policy == OutboxProperties.PoisonPolicy.DEAD_LETTER
                    ? PoisonPolicy.DEAD_LETTER : PoisonPolicy.BLOCK));
            set(relay.poisonMaxAttempts(), builder::poisonMaxAttempts);
            set(relay.prefetch(), builder::prefetch);
            set(relay.metricsBacklogBucket0OwnerOnly(), builder::backlogSampledByBucketZeroOwner);
            return builder.build();
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("Invalid outbox configuration: " + propertyNames(e.getMessage()), e);
        }
    }

    /** Passes a property's value on; an unset (null) property leaves the option's default. */
    private static <T> void set(T value, Consumer<T> option) {
        if (value != null) {
            option.accept(value);
        }
    }

    /**
     * The starter's property of each relay option and of each publisher option.
     *
     * @return {@code outbox.*} property name by option key; unmodifiable
     */
    static Map<String, String> properties() {
        return Collections.unmodifiableMap(PROPERTY_NAMES);
    }

    /**
     * Checks the bucket count the writer side uses, with the relay's range.
     *
     * @param bucketCount the value of {@code outbox.bucket-count}
     * @return the value
     * @throws IllegalArgumentException naming the property and the value if out of range
     */
    static int bucketCount(int bucketCount) {
        if (bucketCount < 1 || bucketCount > RelayOptions.MAX_BUCKET_COUNT) {
            throw new IllegalArgumentException("Invalid outbox configuration: outbox.bucket-count must be in [1, "
                    + RelayOptions.MAX_BUCKET_COUNT + "] but was " + bucketCount);
        }
        return bucketCount;
    }

    /**
     * Replaces relay option keys in a message with the starter's property names.
     *
     * @param message a relay error message; may be null
     * @return the message with property names
     */
    static String propertyNames(String message) {
        if (message == null) {
            return "";
        }
        String result = message.replace("relay option ", "");
        for (Map.Entry<String, String> e : PROPERTY_NAMES.entrySet()) {
            result = result.replace(e.getKey(), e.getValue());
        }
        return result;
    }
}
