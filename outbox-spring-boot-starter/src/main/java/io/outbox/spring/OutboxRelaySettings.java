package io.outbox.spring;

import io.outbox.relay.RelayOptions;
import java.util.LinkedHashMap;
import java.util.Map;

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
        PROPERTY_NAMES.put(io.outbox.relay.KafkaOutboxPublisher.MESSAGE_ID_HEADER_CONFIG, "outbox.relay.message-id-header");
        PROPERTY_NAMES.put(RelayOptions.POISON_MAX_ATTEMPTS_CONFIG, "outbox.relay.poison-max-attempts");
        PROPERTY_NAMES.put(RelayOptions.POISON_POLICY_CONFIG, "outbox.relay.poison-policy");
        PROPERTY_NAMES.put(RelayOptions.PREFETCH_CONFIG, "outbox.relay.prefetch");
        PROPERTY_NAMES.put(RelayOptions.BUCKET_COUNT_CONFIG, "outbox.bucket-count");
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
            RelayOptions.Builder builder = RelayOptions.builder()
                    .bucketCount(properties.bucketCount())
                    .batchSize(relay.batchSize())
                    .pollInterval(relay.pollInterval())
                    .leaseDuration(relay.leaseDuration())
                    .leaseRenewInterval(relay.leaseRenewInterval())
                    .errorBackoff(relay.errorBackoff())
                    .maxErrorBackoff(relay.maxErrorBackoff())
                    .maxPublishDuration(relay.maxPublishDuration())
                    .closeTimeout(relay.closeTimeout())
                    .storeConcurrency(relay.storeConcurrency())
                    .poisonPolicy(relay.poisonPolicy() == OutboxProperties.PoisonPolicy.DEAD_LETTER
                            ? io.outbox.relay.PoisonPolicy.DEAD_LETTER : io.outbox.relay.PoisonPolicy.BLOCK)
                    .poisonMaxAttempts(relay.poisonMaxAttempts())
                    .prefetch(relay.prefetch());
            if (relay.relayId() != null) {
                builder.relayId(relay.relayId());
            }
            return builder.build();
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("Invalid outbox configuration: " + propertyNames(e.getMessage()), e);
        }
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
