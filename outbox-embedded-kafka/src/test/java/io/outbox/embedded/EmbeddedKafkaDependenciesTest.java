package io.outbox.embedded;

import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

import org.junit.jupiter.api.Test;

/**
 * The broker library carries no command line: {@code ./demo broker} lives in {@code outbox-demo},
 * so the modules that test against this broker never pull picocli.
 */
class EmbeddedKafkaDependenciesTest {

    @Test
    void classPathHasNoPicocli() {
        assertThatExceptionOfType(ClassNotFoundException.class)
                .as("picocli must not be on outbox-embedded-kafka's class path (main or transitive)")
                .isThrownBy(() -> Class.forName("picocli.CommandLine"));
    }
}
