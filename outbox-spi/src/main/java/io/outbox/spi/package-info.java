/**
 * The contract between the relay and a store: what a store implements, nothing an application
 * calls when it enqueues.
 *
 * <p>A relay drains a store through the four methods of {@link io.outbox.spi.OutboxStore}
 * (rules S1-S13), which hand each message out as a {@link io.outbox.spi.Pending}: the message and
 * the store's opaque handle of its row. The optional capabilities are reached through the store's
 * accessors, each empty unless the store has it: {@link io.outbox.spi.LeaseRenewal} (C1),
 * {@link io.outbox.spi.PendingMetrics} (C2), {@link io.outbox.spi.LeaseRelease} (C3),
 * {@link io.outbox.spi.DeadLetters} (C4) and {@link io.outbox.spi.ReadAhead} (C5). A data error of
 * one row is a {@link io.outbox.spi.CorruptMessageException} naming the bucket and the message
 * (rule R12). Stores are found by name with
 * {@link io.outbox.spi.OutboxStores#open(String, java.util.Map)} through
 * {@link java.util.ServiceLoader} and {@link io.outbox.spi.OutboxStoreProvider}; a store opened so
 * owns its client and is a {@link io.outbox.spi.CloseableOutboxStore}.
 *
 * <p>{@link io.outbox.spi.OutboxMisconfigurationException} is fatal to a relay (rule R6); every
 * other exception a store throws is retried.
 *
 * <p>What store authors call to implement the contract (fair share, lease planning, the header
 * codec, the stored form of a message, argument checks) lives in {@link io.outbox.spi.support};
 * what applications use to build messages lives in {@link io.outbox}, which depends on nothing
 * here.
 */
package io.outbox.spi;
