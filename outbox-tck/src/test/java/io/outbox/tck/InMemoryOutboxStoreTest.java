package io.outbox.tck;

import io.outbox.spi.OutboxMessage;
import io.outbox.spi.OutboxStore;
import java.time.Clock;
import java.util.List;
import java.util.Map;

/** The reference store passes the whole kit. */
class InMemoryOutboxStoreTest extends OutboxStoreTck {

    private InMemoryOutboxStore storage;

    @Override
    protected void createStorage() {
        storage = null;
    }

    /** The in-memory store is its own storage: every instance of one test is the same object. */
    @Override
    protected OutboxStore newStore(Clock clock) {
        if (storage == null) {
            storage = new InMemoryOutboxStore(clock);
        }
        return storage;
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
        return Map.of();
    }
}
