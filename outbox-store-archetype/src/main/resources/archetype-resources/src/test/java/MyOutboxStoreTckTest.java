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

    /** Creates the kit; JUnit calls this once per test. */
    protected MyOutboxStoreTckTest() {
    }

    /**
     * A fresh store per test, registered with the provider under a unique name. A database fixture
     * creates uniquely named tables or collections here.
     */
    @Override
    protected void createStorage() {
        storage = newInMemoryStore(clock());
        name = "tck-" + UUID.randomUUID();
        MyOutboxStoreProvider.register(name, storage);
    }

    /**
     * Makes the store of one test. Override to run the kit over a subclass of
     * {@link MyOutboxStore} (a wrapper that counts calls or injects latency, say).
     *
     * @param clock the kit's clock
     * @return a new, empty store on that clock
     */
    protected MyOutboxStore newInMemoryStore(Clock clock) {
        return MyOutboxStore.builder().clock(clock).build();
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

    /**
     * The name this test's store is registered under with the provider.
     *
     * @return the name
     */
    protected final String registeredName() {
        return name;
    }

    /** Unregisters the store; a database fixture drops its tables or collections here. */
    @Override
    protected void dropStorage() {
        MyOutboxStoreProvider.unregister(name);
    }

    /** The store's own transactional path, committed (E4). */
    @Override
    protected void enqueue(OutboxStore store, List<OutboxMessage> messages) {
        ((MyOutboxStore) store).enqueue(messages);
    }

    /** The same path, rolled back: a database fixture aborts its transaction or session. */
    @Override
    protected void enqueueAndRollBack(OutboxStore store, List<OutboxMessage> messages) {
        MyOutboxStore.Transaction tx = ((MyOutboxStore) store).begin();
        tx.enqueue(messages);
        tx.rollback();
    }

    /** A transaction left open for the kit to commit later. */
    @Override
    protected OpenTransaction beginEnqueue(OutboxStore store, List<OutboxMessage> messages) {
        MyOutboxStore.Transaction tx = ((MyOutboxStore) store).begin();
        tx.enqueue(messages);
        return tx::commit;
    }

    /**
     * A row in any bucket, negative ones included: a database fixture inserts the row (and the
     * writer's sequence counter) directly, bypassing the enqueue helper.
     */
    @Override
    protected void insertRawRow(OutboxStore store, OutboxMessage message, int bucket) {
        ((MyOutboxStore) store).insertRow(bucket, message);
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
