/**
 * Unsupported internals of the relay, not an API: the engine behind
 * {@link io.outbox.relay.OutboxRelay}, and the text escaping and secret redaction that the
 * project's other modules (the standalone relay, the Spring Boot starter, the demo) share. Public
 * only so that those modules can use them; any release may change or remove them, and the
 * published Javadoc leaves them out.
 */
package io.outbox.relay.internal;
