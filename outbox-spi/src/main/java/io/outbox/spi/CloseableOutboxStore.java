package io.outbox.spi;

/**
 * A store that can be closed, and the type {@link OutboxStores#open} and
 * {@link OutboxStoreProvider#create} return, so a discovered store works in try-with-resources:
 *
 * <pre>{@code
 * try (CloseableOutboxStore store = OutboxStores.open("jdbc", config);
 *      OutboxRelay relay = OutboxRelay.builder(store, publisher).build()) {
 *     relay.start();
 *     ...
 * }
 * }</pre>
 *
 * <p>{@link #close()} releases what the store owns: a client, pool or data source it created
 * (every store a provider opens owns its own), threads it started. A client or data source the
 * application passed to a store's builder stays the application's unless the builder was told to
 * close it. {@link OutboxStore} itself is not {@code AutoCloseable} so that a store on borrowed
 * resources, or a wrapper around another store, is not mistaken for their owner.
 */
public interface CloseableOutboxStore extends OutboxStore, AutoCloseable {

    /**
     * Releases what the store owns. Idempotent: a second call does nothing. After it, calls on
     * the store may fail. Unlike {@link AutoCloseable#close()} it throws no checked exception.
     *
     * @throws RuntimeException if releasing a resource fails; the store counts as closed anyway
     */
    @Override
    void close();
}
