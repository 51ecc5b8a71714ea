package io.outbox.relay.app;

import io.outbox.relay.internal.Redactor;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * An output stream that passes text on line by line, each line through a {@link Redactor}. The
 * standalone relay puts one in front of the process's standard error and standard output, so that
 * whatever reaches them (the log, a library's message, a stack trace) shows no secret of the
 * configuration, whoever wrote it.
 *
 * <p>Bytes are held until a line feed, a {@link #flush()} or {@value #MAX_LINE} bytes, then
 * redacted and written. Lines are handled as bytes (one character per byte), so any charset passes
 * through unchanged; secrets are matched in UTF-8 and in the charset given at construction.
 * Thread-safe; writes of different threads are not interleaved within a line.
 */
final class RedactingOutputStream extends OutputStream {

    /** Longest run of bytes held back waiting for a line feed. */
    static final int MAX_LINE = 64 * 1024;

    private final OutputStream target;
    private final Charset charset;
    private final ByteArrayOutputStream line = new ByteArrayOutputStream(256);
    private Redactor redactor;

    /**
     * Creates the stream with a redactor that knows no secret values yet.
     *
     * @param target where redacted lines go; not null; not closed by {@link #close()}
     * @param charset the charset text is usually encoded with; not null
     */
    RedactingOutputStream(OutputStream target, Charset charset) {
        this.target = Objects.requireNonNull(target, "target must not be null");
        this.charset = Objects.requireNonNull(charset, "charset must not be null");
        this.redactor = Redactor.patternsOnly();
    }

    /**
     * Replaces the redactor, for example once the configuration's secrets are known.
     *
     * @param redactor the new redactor; not null
     */
    synchronized void redactor(Redactor redactor) {
        this.redactor = Objects.requireNonNull(redactor, "redactor must not be null").forBytesOf(charset);
    }

    @Override
    public synchronized void write(int b) throws IOException {
        line.write(b);
        if (b == '\n' || line.size() >= MAX_LINE) {
            emit();
        }
    }

    @Override
    public synchronized void write(byte[] bytes, int offset, int length) throws IOException {
        Objects.checkFromIndexSize(offset, length, bytes.length);
        int start = offset;
        int end = offset + length;
        for (int i = offset; i < end; i++) {
            if (bytes[i] == '\n' || line.size() + (i - start + 1) >= MAX_LINE) {
                line.write(bytes, start, i - start + 1);
                emit();
                start = i + 1;
            }
        }
        line.write(bytes, start, end - start);
    }

    @Override
    public synchronized void flush() throws IOException {
        emit();
        target.flush();
    }

    /** Writes what is held back; the target stays open. */
    @Override
    public void close() throws IOException {
        flush();
    }

    private void emit() throws IOException {
        if (line.size() == 0) {
            return;
        }
        String text = line.toString(StandardCharsets.ISO_8859_1);
        line.reset();
        target.write(redactor.redact(text).getBytes(StandardCharsets.ISO_8859_1));
    }
}
