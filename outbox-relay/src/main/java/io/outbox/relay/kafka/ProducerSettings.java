package io.outbox.relay.kafka;

import io.outbox.spi.OutboxMisconfigurationException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Predicate;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The producer settings the Kafka publisher enforces on top of the user's (rule K1), and the
 * defaults it applies where the user set nothing. Immutable; computed on the thread that builds the
 * publisher.
 *
 * @param config the effective producer configuration; immutable
 * @param overrides one line per user setting that was replaced or removed, naming the setting,
 *     the user's value and the enforced one; immutable
 */
record ProducerSettings(Map<String, Object> config, List<String> overrides) {

    /** Kafka's own limit for ordered, idempotent delivery. */
    static final int MAX_IN_FLIGHT = 5;

    /** Default for {@code max.block.ms} when the user did not set it: 10 s instead of Kafka's 60 s. */
    static final long DEFAULT_MAX_BLOCK_MS = 10_000;

    ProducerSettings {
        config = Map.copyOf(config);
        overrides = List.copyOf(overrides);
    }

    static ProducerSettings enforce(Map<String, ?> userConfig) {
        Objects.requireNonNull(userConfig, "producerConfig must not be null");
        Map<String, Object> config = new LinkedHashMap<>();
        userConfig.forEach((key, value) -> {
            if (value != null) {
                config.put(Objects.requireNonNull(key, "producerConfig must not contain a null key"), value);
            }
        });
        List<String> overrides = new ArrayList<>();
        String byteArray = ByteArraySerializer.class.getName();
        require(config, overrides, ProducerConfig.ACKS_CONFIG, "all", v -> v.equalsIgnoreCase("all") || v.equals("-1"),
                "prefix deletion needs acknowledgement by every in-sync replica");
        require(config, overrides, ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true", "true"::equalsIgnoreCase,
                "retries must not reorder or duplicate records within a batch");
        require(config, overrides, ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, byteArray, byteArray::equals,
                "keys are stored serialized");
        require(config, overrides, ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, byteArray, byteArray::equals,
                "values are stored serialized");
        require(config, overrides, ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION,
                Integer.toString(MAX_IN_FLIGHT), ProducerSettings::atMostMaxInFlight,
                "more than 5 in-flight requests can reorder records");
        require(config, overrides, ProducerConfig.PARTITIONER_IGNORE_KEYS_CONFIG, "false", "false"::equalsIgnoreCase,
                "equal keys must go to one partition");
        remove(config, overrides, ProducerConfig.PARTITIONER_CLASS_CONFIG,
                "Kafka's built-in key hashing is the placement the buckets are computed with");
        remove(config, overrides, ProducerConfig.TRANSACTIONAL_ID_CONFIG,
                "the publisher does not use Kafka transactions");
        config.putIfAbsent(ProducerConfig.MAX_BLOCK_MS_CONFIG, DEFAULT_MAX_BLOCK_MS);
        return new ProducerSettings(config, overrides);
    }

    /**
     * Fails naming the setting when {@code config} is not valid producer configuration.
     *
     * @throws OutboxMisconfigurationException naming the setting and the value
     */
    static void validate(Map<String, Object> config) {
        try {
            new ProducerConfig(config);
        } catch (ConfigException e) {
            throw new OutboxMisconfigurationException("invalid Kafka producer setting: " + e.getMessage(), e);
        }
    }

    /**
     * The {@code max.block.ms} of effective settings, in milliseconds; {@link #DEFAULT_MAX_BLOCK_MS}
     * when it is not a number.
     */
    static long maxBlockMillis(Map<String, Object> config) {
        try {
            return Long.parseLong(String.valueOf(config.get(ProducerConfig.MAX_BLOCK_MS_CONFIG)).trim());
        } catch (NumberFormatException e) {
            return DEFAULT_MAX_BLOCK_MS;
        }
    }

    private static void require(Map<String, Object> config, List<String> overrides, String key, String enforced,
                                Predicate<String> acceptable, String reason) {
        Object user = config.get(key);
        if (user != null && acceptable.test(normalize(user))) {
            return;
        }
        if (user != null) {
            overrides.add(key + "=" + normalize(user) + " replaced with " + enforced + " (" + reason + ")");
        }
        config.put(key, enforced);
    }

    private static void remove(Map<String, Object> config, List<String> overrides, String key, String reason) {
        Object user = config.remove(key);
        if (user != null) {
            overrides.add(key + "=" + normalize(user) + " removed (" + reason + ")");
        }
    }

    private static boolean atMostMaxInFlight(String value) {
        try {
            return Integer.parseInt(value) <= MAX_IN_FLIGHT;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    private static String normalize(Object value) {
        return (value instanceof Class<?> type ? type.getName() : String.valueOf(value)).trim();
    }
}
