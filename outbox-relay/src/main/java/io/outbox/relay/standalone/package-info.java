/**
 * The standalone relay: {@link io.outbox.relay.standalone.StandaloneRelay} runs an
 * {@link io.outbox.relay.OutboxRelay} as a process of its own, configured from a properties file
 * and {@code OUTBOX_*} environment variables, with the command line parsed by picocli (an optional
 * dependency of this module: applications that embed the relay never need it). The module
 * {@code outbox-relay-app} packages it as an executable jar with every store.
 */
package io.outbox.relay.standalone;
