package io.outbox.store.jdbc;

/** The whole store compatibility kit against MariaDB 10.11 at OUTBOX_TEST_MARIADB_URL (default 127.0.0.1:3306/test). */
class MariaDbRealServerTckTest extends JdbcStoreTckBase {

    @Override
    TestDatabase database() {
        return TestDatabase.mariadb();
    }
}
