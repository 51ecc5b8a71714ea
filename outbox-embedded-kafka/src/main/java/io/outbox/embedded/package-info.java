/**
 * An in-process, single-node Kafka broker for demos and tests:
 * {@link io.outbox.embedded.EmbeddedKafkaBroker}.
 */
package io.outbox.embedded;
