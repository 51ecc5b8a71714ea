/**
 * What an application uses to enqueue: {@link io.outbox.OutboxMessage}, built with an
 * {@link io.outbox.OutboxMessageFactory} bound once to the bucket count and the serializers, or
 * directly with {@link io.outbox.OutboxMessage#create(String, Object, Object,
 * org.apache.kafka.common.serialization.Serializer, org.apache.kafka.common.serialization.Serializer, int)
 * OutboxMessage.create} (rules E1-E3); its headers ({@link io.outbox.OutboxHeader}) and the bucket
 * placement ({@link io.outbox.OutboxBucket}, rule E2). Messages are persisted by a store's writer
 * ({@code store.writer()}) inside the application's own transaction (E4); see the store modules.
 * A message larger than the store holds is refused there with
 * {@link io.outbox.OutboxPayloadTooLargeException}, nothing written (S10).
 *
 * <p>On the consumer side, {@link io.outbox.MessageIdReader} reads a record's message id for the
 * stores' inboxes (rule I1), and {@link io.outbox.InboxRetention} is the cleanup every inbox offers
 * (rule I2).
 */
package io.outbox;
