package io.outbox.demo;

import static org.assertj.core.api.Assertions.fail;

import io.outbox.embedded.EmbeddedKafkaBroker;

/**
 * The servers the end-to-end tests run against. Kafka is one in-process broker for the whole test
 * JVM (started on first use, stopped when the JVM exits). The databases are the ones
 * {@code scripts/test.sh} starts and announces in {@code OUTBOX_TEST_*} variables; a test whose
 * variable is missing fails, naming the variable and the script, and is never skipped.
 */
final class TestServers {

    private static EmbeddedKafkaBroker broker;

    private TestServers() {
    }

    /** The shared broker's address, for {@code --bootstrap-servers}. */
    static synchronized String kafka() {
        if (broker == null) {
            broker = EmbeddedKafkaBroker.start();
            Runtime.getRuntime().addShutdownHook(new Thread(broker::close, "shared-test-broker-stop"));
        }
        return broker.bootstrapServers();
    }

    /** A variable {@code scripts/test.sh} exports; fails the test when it is missing. */
    static String required(String variable, String what) {
        String value = System.getenv(variable);
        if (value == null || value.isBlank()) {
            fail(variable + " is not set. This test runs the demo against " + what + "; run the tests with "
                    + "`bash scripts/test.sh` (it starts the server and exports " + variable + "), for example "
                    + "`bash scripts/test.sh -pl outbox-demo -am`, or export " + variable + " yourself.");
        }
        return value.trim();
    }
}
