package io.outbox.tck;

import io.outbox.OutboxMessage;
import io.outbox.spi.OutboxStore;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/** The reference store passes the whole kit. */
class InMemoryOutboxStoreTest extends OutboxStoreTck {

    private InMemoryOutboxStore storage;
    private String name;

    @Override
    protected void createStorage() {
        storage = InMemoryOutboxStore.builder().clock(clock()).build();
        name = "tck-" + UUID.randomUUID();
        InMemoryOutboxStoreProvider.register(name, storage);
    }

    /**
     * The in-memory store is its own storage, so every "instance" of one test is the same object;
     * it is thread-safe, which is all the multi-instance tests need from it. A database store
     * returns a new client here instead.
     */
    @Override
    protected OutboxStore newStore(Clock clock) {
        return storage;
    }

    /** The name this test's store is registered under with the provider. */
    protected final String registeredName() {
        return name;
    }

    @Override
    protected void dropStorage() {
        InMemoryOutboxStoreProvider.unregister(name);
    }

    @Override
    protected void enqueue(OutboxStore store, List<OutboxMessage> messages) {
        ((InMemoryOutboxStore) store).enqueue(messages);
    }

    @Override
    protected void enqueueAndRollBack(OutboxStore store, List<OutboxMessage> messages) {
        InMemoryOutboxStore.Transaction tx = ((InMemoryOutboxStore) store).begin();
        tx.enqueue(messages);
        tx.rollback();
    }

    @Override
    protected OpenTransaction beginEnqueue(OutboxStore store, List<OutboxMessage> messages) {
        InMemoryOutboxStore.Transaction tx = ((InMemoryOutboxStore) store).begin();
        tx.enqueue(messages);
        return tx::commit;
    }

    @Override
    protected void insertRawRow(OutboxStore store, OutboxMessage message) {
        ((InMemoryOutboxStore) store).enqueue(message);
    }

    @Override
    protected long maxPayloadBytes() {
        return InMemoryOutboxStore.DEFAULT_MAX_PAYLOAD_BYTES;
    }

    @Override
    protected String providerName() {
        return InMemoryOutboxStoreProvider.NAME;
    }

    @Override
    protected Map<String, String> providerConfig() {
        return Map.of(InMemoryOutboxStoreProvider.NAME_CONFIG, name);
    }
}
