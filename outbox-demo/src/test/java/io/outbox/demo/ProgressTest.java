package io.outbox.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class ProgressTest {

    @Test
    void withoutATerminalProgressIsALineAtEachInterval() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        try (Progress progress = Progress.start(true, "delivered", 1_000, false, out, 100)) {
            progress.update(250, "placed 300, relayed 260");
            // A line drawn between the update's message and its count may show the count before it.
            await().atMost(Duration.ofSeconds(20)).until(() -> lines(bytes).length >= 2
                    && String.join("\n", lines(bytes)).contains("250/1000"));
        }
        String[] lines = lines(bytes);
        assertThat(lines).anySatisfy(line -> assertThat(line).contains("delivered").contains("250/1000")
                .contains("placed 300, relayed 260"));
        assertThat(String.join("\n", lines)).doesNotContain("\r");
    }

    @Test
    void noProgressWritesNothing() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (Progress progress = Progress.start(false, "delivered", 10, false,
                new PrintStream(bytes, true, StandardCharsets.UTF_8), 10)) {
            progress.update(5, "");
        }
        assertThat(bytes.size()).isZero();
    }

    private static String[] lines(ByteArrayOutputStream bytes) {
        String text = bytes.toString(StandardCharsets.UTF_8);
        return text.isEmpty() ? new String[0] : text.split("\n");
    }
}
