package io.outbox.relay.app;

import java.net.URLDecoder;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Hides secrets in text before it is printed or logged: the known secret values of the
 * configuration (settings of type password, passwords found inside URLs), and, whatever their
 * source, the password of a URL's user info ({@code scheme://user:secret@host}) and the value of a
 * password- or secret-named assignment ({@code ?password=secret}, {@code ;PASSWORD=secret},
 * {@code password="secret"}). Each hidden part reads {@value #HIDDEN}.
 *
 * <p>A known secret is hidden wherever it occurs, even inside a longer word, so a short or common
 * password also hides harmless text; that is the price of never showing it. Immutable and
 * thread-safe.
 *
 * <p>Public so that other programs of the project that print connection URLs (the demo) hide
 * secrets the same way; the standalone relay's other uses stay inside this package.
 */
public final class Redactor {

    /** What a hidden secret reads as; the same marker Kafka uses for its password settings. */
    public static final String HIDDEN = "[hidden]";

    /** A URL's user info with a password: group 1 the scheme, 2 the user, 3 the password. */
    private static final Pattern URL_CREDENTIALS =
            Pattern.compile("(?i)\\b([a-z][a-z0-9+.-]*://)([^\\s/?#@:]*):([^\\s/?#]*)@");

    /**
     * An assignment of a non-empty value to a password- or secret-named key, on one line: group 1
     * the key and '=', group 2 the value, quoted or up to the next separator.
     */
    private static final Pattern SECRET_ASSIGNMENT = Pattern.compile(
            "(?i)((?:password|passwd|pwd|passphrase|secret)[\\w.-]*[ \\t]*=[ \\t]*)(\"[^\"]*\"|'[^']*'|[^\\s&;,)\"']+)");

    /** Key names that hold secrets whatever their declared type. */
    private static final Pattern SECRET_KEY =
            Pattern.compile("password|passwd|passphrase|secret|jaas|credential", Pattern.CASE_INSENSITIVE);

    private static final Redactor PATTERNS_ONLY = new Redactor(List.of());

    private final List<String> secrets;

    private Redactor(List<String> secrets) {
        this.secrets = secrets;
    }

    /**
     * A redactor that knows no secret values and hides only what its patterns recognize.
     *
     * @return the shared instance
     */
    public static Redactor patternsOnly() {
        return PATTERNS_ONLY;
    }

    /**
     * A redactor that hides these values, and what its patterns recognize.
     *
     * @param secrets the values; null and empty ones are ignored
     * @return the redactor
     */
    public static Redactor of(Collection<String> secrets) {
        Set<String> distinct = new LinkedHashSet<>();
        for (String secret : secrets) {
            if (secret != null && !secret.isEmpty()) {
                distinct.add(secret);
            }
        }
        List<String> sorted = new ArrayList<>(distinct);
        // Longest first, so that a secret containing another one is hidden whole.
        sorted.sort(Comparator.comparingInt(String::length).reversed());
        return new Redactor(List.copyOf(sorted));
    }

    /**
     * Whether a setting's name says it holds a secret ({@code password}, {@code secret},
     * {@code jaas}, ...), whatever its declared type.
     *
     * @param key the setting's name; not null
     * @return true when its value must never be shown
     */
    static boolean isSecretKey(String key) {
        return SECRET_KEY.matcher(key).find();
    }

    /**
     * The secrets embedded in a setting's value: URL passwords (also percent-decoded, as a driver
     * may log them) and the values of password-named assignments.
     *
     * @param value the value; null gives none
     * @return the secrets found, in order; empty when none
     */
    public static Set<String> embeddedSecrets(String value) {
        Set<String> found = new LinkedHashSet<>();
        if (value == null) {
            return found;
        }
        Matcher url = URL_CREDENTIALS.matcher(value);
        while (url.find()) {
            addWithDecoded(found, url.group(3));
        }
        Matcher assignment = SECRET_ASSIGNMENT.matcher(value);
        while (assignment.find()) {
            String secret = assignment.group(2);
            if (secret.length() >= 2 && (secret.startsWith("\"") || secret.startsWith("'"))) {
                secret = secret.substring(1, secret.length() - 1);
            }
            addWithDecoded(found, secret);
        }
        found.remove(HIDDEN);
        found.remove("");
        return found;
    }

    private static void addWithDecoded(Set<String> found, String secret) {
        found.add(secret);
        if (secret.indexOf('%') >= 0) {
            try {
                found.add(URLDecoder.decode(secret.replace("+", "%2B"), StandardCharsets.UTF_8));
            } catch (IllegalArgumentException e) {
                // Not valid percent-encoding: the literal value is all there is to hide.
            }
        }
    }

    /**
     * The same redactor for text that is bytes of the given charset read one byte per character
     * (ISO-8859-1), as {@link RedactingOutputStream} sees it: each secret is also matched in that
     * charset's encoding and in UTF-8.
     *
     * @param charset the charset the text was encoded with; not null
     * @return a redactor for the byte view
     */
    Redactor forBytesOf(Charset charset) {
        Set<String> encoded = new LinkedHashSet<>();
        for (String secret : secrets) {
            encoded.add(new String(secret.getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1));
            encoded.add(new String(secret.getBytes(charset), StandardCharsets.ISO_8859_1));
        }
        return of(encoded);
    }

    /**
     * Hides every known secret and every recognized credential in a text.
     *
     * @param text the text; may be null
     * @return the text with secrets replaced by {@value #HIDDEN}; null for null
     */
    public String redact(String text) {
        if (text == null || text.isEmpty()) {
            return text;
        }
        String result = text;
        for (String secret : secrets) {
            result = result.replace(secret, HIDDEN);
        }
        result = URL_CREDENTIALS.matcher(result).replaceAll("$1$2:" + Matcher.quoteReplacement(HIDDEN) + "@");
        return SECRET_ASSIGNMENT.matcher(result).replaceAll("$1" + Matcher.quoteReplacement(HIDDEN));
    }

    /**
     * How many secret values this redactor knows (for logs; never the values).
     *
     * @return the count
     */
    int knownSecrets() {
        return secrets.size();
    }

    @Override
    public String toString() {
        return "Redactor[" + secrets.size() + " known secret(s)]";
    }
}
