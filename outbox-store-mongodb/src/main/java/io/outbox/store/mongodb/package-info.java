/**
 * The MongoDB outbox store.
 *
 * <p>{@link io.outbox.store.mongodb.MongoOutboxStore} implements the store SPI (S1-S13) and offers
 * the optional capabilities C1-C6 on four collections; build it with
 * {@link io.outbox.store.mongodb.MongoOutboxStore#builder(com.mongodb.client.MongoClient)} on your
 * own {@code MongoClient}, or open it by name
 * ({@value io.outbox.store.mongodb.MongoOutboxStoreProvider#NAME}) through
 * {@link io.outbox.store.mongodb.MongoOutboxStoreProvider}. Its
 * {@link io.outbox.store.mongodb.MongoOutboxStore#writer() writer},
 * {@link io.outbox.store.mongodb.MongoOutboxWriter}, enqueues inside the caller's
 * {@code ClientSession} transaction (E4).
 */
package io.outbox.store.mongodb;
