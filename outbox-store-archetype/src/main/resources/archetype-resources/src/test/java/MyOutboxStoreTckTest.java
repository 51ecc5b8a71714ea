package ${package};

import io.outbox.OutboxMessage;
import io.outbox.spi.OutboxStore;
import io.outbox.tck.OutboxStoreTck;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Runs every rule of the compatibility kit against {@link MyOutboxStore}. Each test is named after
 * the rule it guards ({@code required_S5_...}); its Javadoc in the outbox-tck sources jar ends with
 * "If this test fails, check". When the store moves to a database, {@link #createStorage()}
 * creates fresh, isolated tables, {@link #newStore(Clock)} opens a new client on them, and the
 * enqueue methods run your transactional enqueue helper.
 */
class MyOutboxStoreTckTest extends OutboxStoreTck {

    private MyOutboxStore storage;
    private String name;

    @Override
    protected void createStorage() {
        storage = MyOutboxStore.builder().clock(clock()).build();
        name = "tck-" + UUID.randomUUID();
        MyOutboxStoreProvider.register(name, storage);
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
        MyOutboxStoreProvider.unregister(name);
    }

    @Override
    protected void enqueue(OutboxStore store, List<OutboxMessage> messages) {
        ((MyOutboxStore) store).enqueue(messages);
    }

    @Override
    protected void enqueueAndRollBack(OutboxStore store, List<OutboxMessage> messages) {
        MyOutboxStore.Transaction tx = ((MyOutboxStore) store).begin();
        tx.enqueue(messages);
        tx.rollback();
    }

    @Override
    protected OpenTransaction beginEnqueue(OutboxStore store, List<OutboxMessage> messages) {
        MyOutboxStore.Transaction tx = ((MyOutboxStore) store).begin();
        tx.enqueue(messages);
        return tx::commit;
    }

    @Override
    protected void insertRawRow(OutboxStore store, OutboxMessage message) {
        ((MyOutboxStore) store).enqueue(message);
    }

    @Override
    protected long maxPayloadBytes() {
        return MyOutboxStore.DEFAULT_MAX_PAYLOAD_BYTES;
    }

    @Override
    protected String providerName() {
        return MyOutboxStoreProvider.NAME;
    }

    @Override
    protected Map<String, String> providerConfig() {
        return Map.of(MyOutboxStoreProvider.NAME_CONFIG, name);
    }
}
