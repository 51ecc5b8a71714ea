/**
 * Unsupported internals shared between the library's own packages; not an API, it may change in
 * any release. Store authors use {@link io.outbox.spi.support.StoredMessages} instead.
 */
package io.outbox.internal;
