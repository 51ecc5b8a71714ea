package io.outbox.spring;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.opentelemetry.api.OpenTelemetry;
import io.outbox.OutboxCommitNotifier;
import io.outbox.OutboxTracing;
import io.outbox.notify.NotificationTransport;
import io.outbox.notify.NotificationTransports;
import io.outbox.notify.OutboxNotifier;
import io.outbox.relay.MicrometerRelayMetrics;
import io.outbox.relay.OutboxPublisher;
import io.outbox.relay.OutboxRelay;
import io.outbox.relay.RelayListener;
import io.outbox.relay.RelayOptions;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.spi.OutboxStore;
import io.outbox.store.jdbc.JdbcOutboxStore;
import io.outbox.store.mongodb.MongoOutboxStore;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.kafka.autoconfigure.KafkaProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.data.mongodb.MongoDatabaseFactory;

/**
 * Auto-configuration of the outbox on the store the store auto-configurations built
 * ({@link OutboxJdbcStoreAutoConfiguration}, {@link OutboxMongoStoreAutoConfiguration},
 * {@link OutboxDynamoDbStoreAutoConfiguration}): the transactional {@link Outbox} (JDBC), the relay with its Kafka
 * publisher as a {@link OutboxRelayLifecycle}, Micrometer meters when a {@code MeterRegistry}
 * exists, and the {@link OutboxTracing} both use, on the application's {@link OpenTelemetry} bean
 * when there is one. Every bean backs off when the application defines one of the same type.
 */
@AutoConfiguration(after = OutboxDynamoDbStoreAutoConfiguration.class, afterName = {
        "org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration",
        "org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration",
        "org.springframework.boot.data.mongodb.autoconfigure.DataMongoAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
        "org.springframework.boot.opentelemetry.autoconfigure.OpenTelemetrySdkAutoConfiguration"})
@EnableConfigurationProperties(OutboxProperties.class)
@Import({OutboxAutoConfiguration.JdbcOutboxConfiguration.class,
        OutboxAutoConfiguration.MongoOutboxConfiguration.class,
        OutboxAutoConfiguration.RelayConfiguration.class})
public class OutboxAutoConfiguration {

    /** The bean name of the {@link OutboxProducerSettings} taken from {@code spring.kafka.*}. */
    static final String PRODUCER_SETTINGS = "outboxProducerSettings";

    /** Created by Spring. */
    public OutboxAutoConfiguration() {
    }

    /**
     * Where enqueue takes the trace context it stores with each message and where the relay's
     * spans go (rules O1, O2): the application's {@link OpenTelemetry} bean when the context has
     * exactly one (Spring Boot's OpenTelemetry SDK, which the Micrometer Tracing OpenTelemetry
     * bridge also runs on, or the application's own), otherwise {@link OutboxTracing#global()};
     * {@link OutboxTracing#disabled()} with {@code outbox.tracing.enabled=false}.
     *
     * @param properties the bound properties
     * @param openTelemetry the application's OpenTelemetry, if any
     * @return the setting
     */
    @Bean
    @ConditionalOnMissingBean
    OutboxTracing outboxTracing(OutboxProperties properties, ObjectProvider<OpenTelemetry> openTelemetry) {
        if (!properties.tracing().enabled()) {
            return OutboxTracing.disabled();
        }
        OpenTelemetry application = openTelemetry.getIfUnique();
        return application == null ? OutboxTracing.global() : OutboxTracing.using(application);
    }

    /**
     * The cross-process notification transport named by {@code outbox.notify.transport} (rule N5).
     *
     * @param properties the bound properties
     * @return the transport; closed with the context after the notifier
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    @ConditionalOnProperty(prefix = "outbox.notify", name = "transport")
    NotificationTransport outboxNotificationTransport(OutboxProperties properties) {
        return NotificationTransports.open(properties.notifications().transport(), properties.notifications().settings());
    }

    /**
     * Turns commits into wake-ups (rules N1-N6): this application's relay at once, and with a
     * {@link NotificationTransport} bean, the relays of other processes through it.
     *
     * @param relay the relay, if this application runs one
     * @param transport the transport, if one is defined
     * @return the notifier; closed with the context before the relay and the transport
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(OutboxCommitNotifier.class)
    @ConditionalOnBean(OutboxStore.class)
    OutboxNotifier outboxNotifier(ObjectProvider<OutboxRelay> relay, ObjectProvider<NotificationTransport> transport) {
        OutboxNotifier.Builder builder = OutboxNotifier.builder();
        relay.ifAvailable(builder::relay);
        transport.ifAvailable(builder::transport);
        return builder.build();
    }

    /**
     * The producer settings handed to the publisher, before it enforces its own (rule K1):
     * {@code spring.kafka.*} (without its serializers: the relay sends bytes), then
     * {@code outbox.relay.producer.*} on top.
     *
     * @param fromSpring settings from {@code spring.kafka.*}, or null
     * @param properties the bound properties
     * @return a new mutable map
     */
    static Map<String, Object> producerConfig(OutboxProducerSettings fromSpring, OutboxProperties properties) {
        Map<String, Object> config = new HashMap<>();
        if (fromSpring != null) {
            config.putAll(fromSpring.config());
        }
        config.remove(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG);
        config.remove(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG);
        config.putAll(properties.relay().producer());
        return config;
    }

    /** The transactional {@link Outbox} on the JDBC store and Spring's JDBC transaction support. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.jdbc.datasource.DataSourceUtils",
            value = JdbcOutboxStore.class)
    static class JdbcOutboxConfiguration {

        @Bean
        @ConditionalOnMissingBean(Outbox.class)
        @ConditionalOnBean(JdbcOutboxStore.class)
        Outbox outbox(JdbcOutboxStore store, OutboxProperties properties, OutboxCommitNotifier notifier,
                      OutboxTracing tracing) {
            return new JdbcTransactionalOutbox(store.dataSource(), store.writer(), properties.bucketCount(),
                    notifier, tracing);
        }
    }

    /**
     * The transactional {@link Outbox} on the MongoDB store, joining transactions of Spring Data
     * MongoDB's {@code MongoTransactionManager}.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = {"org.springframework.data.mongodb.MongoTransactionManager",
            "io.outbox.store.mongodb.MongoOutboxStore"})
    static class MongoOutboxConfiguration {

        @Bean
        @ConditionalOnMissingBean(Outbox.class)
        @ConditionalOnBean(type = {"io.outbox.store.mongodb.MongoOutboxStore",
                "org.springframework.data.mongodb.MongoDatabaseFactory"})
        Outbox outbox(MongoOutboxStore store,
                      MongoDatabaseFactory factory, OutboxProperties properties,
                      OutboxCommitNotifier notifier, OutboxTracing tracing) {
            return new MongoTransactionalOutbox(factory, store.writer(), properties.bucketCount(), notifier,
                    tracing);
        }
    }

    /** The relay, its publisher, its lifecycle and its meters; off with {@code outbox.relay.enabled=false}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBooleanProperty(name = "outbox.relay.enabled", matchIfMissing = true)
    @ConditionalOnBean(OutboxStore.class)
    @Import({KafkaProducerSettingsConfiguration.class, MetricsConfiguration.class})
    static class RelayConfiguration {

        @Bean
        @ConditionalOnMissingBean
        RelayOptions outboxRelayOptions(OutboxProperties properties) {
            return OutboxRelaySettings.relayOptions(properties);
        }

        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean(OutboxPublisher.class)
        KafkaOutboxPublisher outboxPublisher(OutboxProperties properties, RelayOptions options,
                                             ObjectProvider<OutboxProducerSettings> settings, OutboxTracing tracing) {
            Map<String, Object> config = producerConfig(settings.getIfAvailable(), properties);
            KafkaOutboxPublisher.Builder publisher = KafkaOutboxPublisher.builder(config).tracing(tracing);
            if (properties.relay().messageIdHeader() != null) {
                publisher.messageIdHeader(properties.relay().messageIdHeader());
            }
            if (properties.tracing().timeInOutboxSpan() != null) {
                publisher.tracingTimeInOutboxSpan(properties.tracing().timeInOutboxSpan());
            }
            return publisher.build();
        }

        @Bean
        @ConditionalOnMissingBean
        OutboxRelayMonitor outboxRelayMonitor() {
            return new OutboxRelayMonitor();
        }

        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean
        OutboxRelay outboxRelay(OutboxStore store, OutboxPublisher publisher, RelayOptions options,
                                ObjectProvider<RelayListener> listeners) {
            OutboxRelay.Builder builder = OutboxRelay.builder(store, publisher).options(options);
            listeners.orderedStream().forEach(builder::listener);
            return builder.build();
        }

        @Bean
        @ConditionalOnMissingBean
        OutboxRelayLifecycle outboxRelayLifecycle(OutboxRelay relay, OutboxProperties properties) {
            return new OutboxRelayLifecycle(relay, properties.relay().startTimeout());
        }
    }

    /** Producer settings from {@code spring.kafka.*} when Spring Boot's Kafka support is present. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(KafkaProperties.class)
    static class KafkaProducerSettingsConfiguration {

        @Bean(PRODUCER_SETTINGS)
        @ConditionalOnMissingBean
        @ConditionalOnBean(KafkaProperties.class)
        OutboxProducerSettings outboxProducerSettings(KafkaProperties kafka) {
            return new OutboxProducerSettings(kafka.buildProducerProperties());
        }
    }

    /** Relay meters in the application's {@code MeterRegistry}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    static class MetricsConfiguration {

        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean
        @ConditionalOnBean(MeterRegistry.class)
        MicrometerRelayMetrics outboxRelayMetrics(MeterRegistry registry, OutboxStore store) {
            return store.pendingMetrics()
                    .map(backlog -> new MicrometerRelayMetrics(registry, Tags.empty(), backlog, Duration.ofSeconds(10)))
                    .orElseGet(() -> new MicrometerRelayMetrics(registry, List.of()));
        }
    }
}
