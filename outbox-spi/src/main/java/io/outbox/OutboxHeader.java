package io.outbox;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;
import org.apache.kafka.common.header.Header;

/**
 * An immutable Kafka record header: a non-null name and a value that may be {@code null}.
 *
 * <p>Unlike Kafka's {@code RecordHeader}, whose value array can be changed by anyone holding it,
 * this class copies the value on the way in and on the way out, so an {@link OutboxMessage} stays
 * exactly what was enqueued (rule S10). Equality compares the name and the value bytes.
 *
 * <p>The name must be well-formed Unicode: Kafka sends names as UTF-8 and the stores keep them so,
 * and a lone surrogate has no UTF-8 form (Kafka would send '?' instead), so such a name is refused
 * when the header is made.
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class OutboxHeader implements Header {

    private final String key;
    private final byte[] value;

    private OutboxHeader(String key, byte[] value) {
        this.key = requireWellFormed(Objects.requireNonNull(key, "header key must not be null"));
        this.value = value == null ? null : value.clone();
    }

    /**
     * Creates a header.
     *
     * @param key the header name; not null, may be empty, well-formed Unicode
     * @param value the header value; may be null, copied
     * @return the header
     * @throws NullPointerException if {@code key} is null
     * @throws IllegalArgumentException if {@code key} holds a lone surrogate, naming the key
     */
    public static OutboxHeader of(String key, byte[] value) {
        return new OutboxHeader(key, value);
    }

    /**
     * Creates a header whose value is the UTF-8 encoding of a string.
     *
     * @param key the header name; not null, well-formed Unicode
     * @param value the header value; may be null (a header with a null value)
     * @return the header
     * @throws NullPointerException if {@code key} is null
     * @throws IllegalArgumentException if {@code key} holds a lone surrogate, naming the key
     */
    public static OutboxHeader ofUtf8(String key, String value) {
        return new OutboxHeader(key, value == null ? null : value.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Returns an immutable copy of any Kafka header.
     *
     * @param header the header to copy; not null, and its key not null and well-formed Unicode
     * @return {@code header} itself when it is already an {@code OutboxHeader}, else a copy
     * @throws NullPointerException if {@code header} or its key is null
     * @throws IllegalArgumentException if the key holds a lone surrogate, naming the key
     */
    public static OutboxHeader copyOf(Header header) {
        Objects.requireNonNull(header, "header must not be null");
        return header instanceof OutboxHeader h ? h : new OutboxHeader(header.key(), header.value());
    }

    /**
     * The header name.
     *
     * @return the name; never null
     */
    @Override
    public String key() {
        return key;
    }

    /**
     * A copy of the header value.
     *
     * @return a fresh copy of the value, or null when the header has a null value
     */
    @Override
    public byte[] value() {
        return value == null ? null : value.clone();
    }

    /**
     * The length of the value in bytes.
     *
     * @return the value length in bytes, or -1 when the value is null
     */
    public int valueLength() {
        return value == null ? -1 : value.length;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof OutboxHeader h && key.equals(h.key) && Arrays.equals(value, h.value);
    }

    @Override
    public int hashCode() {
        return 31 * key.hashCode() + Arrays.hashCode(value);
    }

    /**
     * A header name in strict UTF-8 needs well-formed UTF-16: a lone surrogate cannot round-trip,
     * so it is refused rather than silently turned into '?' as {@link String#getBytes} would.
     */
    private static String requireWellFormed(String name) {
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < name.length() && Character.isLowSurrogate(name.charAt(i + 1))) {
                i++; // a pair
            } else if (Character.isSurrogate(c)) {
                throw new IllegalArgumentException("header key " + describe(name) + " is not well-formed Unicode (it "
                        + "holds a lone surrogate at index " + i + ") and cannot be sent or stored exactly");
            }
        }
        return name;
    }

    private static String describe(String name) {
        StringBuilder sb = new StringBuilder("\"");
        name.codePoints().forEach(cp -> {
            if (cp >= 0x20 && cp < 0x7f) {
                sb.appendCodePoint(cp);
            } else {
                sb.append(String.format("\\u%04x", cp));
            }
        });
        return sb.append('"').toString();
    }

    /** Shows the name and the value's length, never the value itself (it may be sensitive). */
    @Override
    public String toString() {
        return "OutboxHeader[" + key + ", " + (value == null ? "null" : value.length + " bytes") + "]";
    }
}
