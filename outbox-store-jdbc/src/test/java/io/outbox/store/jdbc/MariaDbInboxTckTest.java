package io.outbox.store.jdbc;

/** The inbox kit on MariaDb (see TestDatabase#mariadb). */
class MariaDbInboxTckTest extends JdbcInboxTckBase {

    @Override
    TestDatabase database() {
        return TestDatabase.mariadb();
    }
}
