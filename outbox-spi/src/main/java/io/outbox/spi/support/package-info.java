/**
 * Helpers for store authors. Lease arithmetic exists once, here:
 * {@link io.outbox.spi.support.FairShare} computes each relay's share and preferred range, and
 * {@link io.outbox.spi.support.LeasePlan} turns one snapshot of heartbeats and leases into the keep,
 * release and claim writes a store performs (rules S4, S4b). {@link io.outbox.spi.support.OutboxHeaderCodec}
 * is the binary header format stores persist, and {@link io.outbox.spi.support.OutboxStoreConfig}
 * parses a provider's configuration. Every store, ours or a user's, calls these rather than
 * reimplementing them.
 */
package io.outbox.spi.support;
