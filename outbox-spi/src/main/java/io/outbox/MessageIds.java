package io.outbox;

import java.util.UUID;

/**
 * The one parser of message ids given as text: a UUID in its canonical 36-character form,
 * {@code 8-4-4-4-12} hex digits, either case, nothing else. {@link UUID#fromString} is laxer: it
 * reads {@code 1-1-1-1-1} as {@code 00000001-0001-0001-0001-000000000001} and pads a group that
 * lost a digit, so a truncated id could name another message. Every place that takes a message
 * id as text (the operator commands, the Actuator endpoint, {@link MessageIdReader}) parses it
 * here.
 *
 * <p>Stateless; thread-safe.
 */
public final class MessageIds {

    /** The length of a message id's text. */
    public static final int LENGTH = 36;

    /** Longest part of a refused value that an error message repeats. */
    static final int SHOWN_CHARS = 64;

    private MessageIds() {
    }

    /**
     * Parses a message id.
     *
     * @param text the id; may be null
     * @return the id
     * @throws IllegalArgumentException if the text is null or not a canonical UUID; the message
     *     names the value (its first {@value #SHOWN_CHARS} characters and its length when longer)
     *     as given, so a printer that shows it on a terminal escapes it
     */
    public static UUID parse(String text) {
        UUID id = parseOrNull(text);
        if (id == null) {
            throw new IllegalArgumentException("not a message id: " + shown(text) + "; a message id is a UUID "
                    + "written as 8-4-4-4-12 hex digits (" + LENGTH + " characters), such as "
                    + "123e4567-e89b-42d3-a456-426614174000");
        }
        return id;
    }

    /**
     * Parses a message id, or says it is none.
     *
     * @param text the id; may be null
     * @return the id, or null when the text is null or not a canonical UUID
     */
    public static UUID parseOrNull(CharSequence text) {
        if (!isCanonical(text)) {
            return null;
        }
        return UUID.fromString(text.toString());
    }

    /**
     * Whether a text is a message id in canonical form.
     *
     * @param text the text; may be null
     * @return true for {@code 8-4-4-4-12} hex digits (ASCII {@code 0-9}, {@code a-f}, {@code A-F})
     *     and dashes at positions 8, 13, 18 and 23
     */
    public static boolean isCanonical(CharSequence text) {
        if (text == null || text.length() != LENGTH) {
            return false;
        }
        for (int i = 0; i < LENGTH; i++) {
            char c = text.charAt(i);
            boolean dash = i == 8 || i == 13 || i == 18 || i == 23;
            if (dash ? c != '-' : !isHexDigit(c)) {
                return false;
            }
        }
        return true;
    }

    private static boolean isHexDigit(char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    }

    private static String shown(String text) {
        if (text == null) {
            return "null";
        }
        if (text.length() <= SHOWN_CHARS) {
            return "'" + text + "'";
        }
        return "'" + text.substring(0, SHOWN_CHARS) + "'... (" + text.length() + " characters)";
    }
}
