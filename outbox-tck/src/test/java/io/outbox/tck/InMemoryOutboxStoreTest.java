package io.outbox.tck;

/** The reference store passes the whole kit. */
class InMemoryOutboxStoreTest extends InMemoryOutboxStoreTck {
}
