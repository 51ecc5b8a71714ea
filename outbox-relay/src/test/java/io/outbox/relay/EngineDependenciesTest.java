package io.outbox.relay;

import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

import org.junit.jupiter.api.Test;

/**
 * The engine module depends on no command-line library: the standalone relay's command line lives
 * in {@code outbox-relay-app}, so an application that embeds the relay never pulls picocli.
 */
class EngineDependenciesTest {

    @Test
    void engineClassPathHasNoPicocli() {
        assertThatExceptionOfType(ClassNotFoundException.class)
                .as("picocli must not be on outbox-relay's class path (main or transitive)")
                .isThrownBy(() -> Class.forName("picocli.CommandLine"));
    }
}
