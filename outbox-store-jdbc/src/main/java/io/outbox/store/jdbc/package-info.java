/**
 * The outbox store for relational databases over JDBC: PostgreSQL, MySQL/MariaDB and H2.
 *
 * <ul>
 *   <li>{@link io.outbox.store.jdbc.JdbcOutboxWriter}, from {@code store.writer()}, writes messages on the application's own
 *       {@link java.sql.Connection}, in its transaction (rule E4); it works with plain JDBC,
 *       Spring's {@code JdbcTemplate} and {@code @Transactional}, jOOQ, or anything else that
 *       hands out the transaction's connection.</li>
 *   <li>{@link io.outbox.store.jdbc.JdbcOutboxStore} is the store the relay drains (rules S1-S13
 *       and the capabilities C1-C6), built with
 *       {@link io.outbox.store.jdbc.JdbcOutboxStore#builder(javax.sql.DataSource)}.</li>
 *   <li>{@link io.outbox.store.jdbc.JdbcOutboxStoreProvider} opens a store with its own pool
 *       from string settings, under the name {@code jdbc}.</li>
 *   <li>{@link io.outbox.store.jdbc.JdbcOutboxTables} and
 *       {@link io.outbox.store.jdbc.JdbcDialect} name the tables and render their DDL, which also
 *       ships as {@code io/outbox/store/jdbc/schema-<dialect>.sql}.</li>
 * </ul>
 */
package io.outbox.store.jdbc;
