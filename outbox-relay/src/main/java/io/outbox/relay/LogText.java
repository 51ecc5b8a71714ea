package io.outbox.relay;

import java.util.regex.Pattern;

/**
 * Text for log lines that must stay one line, such as the ERROR line of a misconfiguration
 * (rule R6): a message may embed a database driver's message, which often spans lines.
 */
public final class LogText {

    private static final Pattern LINE_BREAK = Pattern.compile("\\s*\\R\\s*");

    private LogText() {
    }

    /**
     * The text on one line: each line break, with the white space around it, becomes one space.
     *
     * @param text any text, or null
     * @return the text without line breaks; {@code "null"} for null
     */
    public static String oneLine(String text) {
        return text == null ? "null" : LINE_BREAK.matcher(text.strip()).replaceAll(" ");
    }
}
