/**
 * The outbox store on Amazon DynamoDB (AWS SDK v2).
 *
 * <ul>
 *   <li>{@link io.outbox.store.dynamodb.DynamoDbOutboxWriter}, from {@code store.writer()}: the enqueue helper (rule E4); it
 *       reserves per-bucket sequence numbers (E5) and yields {@code TransactWriteItem}s for the
 *       caller's own {@code TransactWriteItems}.</li>
 *   <li>{@link io.outbox.store.dynamodb.DynamoDbOutboxStore}: the relay side, the four SPI methods
 *       (S1-S13) and capabilities C1 to C4 (no read ahead, C5), with conditional-write leases; built with
 *       {@link io.outbox.store.dynamodb.DynamoDbOutboxStore#builder(software.amazon.awssdk.services.dynamodb.DynamoDbClient)}.</li>
 *   <li>{@link io.outbox.store.dynamodb.DynamoDbOutboxTables}: the two table definitions.</li>
 *   <li>{@link io.outbox.store.dynamodb.DynamoDbOutboxStoreProvider}: discovery under the name
 *       {@code dynamodb}.</li>
 * </ul>
 */
package io.outbox.store.dynamodb;
