package io.outbox.store.jdbc;

/** Transactional enqueue, lease races, chunking and schema against embedded H2, in memory. */
class H2EmbeddedJdbcTest extends JdbcDatabaseTestBase {

    @Override
    TestDatabase database() {
        return TestDatabase.h2();
    }

    @Override
    JdbcDialect expectedDialect() {
        return JdbcDialect.H2;
    }
}
