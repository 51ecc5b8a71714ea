package io.outbox.relay.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.OutboxRelay;
import org.junit.jupiter.api.Test;

/** The engine logs to the one logger the relay's documentation names, {@code io.outbox.relay.OutboxRelay}. */
class RelayLogTest {

    @Test
    void theEngineLogsToTheLoggerNamedAfterOutboxRelay() {
        assertThat(RelayLog.NAME).isEqualTo(OutboxRelay.class.getName());
        assertThat(RelayLog.LOG.getName()).isEqualTo(OutboxRelay.class.getName());
    }
}
