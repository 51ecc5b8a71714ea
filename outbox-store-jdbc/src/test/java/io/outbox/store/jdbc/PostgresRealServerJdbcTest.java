package io.outbox.store.jdbc;

/** Transactional enqueue, lease races, chunking and schema against PostgreSQL 15 at OUTBOX_TEST_POSTGRES_URL (default 127.0.0.1:5432/test). */
class PostgresRealServerJdbcTest extends JdbcDatabaseTestBase {

    @Override
    TestDatabase database() {
        return TestDatabase.postgres();
    }

    @Override
    JdbcDialect expectedDialect() {
        return JdbcDialect.POSTGRESQL;
    }
}
