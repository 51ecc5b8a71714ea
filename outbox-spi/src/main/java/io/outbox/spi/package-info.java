/**
 * The enqueue side of the outbox and the contract between the relay and a store.
 *
 * <p>Writers build an {@link io.outbox.spi.OutboxMessage} with
 * {@link io.outbox.spi.OutboxMessage#create(String, Object, Object,
 * org.apache.kafka.common.serialization.Serializer, org.apache.kafka.common.serialization.Serializer, int)
 * OutboxMessage.create} and persist it with their store's enqueue helper inside their own
 * transaction (rules E1-E5). A relay drains the store through the four methods of
 * {@link io.outbox.spi.OutboxStore} (rules S1-S12) and the optional capabilities
 * {@link io.outbox.spi.LeaseRenewal} (C1), {@link io.outbox.spi.PendingMetrics} (C2) and
 * {@link io.outbox.spi.LeaseRelease} (C3).
 *
 * <p>Lease arithmetic exists once, here: {@link io.outbox.spi.FairShare} computes each relay's
 * share and preferred range, and {@link io.outbox.spi.LeasePlan} turns one snapshot of heartbeats
 * and leases into the keep, release and claim writes a store performs (S4, S4b). Every store,
 * ours or a user's, calls them rather than reimplementing them.
 *
 * <p>Stores are found by name with {@link io.outbox.spi.OutboxStores#open(String, java.util.Map)}
 * through {@link java.util.ServiceLoader} and {@link io.outbox.spi.OutboxStoreProvider}.
 */
package io.outbox.spi;
