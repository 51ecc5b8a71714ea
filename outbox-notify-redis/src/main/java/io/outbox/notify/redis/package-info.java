/**
 * Cross-process wake-ups over Redis pub/sub on Lettuce (rules N3-N6):
 * {@link io.outbox.notify.redis.RedisNotificationTransport}, registered as transport {@code redis}.
 */
package io.outbox.notify.redis;
