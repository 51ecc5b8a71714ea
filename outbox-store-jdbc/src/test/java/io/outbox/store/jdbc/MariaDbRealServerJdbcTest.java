package io.outbox.store.jdbc;

/** Transactional enqueue, lease races, chunking and schema against MariaDB 10.11 at OUTBOX_TEST_MARIADB_URL (default 127.0.0.1:3306/test). */
class MariaDbRealServerJdbcTest extends JdbcDatabaseTestBase {

    @Override
    TestDatabase database() {
        return TestDatabase.mariadb();
    }

    @Override
    JdbcDialect expectedDialect() {
        return JdbcDialect.MYSQL;
    }
}
