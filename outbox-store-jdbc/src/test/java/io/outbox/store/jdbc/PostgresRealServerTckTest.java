package io.outbox.store.jdbc;

/** The whole store compatibility kit against PostgreSQL 15 at OUTBOX_TEST_POSTGRES_URL (default 127.0.0.1:5432/test). */
class PostgresRealServerTckTest extends JdbcStoreTckBase {

    @Override
    TestDatabase database() {
        return TestDatabase.postgres();
    }
}
