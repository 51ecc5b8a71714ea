/**
 * Wake-ups across processes (rules N1-N6): {@link io.outbox.notify.OutboxNotifier} turns confirmed
 * commits into wake-ups of the local relays and, through a
 * {@link io.outbox.notify.NotificationTransport}, of the relays of other processes. Transports are
 * found by name with {@link io.outbox.notify.NotificationTransports} (a
 * {@link io.outbox.notify.NotificationTransportProvider} registered with {@code ServiceLoader}) and
 * send their hints as {@link io.outbox.notify.HintPayload} text. A transport author depends on this
 * package only; outbox-notify-redis and outbox-notify-postgres are the project's own transports.
 */
package io.outbox.notify;
