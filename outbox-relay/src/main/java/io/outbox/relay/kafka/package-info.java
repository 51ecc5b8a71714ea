/**
 * The Kafka publishers (rules K1-K8): {@link io.outbox.relay.kafka.KafkaOutboxPublisher} builds the
 * idempotent publisher (K1-K4, K8) or, with {@link io.outbox.relay.kafka.KafkaTransactions}, the
 * transactional one (K5-K7).
 */
package io.outbox.relay.kafka;
