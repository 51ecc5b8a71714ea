package io.outbox.relay;

import io.outbox.embedded.EmbeddedKafkaBroker;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One in-process Kafka broker per test class: register it as a static field with
 * {@code @RegisterExtension}; it starts before the class's first test and stops after its last.
 */
final class KafkaBroker implements BeforeAllCallback, AfterAllCallback {

    private EmbeddedKafkaBroker broker;

    @Override
    public void beforeAll(ExtensionContext context) {
        broker = EmbeddedKafkaBroker.start();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        broker.close();
    }

    EmbeddedKafkaBroker broker() {
        return broker;
    }
}
