package io.outbox.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.outbox.OutboxHeader;
import io.outbox.OutboxMessage;
import io.outbox.OutboxTracing;
import io.outbox.relay.MicrometerRelayMetrics;
import io.outbox.relay.OutboxPublisher;
import io.outbox.relay.OutboxRelay;
import io.outbox.relay.RelayMeter;
import io.outbox.relay.RelayOptions;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.spi.OutboxStore;
import io.outbox.store.dynamodb.DynamoDbOutboxStore;
import io.outbox.store.jdbc.JdbcOutboxStore;
import io.outbox.store.mongodb.MongoOutboxStore;
import io.outbox.tck.InMemoryOutboxStore;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The beans the starter defines per class path and properties, their back-off, and the errors for
 * bad properties (rule R10).
 */
class OutboxAutoConfigurationTest {

    static MongoServer mongo;
    static String mongoUri;

    @BeforeAll
    static void startMongo() {
        mongo = new MongoServer(new MemoryBackend());
        InetSocketAddress address = mongo.bind();
        mongoUri = "mongodb://127.0.0.1:" + address.getPort();
    }

    @AfterAll
    static void stopMongo() {
        mongo.shutdownNow();
    }

    /** Without Spring Boot's DataSource auto-configuration (which would start an embedded H2). */
    static ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(OutboxJdbcStoreAutoConfiguration.class,
                        OutboxMongoStoreAutoConfiguration.class, OutboxDynamoDbStoreAutoConfiguration.class,
                        OutboxAutoConfiguration.class,
                        OutboxActuatorAutoConfiguration.class))
                // No broker in these tests: the producer connects lazily and is never used.
                .withPropertyValues("outbox.relay.producer.bootstrap.servers=127.0.0.1:9",
                        "outbox.create-schema=true");
    }

    static ApplicationContextRunner jdbc() {
        return runner().withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                        DataSourceTransactionManagerAutoConfiguration.class)).withPropertyValues(
                "spring.datasource.url=jdbc:h2:mem:ctx" + UUID.randomUUID().toString().replace("-", "")
                        + ";DB_CLOSE_DELAY=-1");
    }

    @Test
    void jdbcDataSource_givesJdbcStoreOutboxRelayLifecycleHealthAndEndpoint() {
        jdbc().run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).hasSingleBean(JdbcOutboxStore.class);
            assertThat(context).hasSingleBean(Outbox.class);
            assertThat(context.getBean(Outbox.class)).isInstanceOf(JdbcTransactionalOutbox.class);
            assertThat(context).hasSingleBean(KafkaOutboxPublisher.class);
            assertThat(context).hasSingleBean(OutboxRelay.class);
            assertThat(context).hasSingleBean(OutboxRelayLifecycle.class);
            assertThat(context).hasSingleBean(OutboxHealthIndicator.class);
            assertThat(context).hasSingleBean(OutboxEndpoint.class);
            assertThat(context).doesNotHaveBean(MicrometerRelayMetrics.class);
            assertThat(context.getBean(OutboxRelayLifecycle.class).isRunning()).isTrue();
            assertThat(context.getBean(RelayOptions.class).bucketCount()).isEqualTo(RelayOptions.DEFAULT_BUCKET_COUNT);
        });
    }

    @Test
    void r10_relayPropertiesReachRelayOptions() {
        jdbc().withPropertyValues("outbox.bucket-count=16", "outbox.relay.batch-size=50",
                        "outbox.relay.poll-interval=250ms", "outbox.relay.lease-duration=20s",
                        "outbox.relay.lease-renew-interval=5s", "outbox.relay.relay-id=orders-relay-1",
                        "outbox.relay.store-concurrency=2", "outbox.relay.close-timeout=3s",
                        "outbox.relay.prefetch=false", "outbox.relay.batch-max-bytes=8388608")
                .run(context -> {
                    RelayOptions options = context.getBean(RelayOptions.class);
                    assertThat(options.prefetch()).isFalse();
                    assertThat(options.batchMaxBytes()).isEqualTo(8_388_608L);
                    assertThat(options.bucketCount()).isEqualTo(16);
                    assertThat(options.batchSize()).isEqualTo(50);
                    assertThat(options.pollInterval()).hasMillis(250);
                    assertThat(options.leaseDuration()).hasSeconds(20);
                    assertThat(options.leaseRenewInterval()).hasSeconds(5);
                    assertThat(options.relayId()).isEqualTo("orders-relay-1");
                    assertThat(options.storeConcurrency()).isEqualTo(2);
                    assertThat(options.closeTimeout()).hasSeconds(3);
                    assertThat(context.getBean(Outbox.class).bucketCount()).isEqualTo(16);
                    assertThat(context.getBean(OutboxRelay.class).relayId()).isEqualTo("orders-relay-1");
                });
    }

    @Test
    void r12_poisonPolicyProperties() {
        jdbc().withPropertyValues("outbox.relay.poison-policy=dead-letter", "outbox.relay.poison-max-attempts=3")
                .run(context -> {
                    RelayOptions options = context.getBean(RelayOptions.class);
                    assertThat(options.poisonPolicy()).isEqualTo(io.outbox.relay.PoisonPolicy.DEAD_LETTER);
                    assertThat(options.poisonMaxAttempts()).isEqualTo(3);
                });
        jdbc().withPropertyValues("outbox.relay.poison-max-attempts=0").run(context ->
                assertThat(allMessages(context.getStartupFailure()))
                        .contains("outbox.relay.poison-max-attempts").contains("but was 0"));
    }

    @Test
    void n1_notifierWakesTheLocalRelay_unknownTransportFailsNamingIt() {
        jdbc().run(context -> {
            assertThat(context).hasSingleBean(io.outbox.notify.OutboxNotifier.class);
            assertThat(context).doesNotHaveBean(io.outbox.notify.NotificationTransport.class);
        });
        jdbc().withPropertyValues("outbox.notify.transport=carrier-pigeon").run(context -> {
            assertThat(context).hasFailed();
            assertThat(allMessages(context.getStartupFailure())).contains("carrier-pigeon")
                    .contains("found [postgres, redis]");
        });
    }

    @Test
    void relayDisabled_keepsStoreAndOutbox_noRelayNoPublisher() {
        jdbc().withPropertyValues("outbox.relay.enabled=false").run(context -> {
            assertThat(context).hasSingleBean(JdbcOutboxStore.class);
            assertThat(context).hasSingleBean(Outbox.class);
            assertThat(context).doesNotHaveBean(OutboxRelay.class);
            assertThat(context).doesNotHaveBean(OutboxPublisher.class);
            assertThat(context).doesNotHaveBean(OutboxRelayLifecycle.class);
            assertThat(context).hasSingleBean(OutboxHealthIndicator.class);
        });
    }

    @Test
    void meterRegistry_bindsRelayMeters() {
        jdbc().withUserConfiguration(Meters.class).run(context -> {
            assertThat(context).hasSingleBean(MicrometerRelayMetrics.class);
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            // O3: every declared meter but those that appear at a first event: the transport's first
            // report (none here) and a cause's first message failure.
            for (RelayMeter meter : RelayMeter.values()) {
                if (!meter.meterName().startsWith("outbox.notify.") && meter != RelayMeter.MESSAGE_FAILURES) {
                    assertThat(registry.find(meter.meterName()).meters()).as("%s", meter.meterName()).isNotEmpty();
                }
            }
        });
    }

    @Test
    void userBeans_makeTheStarterBackOff() {
        jdbc().withUserConfiguration(UserBeans.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(JdbcOutboxStore.class);
            assertThat(context.getBean(OutboxStore.class)).isSameAs(context.getBean("userStore"));
            assertThat(context.getBean(OutboxPublisher.class)).isSameAs(context.getBean("userPublisher"));
            assertThat(context).doesNotHaveBean(KafkaOutboxPublisher.class);
            assertThat(context.getBean(RelayOptions.class).relayId()).isEqualTo("user-relay");
            // The Outbox is JDBC-only: with the user's own (non-JDBC) store none is defined.
            assertThat(context).doesNotHaveBean(Outbox.class);
        });
        jdbc().withUserConfiguration(UserOutbox.class).run(context -> {
            assertThat(context).hasSingleBean(Outbox.class);
            assertThat(context.getBean(Outbox.class)).isSameAs(context.getBean("userOutbox"));
            assertThat(context).hasSingleBean(JdbcOutboxStore.class);
        });
    }

    @Test
    void r10_badRelayProperty_failsNamingPropertyAndValue() {
        jdbc().withPropertyValues("outbox.relay.batch-size=0").run(context -> {
            assertThat(context).hasFailed();
            assertThat(allMessages(context.getStartupFailure()))
                    .contains("outbox.relay.batch-size").contains("but was 0");
        });
        jdbc().withPropertyValues("outbox.relay.batch-max-bytes=0").run(context -> {
            assertThat(context).hasFailed();
            assertThat(allMessages(context.getStartupFailure()))
                    .contains("outbox.relay.batch-max-bytes").contains("but was 0");
        });
        jdbc().withPropertyValues("outbox.relay.lease-duration=5s", "outbox.relay.lease-renew-interval=10s")
                .run(context -> assertThat(allMessages(context.getStartupFailure()))
                        .contains("outbox.relay.lease-renew-interval (10000)")
                        .contains("outbox.relay.lease-duration (5000)"));
        jdbc().withPropertyValues("outbox.bucket-count=0", "outbox.relay.enabled=false")
                .run(context -> assertThat(allMessages(context.getStartupFailure()))
                        .contains("outbox.bucket-count").contains("but was 0"));
    }

    @Test
    void badStoreName_failsNamingPropertyAndValue() {
        jdbc().withPropertyValues("outbox.store=cassandra").run(context -> {
            assertThat(context).hasFailed();
            assertThat(allMessages(context.getStartupFailure())).contains("outbox.store").contains("cassandra");
        });
    }

    @Test
    void badTablePrefix_failsNamingTheValue() {
        jdbc().withPropertyValues("outbox.jdbc.table-prefix=bad prefix;").run(context -> {
            assertThat(context).hasFailed();
            assertThat(allMessages(context.getStartupFailure())).contains("bad prefix;");
        });
    }

    @Test
    void mongoClient_givesMongoStore_withoutTransactionalOutbox() {
        runner().withUserConfiguration(Mongo.class)
                .withPropertyValues("outbox.mongodb.database=ctx_" + UUID.randomUUID().toString().substring(0, 8))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).hasSingleBean(MongoOutboxStore.class);
                    assertThat(context).doesNotHaveBean(JdbcOutboxStore.class);
                    assertThat(context).doesNotHaveBean(Outbox.class);
                    assertThat(context).hasSingleBean(OutboxRelay.class);
                    assertThat(context.getBean(MongoOutboxStore.class).options().database()).startsWith("ctx_");
                });
    }

    @Test
    void outboxStoreProperty_picksTheStoreWhenSeveralClientsExist() {
        jdbc().withUserConfiguration(Mongo.class).withPropertyValues("outbox.store=mongodb",
                        "outbox.mongodb.database=pick_" + UUID.randomUUID().toString().substring(0, 8))
                .run(context -> {
                    assertThat(context).hasSingleBean(MongoOutboxStore.class);
                    assertThat(context).doesNotHaveBean(JdbcOutboxStore.class);
                });
        jdbc().withUserConfiguration(Mongo.class).run(context -> {
            assertThat(context).hasSingleBean(JdbcOutboxStore.class);
            assertThat(context).doesNotHaveBean(MongoOutboxStore.class);
        });
    }

    @Test
    void dynamoDbClient_givesDynamoDbStore() {
        runner().withUserConfiguration(Dynamo.class)
                .withPropertyValues("outbox.create-schema=false", "outbox.relay.enabled=false",
                        "outbox.dynamodb.messages-table=ctx_messages", "outbox.dynamodb.coordination-table=ctx_coord")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).hasSingleBean(DynamoDbOutboxStore.class);
                    DynamoDbOutboxStore store = context.getBean(DynamoDbOutboxStore.class);
                    assertThat(store.options().messagesTable()).isEqualTo("ctx_messages");
                    assertThat(store.options().coordinationTable()).isEqualTo("ctx_coord");
                    assertThat(context).doesNotHaveBean(Outbox.class);
                });
    }

    @Test
    void noStoreClient_noOutboxBeans() {
        runner().run(context -> {
                    assertThat(context).doesNotHaveBean(OutboxStore.class);
                    assertThat(context).doesNotHaveBean(OutboxRelay.class);
                    assertThat(context).doesNotHaveBean(Outbox.class);
                    assertThat(context).doesNotHaveBean(OutboxHealthIndicator.class);
                });
    }

    @Test
    void k1_springKafkaProducerSettings_thenOutboxProducer_thenEnforced() {
        jdbc().withConfiguration(AutoConfigurations.of(KafkaAutoConfiguration.class))
                .withPropertyValues("spring.kafka.bootstrap-servers=127.0.0.1:19092",
                        "spring.kafka.producer.acks=1", "spring.kafka.producer.properties.linger.ms=7",
                        "spring.kafka.producer.compression-type=lz4",
                        "outbox.relay.producer.bootstrap.servers=127.0.0.1:19093", "outbox.relay.producer.linger.ms=11")
                .run(context -> {
                    OutboxProducerSettings spring = context.getBean(OutboxProducerSettings.class);
                    assertThat(spring.config()).containsEntry(ProducerConfig.LINGER_MS_CONFIG, "7");
                    Map<String, Object> merged = OutboxAutoConfiguration.producerConfig(spring,
                            context.getBean(OutboxProperties.class));
                    assertThat(merged).containsEntry(ProducerConfig.LINGER_MS_CONFIG, "11")
                            .containsEntry(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:19093")
                            .containsEntry(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4")
                            .doesNotContainKey(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG);
                    Map<String, Object> effective = KafkaOutboxPublisher.effectiveConfig(merged);
                    assertThat(effective).containsEntry(ProducerConfig.ACKS_CONFIG, "all")
                            .containsEntry(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
                });
    }

    /** The application's OpenTelemetry, disabled by the property, or the global one; the enqueue follows. */
    @Test
    void o1_theTracingBeanFollowsTheApplicationsOpenTelemetryAndTheProperty() {
        jdbc().run(context -> {
            assertThat(context.getBean(OutboxTracing.class)).isSameAs(OutboxTracing.global());
            assertThat(context.getBean(KafkaOutboxPublisher.class).tracingTimeInOutboxSpan()).isFalse();
        });
        try (OpenTelemetrySdk sdk = recordingSdk()) {
            jdbc().withBean(OpenTelemetry.class, () -> sdk)
                    .withPropertyValues("outbox.tracing.time-in-outbox-span=true").run(context -> {
                        assertThat(context.getBean(OutboxTracing.class).openTelemetry()).isSameAs(sdk);
                        assertThat(context.getBean(KafkaOutboxPublisher.class).tracingTimeInOutboxSpan()).isTrue();
                        assertThat(enqueueInsideASpan(context, sdk).headers()).extracting(OutboxHeader::key)
                                .containsExactly("traceparent");
                    });
        }
        try (OpenTelemetrySdk sdk = recordingSdk()) {
            jdbc().withBean(OpenTelemetry.class, () -> sdk).withPropertyValues("outbox.tracing.enabled=false")
                    .run(context -> {
                        assertThat(context.getBean(OutboxTracing.class)).isSameAs(OutboxTracing.disabled());
                        assertThat(enqueueInsideASpan(context, sdk).headers()).isEmpty();
                    });
        }
    }

    private static OpenTelemetrySdk recordingSdk() {
        return OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder()
                        .addSpanProcessor(SimpleSpanProcessor.create(InMemorySpanExporter.create())).build())
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance())).build();
    }

    private static OutboxMessage enqueueInsideASpan(ApplicationContext context, OpenTelemetry otel) {
        TransactionTemplate tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
        Span span = otel.getTracer("test").spanBuilder("request").startSpan();
        assertThat(span.getSpanContext().isValid()).as("a valid span around the enqueue").isTrue();
        Scope scope = span.makeCurrent();
        try {
            return tx.execute(status -> context.getBean(Outbox.class).enqueue("orders", "k", "v"));
        } finally {
            scope.close();
            span.end();
        }
    }

    static String allMessages(Throwable t) {
        StringBuilder b = new StringBuilder();
        for (Throwable e = t; e != null; e = e.getCause()) {
            b.append(e.getMessage()).append('\n');
        }
        return b.toString();
    }

    @Configuration(proxyBeanMethods = false)
    static class Meters {
        @Bean
        SimpleMeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class UserBeans {
        @Bean
        OutboxStore userStore() {
            return InMemoryOutboxStore.builder().build();
        }

        @Bean
        OutboxPublisher userPublisher() {
            return batch -> java.util.concurrent.CompletableFuture.completedFuture(
                    io.outbox.relay.PublishResult.success(batch.size()));
        }

        @Bean
        RelayOptions userRelayOptions() {
            return RelayOptions.builder().relayId("user-relay").build();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class UserOutbox {
        @Bean
        Outbox userOutbox() {
            return new Outbox() {
                @Override
                public void enqueue(java.util.List<io.outbox.OutboxMessage> messages) {
                }

                @Override
                public io.outbox.OutboxMessage enqueue(String topic, String key, String value) {
                    return null;
                }

                @Override
                public int bucketCount() {
                    return 1;
                }
            };
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Mongo {
        @Bean(destroyMethod = "close")
        MongoClient mongoClient() {
            return MongoClients.create(mongoUri);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Dynamo {
        @Bean(destroyMethod = "close")
        DynamoDbClient dynamoDbClient() {
            return DynamoDbClient.builder()
                    .endpointOverride(URI.create("http://127.0.0.1:9"))
                    .region(Region.US_EAST_1)
                    .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("x", "y")))
                    .httpClient(UrlConnectionHttpClient.create())
                    .build();
        }
    }
}
