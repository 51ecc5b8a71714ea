package io.outbox.store.jdbc;

/** The inbox kit on H2 (see TestDatabase#h2). */
class H2InboxTckTest extends JdbcInboxTckBase {

    @Override
    TestDatabase database() {
        return TestDatabase.h2();
    }
}
