/**
 * Spring Boot auto-configuration for the outbox: {@link io.outbox.spring.OutboxAutoConfiguration}
 * builds the store from the application's beans, the transactional {@link io.outbox.spring.Outbox},
 * and the relay as a {@link io.outbox.spring.OutboxRelayLifecycle};
 * {@link io.outbox.spring.OutboxActuatorAutoConfiguration} adds health and the {@code outbox}
 * endpoint. Settings: {@link io.outbox.spring.OutboxProperties} ({@code outbox.*}).
 */
package io.outbox.spring;
