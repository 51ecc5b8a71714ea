package io.outbox.spi.support;

import io.outbox.OutboxHeader;
import io.outbox.spi.CorruptHeadersException;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.kafka.common.header.Header;

/**
 * A versioned binary encoding of a list of record headers, for stores that keep headers in one
 * binary column or attribute.
 *
 * <p>Version 1 layout (all integers are 4-byte big-endian, signed):
 * <pre>
 *   byte    version = 1
 *   int32   header count (n &gt;= 0)
 *   n times:
 *     int32 name length in bytes (&gt;= 0), then the name in UTF-8
 *     int32 value length in bytes, -1 for a null value, then the value bytes
 * </pre>
 * Order, repeated names, null values, empty names and values, and non-ASCII names survive a
 * round trip byte for byte (rule S10). Decoding is strict: an unknown version, a length that runs
 * past the end, a name that is not valid UTF-8 or bytes left over after the last header raise
 * {@link CorruptHeadersException} naming the problem and its offset; a blob is never decoded in
 * part.
 *
 * <p>This class is stateless and thread-safe.
 */
public final class OutboxHeaderCodec {

    /** The version byte written by {@link #encode(List)}. */
    public static final byte VERSION_1 = 1;

    /**
     * The encoded size of an empty header list, in bytes: {@value} (the version byte and the
     * count). Every store here keeps this blob for a message without headers and counts it in
     * {@link StoredMessages#payloadSize}, so such a message holds at most
     * {@code maxPayloadBytes() - }{@value} bytes of key and value together.
     */
    public static final int EMPTY_ENCODED_SIZE = 1 + Integer.BYTES;

    private static final int INT_BYTES = Integer.BYTES;

    private OutboxHeaderCodec() {
    }

    /**
     * Encodes headers in the version 1 layout.
     *
     * @param headers the headers in order; not null, no null elements; an empty list encodes to
     *     5 bytes
     * @return the encoded bytes; never null
     * @throws NullPointerException if {@code headers}, an element or a header key is null
     * @throws IllegalArgumentException if a header key is not well-formed Unicode (a lone surrogate)
     */
    public static byte[] encode(List<? extends Header> headers) {
        Objects.requireNonNull(headers, "headers must not be null");
        ByteArrayOutputStream out = new ByteArrayOutputStream(encodedSize(headers));
        out.write(VERSION_1);
        writeInt(out, headers.size());
        for (Header header : headers) {
            Objects.requireNonNull(header, "headers must not contain null");
            byte[] name = utf8Name(header.key());
            writeInt(out, name.length);
            out.write(name, 0, name.length);
            byte[] value = header.value();
            if (value == null) {
                writeInt(out, -1);
            } else {
                writeInt(out, value.length);
                out.write(value, 0, value.length);
            }
        }
        return out.toByteArray();
    }

    /**
     * The number of bytes {@link #encode(List)} produces for these headers, without encoding them.
     *
     * @param headers the headers; not null, no null elements
     * @return the encoded size in bytes
     * @throws NullPointerException if {@code headers}, an element or a header key is null
     * @throws IllegalArgumentException if a header key is not well-formed Unicode (a lone surrogate)
     */
    public static int encodedSize(List<? extends Header> headers) {
        long size = 1 + INT_BYTES;
        for (Header header : headers) {
            Objects.requireNonNull(header, "headers must not contain null");
            size += INT_BYTES + utf8Name(header.key()).length;
            size += INT_BYTES;
            if (header instanceof OutboxHeader h) {
                size += Math.max(0, h.valueLength());
            } else if (header.value() != null) {
                size += header.value().length;
            }
        }
        if (size > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("headers too large to encode: " + size + " bytes");
        }
        return (int) size;
    }

    /**
     * Decodes a blob written by {@link #encode(List)}.
     *
     * @param blob the encoded headers; not null
     * @return the headers, in their original order, as an immutable list of {@link OutboxHeader}
     * @throws NullPointerException if {@code blob} is null
     * @throws CorruptHeadersException if the blob is empty, has an unknown version, is truncated,
     *     has trailing bytes, a negative length, or a name that is not valid UTF-8
     */
    public static List<OutboxHeader> decode(byte[] blob) {
        Objects.requireNonNull(blob, "blob must not be null");
        ByteBuffer in = ByteBuffer.wrap(blob);
        if (!in.hasRemaining()) {
            throw new CorruptHeadersException("header blob is empty (expected at least a version byte)");
        }
        byte version = in.get();
        if (version != VERSION_1) {
            throw new CorruptHeadersException("header blob has unknown version " + version
                    + " (this library reads version " + VERSION_1 + ")");
        }
        int count = readLength(in, "header count", -1);
        // Each header takes at least two length fields: reject absurd counts before allocating.
        if ((long) count * 2 * INT_BYTES > in.remaining()) {
            throw new CorruptHeadersException("header blob declares " + count + " headers but only "
                    + in.remaining() + " bytes follow at offset " + in.position());
        }
        if (count == 0) { // most messages: no decoder, no list (a relay decodes every message it reads)
            requireNoTrailingBytes(in, count);
            return List.of();
        }
        CharsetDecoder utf8 = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        List<OutboxHeader> headers = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            int nameLength = readLength(in, "name length", i);
            int nameOffset = in.position();
            ByteBuffer nameBytes = slice(in, nameLength, "name", i);
            String name;
            try {
                CharBuffer chars = utf8.decode(nameBytes);
                name = chars.toString();
            } catch (CharacterCodingException e) {
                throw new CorruptHeadersException("name of header #" + i + " at offset " + nameOffset
                        + " is not valid UTF-8", e);
            }
            int valueLength = readInt(in, "value length", i);
            byte[] value = null;
            if (valueLength < -1) {
                throw new CorruptHeadersException("value length of header #" + i + " is " + valueLength
                        + " at offset " + (in.position() - INT_BYTES) + " (must be -1 or more)");
            }
            if (valueLength >= 0) {
                ByteBuffer valueBytes = slice(in, valueLength, "value", i);
                value = new byte[valueLength];
                valueBytes.get(value);
            }
            headers.add(OutboxHeader.of(name, value));
        }
        requireNoTrailingBytes(in, count);
        return List.copyOf(headers);
    }

    private static void requireNoTrailingBytes(ByteBuffer in, int count) {
        if (in.hasRemaining()) {
            throw new CorruptHeadersException("header blob has " + in.remaining()
                    + " trailing bytes after the last of " + count + " headers at offset " + in.position());
        }
    }

    /**
     * "name length of header #2" for a field of header {@code header}, {@code what} alone for a
     * field of the blob ({@code header} negative); built only for an error message.
     */
    private static String field(String what, int header) {
        return header < 0 ? what : what + " of header #" + header;
    }

    private static int readLength(ByteBuffer in, String what, int header) {
        int length = readInt(in, what, header);
        if (length < 0) {
            throw new CorruptHeadersException(field(what, header) + " is negative (" + length + ") at offset "
                    + (in.position() - INT_BYTES));
        }
        return length;
    }

    private static int readInt(ByteBuffer in, String what, int header) {
        if (in.remaining() < INT_BYTES) {
            throw new CorruptHeadersException("header blob is truncated: " + field(what, header) + " needs "
                    + INT_BYTES + " bytes at offset " + in.position() + " but " + in.remaining() + " remain");
        }
        return in.getInt();
    }

    private static ByteBuffer slice(ByteBuffer in, int length, String what, int header) {
        if (length > in.remaining()) {
            throw new CorruptHeadersException("header blob is truncated: " + field(what, header) + " needs " + length
                    + " bytes at offset " + in.position() + " but " + in.remaining() + " remain");
        }
        ByteBuffer slice = in.slice(in.position(), length);
        in.position(in.position() + length);
        return slice;
    }

    private static void writeInt(ByteArrayOutputStream out, int v) {
        out.write(v >>> 24);
        out.write(v >>> 16);
        out.write(v >>> 8);
        out.write(v);
    }

    /**
     * A header name in strict UTF-8: a name holding a lone surrogate cannot round-trip, so it is
     * refused rather than silently turned into '?' as {@link String#getBytes} would.
     *
     * @param name the header name; not null
     * @return its UTF-8 bytes, a new array
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is not well-formed Unicode (a lone surrogate),
     *     with the message {@link OutboxHeader} refuses such a name with
     */
    public static byte[] utf8Name(String name) {
        Objects.requireNonNull(name, "header key must not be null");
        try {
            ByteBuffer bytes = StandardCharsets.UTF_8.newEncoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .encode(CharBuffer.wrap(name));
            byte[] out = new byte[bytes.remaining()];
            bytes.get(out);
            return out;
        } catch (CharacterCodingException e) {
            OutboxHeader.of(name, null); // throws, naming the key
            throw new IllegalStateException("OutboxHeader accepted a header key the UTF-8 encoder refuses", e);
        }
    }
}
