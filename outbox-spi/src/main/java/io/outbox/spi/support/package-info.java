/**
 * Helpers for store authors. What every store shares exists once, here, and every store (ours or a
 * user's) calls it rather than reimplementing it:
 * <ul>
 *   <li>{@link io.outbox.spi.support.StoreArguments}: the argument checks of the SPI methods.</li>
 *   <li>{@link io.outbox.spi.support.LeaseAcquisition}: the whole acquire recipe (S4-S8) over a
 *       few primitives the store supplies ({@link io.outbox.spi.support.LeaseAcquisition.LeaseStore}).</li>
 *   <li>{@link io.outbox.spi.support.LeasePlan} and {@link io.outbox.spi.support.FairShare}: the
 *       lease arithmetic the recipe plans with (S4, S4b, S7).</li>
 *   <li>{@link io.outbox.spi.support.SequenceReservation}: per-bucket sequence numbers for stores
 *       without an auto-increment (E5).</li>
 *   <li>{@link io.outbox.spi.support.StoredMessages}: a message rebuilt from the bytes a driver
 *       returned and its bytes handed to a driver, without copies; the payload size a store's
 *       limit counts (S10). {@link io.outbox.spi.support.OutboxHeaderCodec}: the binary header
 *       format stores persist.</li>
 *   <li>{@link io.outbox.spi.support.ReadAheads}: capability C5 over {@code nextBatch}, for a
 *       store that cannot leave rows out in its query.</li>
 *   <li>{@link io.outbox.spi.support.OutboxStoreConfig}: a provider's configuration parsing.</li>
 * </ul>
 */
package io.outbox.spi.support;
