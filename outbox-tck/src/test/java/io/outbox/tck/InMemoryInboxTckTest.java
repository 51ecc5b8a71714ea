package io.outbox.tck;

import java.time.Clock;
import java.time.Duration;

/** The inbox kit on the correct in-memory inbox: every rule passes. */
class InMemoryInboxTckTest extends InboxTck {

    private InMemoryInbox.Storage storage;

    /** The fault this run's fixtures have; null for none. */
    InMemoryInbox.Fault fault() {
        return null;
    }

    @Override
    protected void createStorage() {
        storage = new InMemoryInbox.Storage();
    }

    @Override
    protected InboxFixture open(Clock clock, Duration retention, int cleanupBatchSize) {
        return InMemoryInbox.fixture(fault(), storage, clock, retention, cleanupBatchSize);
    }
}
