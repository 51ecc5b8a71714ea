package io.outbox.relay.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.relay.internal.Redactor;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The redacting stream the standalone relay puts on stdout and stderr. */
class RedactingOutputStreamTest {

    @Test
    void redactsWholeLinesWhateverTheWriteBoundaries() throws IOException {
        ByteArrayOutputStream target = new ByteArrayOutputStream();
        RedactingOutputStream stream = new RedactingOutputStream(target, StandardCharsets.UTF_8);
        stream.redactor(Redactor.of(List.of("topsecret", "pässwörd")));
        byte[] text = "a topsecret b\nurl=jdbc:x://u:pw@h/db\nc pässwörd d\npartial top"
                .getBytes(StandardCharsets.UTF_8);
        for (byte b : text) {
            stream.write(new byte[] {b}, 0, 1); // one byte at a time: secrets and UTF-8 sequences split
        }
        assertThat(target.toString(StandardCharsets.UTF_8))
                .isEqualTo("a [hidden] b\nurl=jdbc:x://u:[hidden]@h/db\nc [hidden] d\n");
        stream.write("secret\n".getBytes(StandardCharsets.UTF_8));
        assertThat(target.toString(StandardCharsets.UTF_8)).endsWith("c [hidden] d\npartial [hidden]\n");
        stream.write('x');
        stream.flush();
        assertThat(target.toString(StandardCharsets.UTF_8)).endsWith("partial [hidden]\nx");
    }

    @Test
    void matchesSecretsInTheCharsetTheWriterUsed() {
        ByteArrayOutputStream target = new ByteArrayOutputStream();
        RedactingOutputStream stream = new RedactingOutputStream(target, StandardCharsets.ISO_8859_1);
        stream.redactor(Redactor.of(List.of("pässwörd")));
        try (PrintStream latin1 = new PrintStream(stream, true, StandardCharsets.ISO_8859_1);
             PrintStream utf8 = new PrintStream(stream, true, StandardCharsets.UTF_8)) {
            latin1.println("1 pässwörd");
            utf8.println("2 pässwörd");
        }
        assertThat(target.toString(StandardCharsets.ISO_8859_1)).isEqualTo("1 [hidden]\n2 [hidden]\n");
    }

    @Test
    void passesAVeryLongLineOnInPieces() throws IOException {
        ByteArrayOutputStream target = new ByteArrayOutputStream();
        RedactingOutputStream stream = new RedactingOutputStream(target, StandardCharsets.UTF_8);
        byte[] line = "y".repeat(RedactingOutputStream.MAX_LINE * 2 + 10).getBytes(StandardCharsets.UTF_8);
        stream.write(line);
        assertThat(target.size()).isEqualTo(RedactingOutputStream.MAX_LINE * 2);
        stream.close();
        assertThat(target.size()).isEqualTo(line.length);
    }
}
