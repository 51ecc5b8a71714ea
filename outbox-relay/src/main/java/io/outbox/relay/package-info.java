/**
 * The relay: {@link io.outbox.relay.OutboxRelay} drains an {@link io.outbox.spi.OutboxStore}
 * through an {@link io.outbox.relay.OutboxPublisher}, by default
 * {@link io.outbox.relay.KafkaOutboxPublisher}, with settings from
 * {@link io.outbox.relay.RelayOptions} (rules R1-R11 and K1-K4 of the design).
 *
 * <p>Optional metrics: {@link io.outbox.relay.MicrometerRelayMetrics} reports what the relay does
 * to a Micrometer registry when {@code io.micrometer:micrometer-core} is on the class path.
 */
package io.outbox.relay;
