package io.outbox.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

/** {@code ./demo broker} is the embedded broker's command (run as a process in EmbeddedKafkaCommandTest). */
class BrokerCommandTest {

    @Test
    void demoBrokerHelpNamesThePortOptionAndItsDefault() {
        StringWriter out = new StringWriter();
        int status = new OutboxExamples().execute(new PrintWriter(out), new PrintWriter(new StringWriter()),
                "broker", "--help");
        assertThat(status).isZero();
        assertThat(out.toString()).contains("Usage: demo broker").contains("--port=PORT").contains("Default: 9092");
    }

    @Test
    void demoHelpListsTheBrokerCommand() {
        StringWriter out = new StringWriter();
        new OutboxExamples().execute(new PrintWriter(out), new PrintWriter(new StringWriter()), "--help");
        assertThat(out.toString()).contains("broker");
    }
}
