package io.outbox.relay.internal;

/**
 * Text from outside (a stored topic or reason, a driver's message) made safe to show on a
 * terminal or in a log line: the one place that decides which characters are shown as escapes.
 * Those are the control characters (C0, DEL, C1: ESC starts the ANSI and OSC sequences that recolour
 * a terminal, set its title or move its cursor; BEL rings it; a line feed forges a log line),
 * the bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069, which reorder what
 * follows on screen) and the line and paragraph separators (U+2028, U+2029). Each is shown as
 * {@code \}{@code uXXXX} (an ESC as {@code \}{@code u001b}); every other character, a backslash
 * included, stays as it is. JSON output escapes by JSON's rules instead and stays exact.
 */
public final class LogText {

    private LogText() {
    }

    /**
     * The text on one line, such as the ERROR line of a misconfiguration (rule R6), which may embed
     * a database driver's multi-line message: each line break, with the white space around it,
     * becomes one space; then {@link #visible}.
     *
     * @param text any text, or null
     * @return the text without line breaks or characters a terminal obeys; {@code "null"} for null
     */
    public static String oneLine(String text) {
        if (text == null) {
            return "null";
        }
        String stripped = text.strip();
        StringBuilder line = new StringBuilder(stripped.length());
        for (int i = 0; i < stripped.length(); i++) {
            char c = stripped.charAt(i);
            if (!isLineBreak(c)) {
                line.append(c);
                continue;
            }
            // Each character is removed or skipped at most once: linear in the text's length.
            while (line.length() > 0 && isBlank(line.charAt(line.length() - 1))) {
                line.setLength(line.length() - 1);
            }
            while (i + 1 < stripped.length()
                    && (isBlank(stripped.charAt(i + 1)) || isLineBreak(stripped.charAt(i + 1)))) {
                i++;
            }
            line.append(' ');
        }
        return visible(line.toString());
    }

    /** What a regular expression's {@code \R} matches: LF, VT, FF, CR, NEL, LS, PS. */
    private static boolean isLineBreak(char c) {
        return (c >= '\n' && c <= '\r') || c == '\u0085' || c == '\u2028' || c == '\u2029';
    }

    private static boolean isBlank(char c) {
        return c == ' ' || c == '\t';
    }

    /**
     * The text with every character {@link #isEscaped} shown as {@code \}{@code uXXXX}, lower-case
     * hex digits.
     *
     * @param text any text, or null
     * @return the text, safe to print; {@code "null"} for null; the same instance when nothing
     *     needed escaping
     */
    public static String visible(String text) {
        if (text == null) {
            return "null";
        }
        int first = 0;
        while (first < text.length() && !isEscaped(text.charAt(first))) {
            first++;
        }
        if (first == text.length()) {
            return text;
        }
        StringBuilder shown = new StringBuilder(text.length() + 16).append(text, 0, first);
        for (int i = first; i < text.length(); i++) {
            char c = text.charAt(i);
            if (isEscaped(c)) {
                appendEscape(shown, c);
            } else {
                shown.append(c);
            }
        }
        return shown.toString();
    }

    /**
     * Whether a character is shown as an escape: a control character (U+0000-U+001F, U+007F,
     * U+0080-U+009F), a bidirectional override or isolate (U+202A-U+202E, U+2066-U+2069), or a
     * line or paragraph separator (U+2028, U+2029). JSON printers escape these too, so that
     * their output is safe on a terminal as well.
     *
     * @param c the character
     * @return true when {@link #visible} escapes it
     */
    public static boolean isEscaped(char c) {
        return c < 0x20 || (c >= 0x7f && c <= 0x9f) || (c >= '\u2028' && c <= '\u202e')
                || (c >= '\u2066' && c <= '\u2069');
    }

    /**
     * Appends {@code \}{@code uXXXX} for a character, lower-case hex digits: the escape of
     * {@link #visible}, which is also JSON's.
     *
     * @param text where to append; not null
     * @param c the character
     */
    public static void appendEscape(StringBuilder text, char c) {
        String hex = Integer.toHexString(c);
        text.append("\\u");
        for (int pad = hex.length(); pad < 4; pad++) {
            text.append('0');
        }
        text.append(hex);
    }
}
