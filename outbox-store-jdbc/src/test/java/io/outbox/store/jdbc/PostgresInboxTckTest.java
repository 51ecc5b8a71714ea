package io.outbox.store.jdbc;

/** The inbox kit on Postgres (see TestDatabase#postgres). */
class PostgresInboxTckTest extends JdbcInboxTckBase {

    @Override
    TestDatabase database() {
        return TestDatabase.postgres();
    }
}
