package io.outbox.spring;

import io.outbox.relay.OutboxRelay;
import io.outbox.relay.RelayOptions;
import io.outbox.spi.OutboxStore;
import java.time.Clock;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * Actuator support, when Spring Boot's health and endpoint modules are on the class path: the
 * {@code outbox} health indicator ({@link OutboxHealthIndicator}, with a periodic check of the
 * relay's broker where this application runs the relay) and the {@code outbox} endpoint
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
                                                    ObjectProvider<OutboxBrokerCheck> brokerCheck,
                                                    OutboxProperties properties) {
            return new OutboxHealthIndicator(store, relay.getIfAvailable(), monitor.getIfAvailable(),
                    properties.health().oldestPendingThreshold(), Clock.systemUTC(), brokerCheck.getIfAvailable());
        }

        /**
         * The periodic broker check behind the health where this application runs the relay; off with
         * {@code outbox.health.broker-check-enabled=false}.
         */
        @Bean
        @ConditionalOnBean(OutboxRelay.class)
        @ConditionalOnBooleanProperty(name = "outbox.health.broker-check-enabled", matchIfMissing = true)
        OutboxBrokerCheck outboxBrokerCheck(ObjectProvider<OutboxProducerSettings> settings,
                                            OutboxProperties properties) {
            return new OutboxBrokerCheck(OutboxAutoConfiguration.producerConfig(settings.getIfAvailable(), properties),
                    properties.health().brokerUnreachableThreshold(), Clock.systemUTC());
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
            OutboxRelay running = relay.getIfAvailable();
            return new OutboxEndpoint(store, running, monitor.getIfAvailable(), properties.bucketCount(),
                    running != null ? running.options().leaseDuration()
                            : properties.relay().leaseDuration() != null ? properties.relay().leaseDuration()
                            : RelayOptions.DEFAULT_LEASE_DURATION);
        }
    }
}
