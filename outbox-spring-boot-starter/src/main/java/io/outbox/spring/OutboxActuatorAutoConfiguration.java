package io.outbox.spring;

import io.outbox.relay.OutboxRelay;
import io.outbox.spi.OutboxStore;
import java.time.Clock;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * Actuator support, when Spring Boot's health and endpoint modules are on the class path: the
 * {@code outbox} health indicator ({@link OutboxHealthIndicator}) and the {@code outbox} endpoint
 * ({@link OutboxEndpoint}). Each backs off when the application defines its own.
 */
@AutoConfiguration(after = OutboxAutoConfiguration.class)
@ConditionalOnBean(OutboxStore.class)
@Import({OutboxActuatorAutoConfiguration.HealthConfiguration.class,
        OutboxActuatorAutoConfiguration.EndpointConfiguration.class})
public class OutboxActuatorAutoConfiguration {

    /** Created by Spring. */
    public OutboxActuatorAutoConfiguration() {
    }

    /** The health indicator. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
    static class HealthConfiguration {

        @Bean
        @ConditionalOnMissingBean
        OutboxHealthIndicator outboxHealthIndicator(OutboxStore store, ObjectProvider<OutboxRelay> relay,
                                                    ObjectProvider<OutboxRelayMonitor> monitor,
                                                    OutboxProperties properties) {
            return new OutboxHealthIndicator(store, relay.getIfAvailable(), monitor.getIfAvailable(),
                    properties.health().oldestPendingThreshold(), Clock.systemUTC());
        }
    }

    /** The endpoint. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.actuate.endpoint.annotation.Endpoint")
    static class EndpointConfiguration {

        @Bean
        @ConditionalOnMissingBean
        OutboxEndpoint outboxEndpoint(OutboxStore store, ObjectProvider<OutboxRelay> relay,
                                      ObjectProvider<OutboxRelayMonitor> monitor, OutboxProperties properties) {
            return new OutboxEndpoint(store, relay.getIfAvailable(), monitor.getIfAvailable(),
                    properties.bucketCount());
        }
    }
}
