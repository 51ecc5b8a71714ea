package io.outbox.spring;

import io.outbox.relay.KafkaOutboxPublisher;
import io.outbox.relay.RelayOptions;
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
 * @param store which store to build: jdbc, mongodb or dynamodb; null (the
 *     default) picks by what is on the class path and in the context, in that order
 * @param bucketCount the number of ordering buckets; the same on every writer and relay of a store
 *     (rules E2, S8)
 * @param createSchema whether to create absent tables, collections and indexes at start-up; off by
 *     default (run the shipped DDL with your migration tool)
 * @param jdbc the JDBC store's settings
 * @param mongodb the MongoDB store's settings
 * @param dynamodb the DynamoDB store's settings
 * @param relay the relay's settings
 * @param health the health indicator's settings
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
        @DefaultValue Health health) {

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
    public record Jdbc(@DefaultValue("outbox_") String tablePrefix, String schema) {
    }

    /**
     * MongoDB store settings.
     *
     * @param database the database holding the collections
     * @param collectionPrefix prefix of the collections
     */
    public record Mongodb(@DefaultValue("outbox") String database, @DefaultValue("outbox_") String collectionPrefix) {
    }

    /**
     * DynamoDB store settings.
     *
     * @param messagesTable the messages table
     * @param coordinationTable the table holding leases and heartbeats
     */
    public record Dynamodb(@DefaultValue("outbox_messages") String messagesTable,
                           @DefaultValue("outbox_coordination") String coordinationTable) {
    }

    /**
     * Relay settings (rule R10 gives the ranges; {@code RelayOptions} checks them).
     *
     * @param enabled whether this application runs a relay; false for services that only write
     * @param relayId this relay's id; null for host name, process id and a random suffix
     * @param batchSize the most messages read and published per bucket per sweep
     * @param pollInterval how often the relay looks for pending messages without a wake-up
     * @param leaseDuration how long a bucket lease lasts after the call that granted or renewed it
     * @param leaseRenewInterval how often leases are renewed and buckets rebalanced; less than
     *     lease-duration
     * @param errorBackoff the first wait after a failed publish or store call
     * @param maxErrorBackoff the longest wait after failures in a row
     * @param maxPublishDuration the longest one publish may take; only for stores without lease
     *     renewal (every bundled store renews); null when unused
     * @param closeTimeout how long a graceful stop waits for publishes in flight
     * @param storeConcurrency the number of threads making store calls
     * @param messageIdHeader the record header carrying each message's id (rule K2)
     * @param producer Kafka producer settings applied over spring.kafka.producer.*; the relay's
     *     enforced settings (rule K1) still win
     * @param poisonPolicy what the relay does with a message that keeps failing for a reason of its own
     *     (rule R12): block its bucket, or move it to the store's dead letters (capability C4)
     * @param poisonMaxAttempts message-specific failures before the poison policy applies
     * @param prefetch whether a bucket's next batch is read while its batch in flight is published
     *     (needs a store that can read ahead, capability C5)
     */
    public record Relay(
            @DefaultValue("true") boolean enabled,
            String relayId,
            @DefaultValue("" + RelayOptions.DEFAULT_BATCH_SIZE) int batchSize,
            @DefaultValue("1s") Duration pollInterval,
            @DefaultValue("30s") Duration leaseDuration,
            @DefaultValue("10s") Duration leaseRenewInterval,
            @DefaultValue("1s") Duration errorBackoff,
            @DefaultValue("30s") Duration maxErrorBackoff,
            Duration maxPublishDuration,
            @DefaultValue("30s") Duration closeTimeout,
            @DefaultValue("" + RelayOptions.DEFAULT_STORE_CONCURRENCY) int storeConcurrency,
            @DefaultValue(KafkaOutboxPublisher.DEFAULT_MESSAGE_ID_HEADER) String messageIdHeader,
            Map<String, String> producer,
            @DefaultValue("block") PoisonPolicy poisonPolicy,
            @DefaultValue("" + RelayOptions.DEFAULT_POISON_MAX_ATTEMPTS) int poisonMaxAttempts,
            @DefaultValue("" + RelayOptions.DEFAULT_PREFETCH) boolean prefetch) {

        /**
         * Copies the producer map.
         *
         * @param enabled see the record
         * @param relayId see the record
         * @param batchSize see the record
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
         */
        public Relay {
            producer = producer == null ? Map.of() : Map.copyOf(producer);
        }
    }

    /**
     * Commit notification settings (rules N1-N5).
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
     */
    public record Health(@DefaultValue("5m") Duration oldestPendingThreshold) {
    }
}
