package io.outbox.store.jdbc;

/** The whole store compatibility kit against embedded H2, in memory. */
class H2EmbeddedTckTest extends JdbcStoreTckBase {

    @Override
    TestDatabase database() {
        return TestDatabase.h2();
    }
}
