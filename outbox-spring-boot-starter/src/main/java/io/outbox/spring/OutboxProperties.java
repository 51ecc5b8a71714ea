package io.outbox.spring;

import io.outbox.relay.RelayOptions;
import io.outbox.store.dynamodb.DynamoDbOutboxOptions;
import io.outbox.store.jdbc.JdbcOutboxTables;
import io.outbox.store.mongodb.MongoOutboxOptions;
import java.time.Duration;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.boot.context.properties.bind.Name;

/**
 * The {@code outbox.*} settings of the Spring Boot starter. Bound once at start-up; immutable and
 * thread-safe. Relay settings are checked by {@link RelayOptions} (rule R10) when the relay bean is
 * built; a bad value fails the start-up naming the {@code outbox.*} property and the value.
 *
 * <p>A property that stands for a relay or publisher option has no default of its own: unset (null)
 * it takes the option's default from its definition ({@link RelayOptions#configDef()}). The property
 * metadata an IDE shows for these and for the store properties that are store settings (description
 * and default) is generated from the same definitions into
 * {@code META-INF/additional-spring-configuration-metadata.json}.
 *
 * @param store which store to build: jdbc, mongodb or dynamodb; null (the
 *     default) picks by what is on the class path and in the context, in that order
 * @param bucketCount relay option {@value RelayOptions#BUCKET_COUNT_CONFIG}, also the writers' bucket count;
 *     the same on every writer and relay of a store (rules E2, S8)
 * @param createSchema whether to create absent tables, collections and indexes at start-up; off by
 *     default (run the shipped DDL with your migration tool)
 * @param jdbc the JDBC store's settings
 * @param mongodb the MongoDB store's settings
 * @param dynamodb the DynamoDB store's settings
 * @param relay the relay's settings
 * @param health the health indicator's settings
 * @param tracing the trace settings (rules O1, O2)
 */
@ConfigurationProperties("outbox")
public record OutboxProperties(
        StoreType store,
        @DefaultValue("" + RelayOptions.DEFAULT_BUCKET_COUNT) int bucketCount,
        @DefaultValue("false") boolean createSchema,
        @DefaultValue Jdbc jdbc,
        @DefaultValue Mongodb mongodb,
        @DefaultValue Dynamodb dynamodb,
        @DefaultValue Relay relay,
        @Name("notify") @DefaultValue Notify notifications,
        @DefaultValue Health health,
        @DefaultValue Tracing tracing) {

    /** The relay's poison policy (rule R12), as {@code outbox.relay.poison-policy} spells it. */
    public enum PoisonPolicy {
        /** Keep retrying the message alone; its bucket waits behind it. */
        BLOCK,
        /** Move it to the store's dead letters (capability C4) and go on with the bucket. */
        DEAD_LETTER
    }

    /** The stores the starter can build. */
    public enum StoreType {
        /** {@code io.outbox.store.jdbc.JdbcOutboxStore} on the application's {@code DataSource}. */
        JDBC,
        /** {@code io.outbox.store.mongodb.MongoOutboxStore} on the application's {@code MongoClient}. */
        MONGODB,
        /** {@code io.outbox.store.dynamodb.DynamoDbOutboxStore} on the application's {@code DynamoDbClient}. */
        DYNAMODB
    }

    /**
     * JDBC store settings.
     *
     * @param tablePrefix prefix of the three table names, each followed by messages, leases or
     *     relays; empty or an SQL identifier
     * @param schema the schema (MySQL/MariaDB: database) holding the tables; null for the
     *     connection's current schema
     */
    public record Jdbc(@DefaultValue(JdbcOutboxTables.DEFAULT_PREFIX) String tablePrefix, String schema) {
    }

    /**
     * MongoDB store settings.
     *
     * @param database the database holding the collections
     * @param collectionPrefix prefix of the collections
     */
    public record Mongodb(@DefaultValue("outbox") String database,
                          @DefaultValue(MongoOutboxOptions.DEFAULT_COLLECTION_PREFIX) String collectionPrefix) {
    }

    /**
     * DynamoDB store settings.
     *
     * @param messagesTable the messages table
     * @param coordinationTable the table holding leases and heartbeats
     */
    public record Dynamodb(@DefaultValue(DynamoDbOutboxOptions.DEFAULT_MESSAGES_TABLE) String messagesTable,
                           @DefaultValue(DynamoDbOutboxOptions.DEFAULT_COORDINATION_TABLE) String coordinationTable) {
    }

    /**
     * Relay settings (rule R10 gives the ranges; {@code RelayOptions} checks them). Every one but
     * {@code enabled}, {@code producer} and {@code start-timeout} is a relay or publisher option:
     * null (unset) means the option's default. Their meaning and default are in {@link RelayOptions#configDef()} (that of
     * {@code message-id-header} in {@code KafkaOutboxPublisher}'s), which the IDE shows from the
     * generated metadata; durations are Spring durations ({@code 1s}, {@code 500ms}).
     *
     * @param enabled whether this application runs a relay; false for services that only write
     * @param relayId relay option {@value RelayOptions#RELAY_ID_CONFIG}; null for host name, process id
     *     and a random suffix
     * @param batchSize relay option {@value RelayOptions#BATCH_SIZE_CONFIG}, or null
     * @param batchMaxBytes relay option {@value RelayOptions#BATCH_MAX_BYTES_CONFIG}, in bytes; null
     *     derives it from the heap
     * @param pollInterval relay option {@value RelayOptions#POLL_INTERVAL_MS_CONFIG}, or null
     * @param leaseDuration relay option {@value RelayOptions#LEASE_DURATION_MS_CONFIG}, or null
     * @param leaseRenewInterval relay option {@value RelayOptions#LEASE_RENEW_INTERVAL_MS_CONFIG}, or null
     * @param errorBackoff relay option {@value RelayOptions#ERROR_BACKOFF_MS_CONFIG}, or null
     * @param maxErrorBackoff relay option {@value RelayOptions#ERROR_BACKOFF_MAX_MS_CONFIG}, or null
     * @param maxPublishDuration relay option {@value RelayOptions#MAX_PUBLISH_DURATION_MS_CONFIG}; only
     *     for stores without lease renewal (every bundled store renews); null when unused
     * @param closeTimeout relay option {@value RelayOptions#CLOSE_TIMEOUT_MS_CONFIG}, or null
     * @param storeConcurrency relay option {@value RelayOptions#STORE_CONCURRENCY_CONFIG}, or null
     * @param messageIdHeader the publisher's option {@code message.id.header} (rule K2), or null
     * @param producer Kafka producer settings applied over spring.kafka.producer.*; the relay's
     *     enforced settings (rule K1) still win
     * @param poisonPolicy relay option {@value RelayOptions#POISON_POLICY_CONFIG} (rule R12), or null
     * @param poisonMaxAttempts relay option {@value RelayOptions#POISON_MAX_ATTEMPTS_CONFIG}, or null
     * @param prefetch relay option {@value RelayOptions#PREFETCH_CONFIG} (capability C5), or null
     * @param metricsBacklogBucket0OwnerOnly relay option
     *     {@value RelayOptions#METRICS_BACKLOG_BUCKET_ZERO_OWNER_CONFIG} (rule O4), or null
     * @param startTimeout how long the application's start waits for the relay's start to settle
     *     (rule R13): its first lease round, then, with messages pending in its buckets, the broker's
     *     first answer. A refusal no retry heals before then (a database login or grant, a SASL
     *     login, an ACL, a transaction timeout above the broker's maximum) fails the start; a store
     *     or broker that has not answered by then is retried while the application runs (R3, R7)
     */
    public record Relay(
            @DefaultValue("true") boolean enabled,
            String relayId,
            Integer batchSize,
            Long batchMaxBytes,
            Duration pollInterval,
            Duration leaseDuration,
            Duration leaseRenewInterval,
            Duration errorBackoff,
            Duration maxErrorBackoff,
            Duration maxPublishDuration,
            Duration closeTimeout,
            Integer storeConcurrency,
            String messageIdHeader,
            Map<String, String> producer,
            PoisonPolicy poisonPolicy,
            Integer poisonMaxAttempts,
            Boolean prefetch,
            Boolean metricsBacklogBucket0OwnerOnly,
            @DefaultValue("30s") Duration startTimeout) {

        /**
         * Copies the producer map.
         *
         * @param enabled see the record
         * @param relayId see the record
         * @param batchSize see the record
         * @param batchMaxBytes see the record
         * @param pollInterval see the record
         * @param leaseDuration see the record
         * @param leaseRenewInterval see the record
         * @param errorBackoff see the record
         * @param maxErrorBackoff see the record
         * @param maxPublishDuration see the record
         * @param closeTimeout see the record
         * @param storeConcurrency see the record
         * @param messageIdHeader see the record
         * @param producer see the record; null means empty
         * @param poisonPolicy see the record
         * @param poisonMaxAttempts see the record
         * @param prefetch see the record
         * @param metricsBacklogBucket0OwnerOnly see the record
         * @param startTimeout see the record; null means {@link OutboxRelayLifecycle#DEFAULT_START_TIMEOUT}
         */
        public Relay {
            producer = producer == null ? Map.of() : Map.copyOf(producer);
            startTimeout = startTimeout == null ? OutboxRelayLifecycle.DEFAULT_START_TIMEOUT : startTimeout;
            if (startTimeout.isNegative()) {
                throw new IllegalArgumentException("outbox.relay.start-timeout must not be negative, but is "
                        + startTimeout);
            }
        }
    }

    /**
     * Commit notification settings (rules N1-N6).
     *
     * @param transport the cross-process transport by provider name (redis, postgres; its module on the
     *     class path), or null for none: then only this application's relay is woken after a commit, and
     *     the relays of other processes find the messages at their next poll
     * @param settings the transport's settings (for example uri for redis), passed to its provider
     */
    public record Notify(String transport, Map<String, String> settings) {

        /**
         * Copies the settings.
         *
         * @param transport see the record
         * @param settings see the record; null means empty
         */
        public Notify {
            settings = settings == null ? Map.of() : Map.copyOf(settings);
        }
    }

    /**
     * Health indicator settings.
     *
     * @param oldestPendingThreshold the health is DOWN while the oldest pending message is older
     *     than this (capability C2)
     * @param brokerCheckEnabled whether a periodic check (an Admin describeCluster to the relay's bootstrap
     *     servers, a third of broker-unreachable-threshold apart, 250 ms to 10 s) asks whether a broker
     *     answers, so that the health follows the broker also while the relay has nothing to publish; only
     *     where this application runs the relay
     * @param brokerUnreachableThreshold the health is DOWN while no broker answered the periodic check for
     *     this long
     */
    public record Health(@DefaultValue("5m") Duration oldestPendingThreshold,
                         @DefaultValue("true") boolean brokerCheckEnabled,
                         @DefaultValue("30s") Duration brokerUnreachableThreshold) {
    }

    /**
     * Trace settings (rules O1, O2). With tracing on, the outbox uses the application's
     * {@code io.opentelemetry.api.OpenTelemetry} bean (the one Spring Boot's OpenTelemetry support
     * or the Micrometer Tracing OpenTelemetry bridge runs on) when the context has exactly one, and
     * {@code GlobalOpenTelemetry} otherwise.
     *
     * @param enabled whether enqueue stores the current trace context with each message and the
     *     relay starts a PRODUCER span per batch; false stores nothing and starts no span
     * @param timeInOutboxSpan the publisher's option {@code tracing.time.in.outbox.span}, or null
     */
    public record Tracing(@DefaultValue("true") boolean enabled, Boolean timeInOutboxSpan) {
    }
}
