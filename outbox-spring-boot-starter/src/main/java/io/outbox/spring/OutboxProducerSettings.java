package io.outbox.spring;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The Kafka producer settings the relay's publisher starts from, before {@code outbox.relay.producer.*}
 * and the relay's enforced settings (rule K1) are applied. The starter takes them from
 * {@code spring.kafka.*} (Spring Boot's {@code KafkaProperties}) when present; define a bean of this
 * type to supply them another way.
 *
 * @param config producer settings by Kafka key; not null; copied (null values dropped)
 */
public record OutboxProducerSettings(Map<String, Object> config) {

    /**
     * Copies the settings.
     *
     * @param config producer settings by Kafka key; not null
     */
    public OutboxProducerSettings {
        Objects.requireNonNull(config, "config must not be null");
        Map<String, Object> copy = new HashMap<>();
        config.forEach((k, v) -> {
            if (k != null && v != null) {
                copy.put(k, v);
            }
        });
        config = Map.copyOf(copy);
    }
}
