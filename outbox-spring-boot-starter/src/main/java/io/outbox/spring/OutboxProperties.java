package io.outbox.spring;

import io.outbox.relay.RelayOptions;
import java.time.Duration;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

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
        @DefaultValue Health health) {

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
            @DefaultValue(RelayOptions.DEFAULT_MESSAGE_ID_HEADER) String messageIdHeader,
            Map<String, String> producer) {

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
         */
        public Relay {
            producer = producer == null ? Map.of() : Map.copyOf(producer);
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
