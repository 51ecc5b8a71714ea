/**
 * The standalone relay: {@link io.outbox.relay.app.StandaloneRelay} runs an
 * {@link io.outbox.relay.OutboxRelay} as a process of its own, configured from a properties file
 * and {@code OUTBOX_*} environment variables, with the command line parsed by picocli. This
 * module ({@code outbox-relay-app}) also packages it as an executable jar with every store;
 * {@code outbox-relay} itself (the engine and the publisher) depends on no command-line library.
 */
package io.outbox.relay.app;
