package io.outbox.tck;

import io.outbox.OutboxMessage;
import io.outbox.spi.OutboxStore;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The kit over the reference store {@link InMemoryOutboxStore}: the fixture to copy for a store
 * that is not JDBC. Each method maps onto what a database store's fixture does (noted per
 * method); the JDBC, MongoDB and DynamoDB stores' kit tests are built the same way.
 *
 * <pre>{@code
 * class InMemoryOutboxStoreTest extends InMemoryOutboxStoreTck {}   // runs the whole kit
 * }</pre>
 *
 * <p>Not thread-safe (one instance per test, as JUnit creates them).
 */
public abstract class InMemoryOutboxStoreTck extends OutboxStoreTck {

    private InMemoryOutboxStore storage;
    private String name;

    /** Creates the kit; JUnit calls this once per test. */
    protected InMemoryOutboxStoreTck() {
    }

    /**
     * A fresh store per test, registered with the provider under a unique name. A database fixture
     * creates uniquely named tables or collections here.
     */
    @Override
    protected void createStorage() {
        storage = newInMemoryStore(clock());
        name = "tck-" + UUID.randomUUID();
        InMemoryOutboxStoreProvider.register(name, storage);
    }

    /**
     * Makes the store of one test. Override to run the kit over a subclass of
     * {@link InMemoryOutboxStore} (a wrapper that counts calls or injects latency, say).
     *
     * @param clock the kit's clock
     * @return a new, empty store on that clock
     */
    protected InMemoryOutboxStore newInMemoryStore(Clock clock) {
        return InMemoryOutboxStore.builder().clock(clock).build();
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
        InMemoryOutboxStoreProvider.unregister(name);
    }

    /** The store's own transactional path, committed (E4). */
    @Override
    protected void enqueue(OutboxStore store, List<OutboxMessage> messages) {
        ((InMemoryOutboxStore) store).enqueue(messages);
    }

    /** The same path, rolled back: a database fixture aborts its transaction or session. */
    @Override
    protected void enqueueAndRollBack(OutboxStore store, List<OutboxMessage> messages) {
        InMemoryOutboxStore.Transaction tx = ((InMemoryOutboxStore) store).begin();
        tx.enqueue(messages);
        tx.rollback();
    }

    /** A transaction left open for the kit to commit later. */
    @Override
    protected OpenTransaction beginEnqueue(OutboxStore store, List<OutboxMessage> messages) {
        InMemoryOutboxStore.Transaction tx = ((InMemoryOutboxStore) store).begin();
        tx.enqueue(messages);
        return tx::commit;
    }

    /**
     * A row in any bucket, negative ones included: a database fixture inserts the row (and the
     * writer's sequence counter) directly, bypassing the enqueue helper.
     */
    @Override
    protected void insertRawRow(OutboxStore store, OutboxMessage message, int bucket) {
        ((InMemoryOutboxStore) store).insertRow(bucket, message);
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
