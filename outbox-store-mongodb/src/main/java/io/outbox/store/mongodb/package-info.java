/**
 * The MongoDB outbox store.
 *
 * <p>{@link io.outbox.store.mongodb.MongoOutboxStore} implements the store SPI and the optional
 * capabilities C1-C3 on four collections, and offers
 * {@link io.outbox.store.mongodb.MongoOutboxStore#enqueue(com.mongodb.client.ClientSession, java.util.List)
 * enqueue} inside the caller's {@code ClientSession} transaction (E4). Build it on your own
 * {@code MongoClient} with {@link io.outbox.store.mongodb.MongoOutboxOptions}, or open it by name
 * ({@value io.outbox.store.mongodb.MongoOutboxStoreProvider#NAME}) through
 * {@link io.outbox.store.mongodb.MongoOutboxStoreProvider}.
 */
package io.outbox.store.mongodb;
