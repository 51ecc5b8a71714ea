/**
 * Cross-process wake-ups over PostgreSQL LISTEN/NOTIFY (rules N3-N6):
 * {@link io.outbox.notify.postgres.PostgresNotificationTransport}, registered as transport
 * {@code postgres}.
 */
package io.outbox.notify.postgres;
