/**
 * The relay's API (rules R1-R14): {@link io.outbox.relay.OutboxRelay} drains an
 * {@link io.outbox.spi.OutboxStore} through an {@link io.outbox.relay.OutboxPublisher}, with settings
 * from {@link io.outbox.relay.RelayOptions}; {@link io.outbox.relay.RelayListener} reports what it
 * does, {@link io.outbox.relay.FailureKind} and {@link io.outbox.relay.PoisonPolicy} say how it
 * treats failures. A publisher author implements {@link io.outbox.relay.OutboxPublisher} and
 * answers with {@link io.outbox.relay.PublishResult} (and {@link io.outbox.relay.BucketFencedException}
 * when it fences by bucket).
 *
 * <p>The Kafka publishers (rules K1-K8) are in {@link io.outbox.relay.kafka}, the notification
 * transports' SPI in {@link io.outbox.notify}; the engine itself lives in
 * {@code io.outbox.relay.internal}, which is not an API.
 *
 * <p>Optional metrics: {@link io.outbox.relay.MicrometerRelayMetrics} reports what the relay does
 * to a Micrometer registry when {@code io.micrometer:micrometer-core} is on the class path.
 */
package io.outbox.relay;
