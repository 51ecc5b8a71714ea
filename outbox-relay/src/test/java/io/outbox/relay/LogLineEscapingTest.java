package io.outbox.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.outbox.OutboxMessage;
import io.outbox.relay.internal.LogText;
import io.outbox.spi.DeadLetter;
import io.outbox.tck.InMemoryOutboxStore;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The relay's log lines show foreign text (here a broker's error naming a topic that was written
 * into the store directly, with a line feed, ANSI and OSC escapes, a bell and a bidi override)
 * on one line with those characters as escapes ({@link LogText}), and store it so for display.
 * The log is captured where slf4j-simple writes it: standard error.
 */
class LogLineEscapingTest {

    private static final String HOSTILE = "Invalid topics: [orders\n2026-12-02 03:49:01 INFO forged line "
            + "\u001b[31mred\u001b]0;title\u0007\u202eevil]";

    private PrintStream original;
    private final ByteArrayOutputStream captured = new ByteArrayOutputStream();

    @BeforeEach
    void captureStandardError() {
        original = System.err;
        OutputStream both = new OutputStream() {
            @Override
            public void write(int b) {
                original.write(b);
                captured.write(b);
            }

            @Override
            public void write(byte[] bytes, int offset, int length) {
                original.write(bytes, offset, length);
                captured.write(bytes, offset, length);
            }
        };
        System.setErr(new PrintStream(both, true, StandardCharsets.UTF_8));
    }

    @AfterEach
    void restoreStandardError() {
        System.setErr(original);
    }

    private String log() {
        return captured.toString(StandardCharsets.UTF_8);
    }

    @Test
    void r12_theWarnLinesOfAFailingMessageShowControlCharactersAsEscapes() {
        InMemoryOutboxStore store = InMemoryOutboxStore.builder().build();
        StringSerializer s = new StringSerializer();
        OutboxMessage message = OutboxMessage.create("orders", "k", "v", s, s, 2);
        store.enqueue(List.of(message));
        ScriptedPublisher publisher = new ScriptedPublisher().answer(batch ->
                PublishResult.failure(0, new InvalidTopicException(HOSTILE)));
        RelayOptions options = RelayOptions.builder().relayId("relay-log").bucketCount(2).batchSize(10)
                .pollInterval(Duration.ofMillis(50)).errorBackoff(Duration.ofMillis(20))
                .maxErrorBackoff(Duration.ofMillis(50)).poisonPolicy(PoisonPolicy.DEAD_LETTER).poisonMaxAttempts(2)
                .build();
        try (OutboxRelay relay = OutboxRelay.builder(store, publisher).options(options).build()) {
            relay.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> store.deadLetters().orElseThrow().deadLetter(message.messageId()).isPresent()
                    && log().contains("moved a message to the dead letters"));
        }
        String escaped = "Invalid topics: [orders 2026-12-02 03:49:01 INFO forged line \\u001b[31mred\\u001b]0;title"
                + "\\u0007\\u202eevil]";
        List<String> lines = log().lines().filter(line -> line.contains("relayId=relay-log")).toList();
        assertThat(lines).filteredOn(line -> line.contains("message failed for a reason of its own")).singleElement()
                .satisfies(line -> assertThat(line).contains("WARN")
                        .endsWith("error=" + InvalidTopicException.class.getName() + ": " + escaped));
        assertThat(lines).filteredOn(line -> line.contains("moved a message to the dead letters")).singleElement()
                .satisfies(line -> assertThat(line).contains("WARN").endsWith("error=" + escaped));
        assertThat(log()).doesNotContain("\u001b", "\u0007", "\u202e").doesNotContain("\n2026-12-02 03:49:01 INFO");
        DeadLetter dead = store.deadLetters().orElseThrow().deadLetter(message.messageId()).orElseThrow();
        assertThat(dead.failure().reason()).as("stored for display as logged").isEqualTo(escaped);
    }
}
