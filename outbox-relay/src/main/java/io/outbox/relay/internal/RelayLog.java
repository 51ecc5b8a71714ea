package io.outbox.relay.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The SLF4J logger every part of the engine writes to: {@code io.outbox.relay.OutboxRelay}, the
 * one logger the relay's documentation names, whichever thread or class logs. Named by text, so
 * the engine does not depend on the class that builds it.
 */
final class RelayLog {

    /** The logger's name: that of {@code io.outbox.relay.OutboxRelay}. */
    static final String NAME = "io.outbox.relay.OutboxRelay";

    /** The logger. */
    static final Logger LOG = LoggerFactory.getLogger(NAME);

    private RelayLog() {
    }
}
