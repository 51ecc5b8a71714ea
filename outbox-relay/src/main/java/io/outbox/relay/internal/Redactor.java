package io.outbox.relay.internal;

import java.net.URLDecoder;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.common.config.ConfigDef;

/**
 * Hides secrets in text before it is printed, logged or served: the known secret values of a
 * configuration, and, whatever their source, the password of a URL's user info
 * ({@code scheme://user:secret@host}) and the value of a credential-named assignment
 * ({@code ?password=secret}, {@code ;PASSWORD=secret}, {@code password="secret"},
 * {@code "token": "..."}, {@code secret: ...}, {@code Authorization: Bearer ...}). Each hidden part
 * reads {@value #HIDDEN}. {@link #display} also escapes what a terminal would obey
 * ({@link LogText#visible}). Every surface that shows stored or foreign text (log lines, the
 * standalone relay's commands in text and JSON, the Spring Boot starter's Actuator endpoint) goes
 * through here.
 *
 * <p>A known secret is hidden wherever it occurs, even inside a longer word, so a short or common
 * password also hides harmless text; that is the price of never showing it. Matching is linear in
 * the text's length. Immutable and thread-safe.
 */
public final class Redactor {

    /** What a hidden secret reads as; the same marker Kafka uses for its password settings. */
    public static final String HIDDEN = "[hidden]";

    /** A URL's user info with a password: group 1 the scheme, 2 the user, 3 the password. */
    private static final Pattern URL_CREDENTIALS =
            Pattern.compile("(?i)(?<![a-z0-9+.-])([a-z][a-z0-9+.-]*+://)([^\\s/?#@:]*+):([^\\s/?#]*)@");

    /**
     * The key of an assignment on one line: group 1 the key (a run of word characters, dots and
     * dashes), group 2 an optional closing quote of the key, {@code =} or {@code :} and the blanks
     * around it. Possessive, so each character is looked at a bounded number of times.
     */
    private static final Pattern ASSIGNMENT = Pattern.compile("(?<![\\w.-])([\\w.-]++)([\"']?[ \\t]*+[=:][ \\t]*+)");

    /**
     * The value of an assignment whose key is secret, read only then: quoted (up to the closing
     * quote, or the end when there is none), an HTTP {@code Bearer} or {@code Basic} credential, or
     * up to the next separator; not one already hidden.
     */
    private static final Pattern VALUE = Pattern.compile("(?!" + Pattern.quote(HIDDEN) + ")"
            + "(?:\"[^\"]*+\"?|'[^']*+'?|(?i:bearer|basic)[ \\t]++[^\\s&;,)\"']++|[^\\s&;,)\"']++)");

    /**
     * Words that make a setting's name secret whatever its declared type (compared without case,
     * dots, dashes and underscores).
     */
    static final List<String> SECRET_WORDS =
            List.of("password", "passwd", "passphrase", "secret", "credential", "jaas");

    /**
     * More words that make the name of a setting no definition declares secret (passed through to
     * a serializer or a login module, such as {@code basic.auth.user.info}, {@code bearer.auth.token},
     * {@code api.key}): {@code auth}, {@code token}, {@code key}, and an explicit list of names that
     * hold credentials without saying so. docs/standalone-relay.md lists both lists ({@code RedactorTest}).
     */
    static final List<String> UNDECLARED_SECRET_WORDS = List.of("auth", "token", "key", "pwd", "userinfo",
            "bearer", "cookie", "signature", "private");

    /**
     * Words that make the key of an assignment in free text secret wherever they stand in it
     * ({@code ssl.keystore.password=}, {@code client.secret.name=}).
     */
    private static final List<String> TEXT_WORDS = List.of("password", "passwd", "pwd", "passphrase", "secret");

    /**
     * Words that make the key of an assignment in free text secret when it ends with one, alone
     * or plural ({@code access_token=}, {@code bearer.auth.token=}, {@code x-api-key:}, but not
     * {@code token.endpoint.url=}); narrower than for settings, since text says {@code key=} or
     * {@code auth:} of harmless things.
     */
    private static final List<String> TEXT_WORDS_LAST = List.of("token", "credential", "apikey", "accesskey",
            "privatekey", "userinfo", "authorization", "jaasconfig");

    private static final Redactor PATTERNS_ONLY = new Redactor(List.of());

    private final List<String> secrets;
    /** Finds the secrets in one pass; null when there are none. */
    private final SecretMatcher matcher;

    private Redactor(List<String> secrets) {
        this.secrets = secrets;
        this.matcher = secrets.isEmpty() ? null : new SecretMatcher(secrets);
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
        return new Redactor(List.copyOf(distinct));
    }

    /**
     * Whether a setting no definition declares holds a secret, by its name: it contains
     * {@code password}, {@code passwd}, {@code passphrase}, {@code secret}, {@code credential},
     * {@code jaas}, {@code auth}, {@code token}, {@code key}, {@code pwd}, {@code userinfo},
     * {@code bearer}, {@code cookie}, {@code signature} or {@code private}, ignoring case, dots,
     * dashes and underscores ({@code basic.auth.user.info}, {@code bearer.auth.token},
     * {@code api.key}, {@code aws_session_token}).
     *
     * @param name the setting's name; not null
     * @return true when its value must never be shown
     */
    public static boolean isSecretKey(String name) {
        return isSecretSetting(name, null);
    }

    /**
     * Whether a setting holds a secret: it is of type {@link ConfigDef.Type#PASSWORD}; or its name
     * contains {@code password}, {@code passwd}, {@code passphrase}, {@code secret},
     * {@code credential} or {@code jaas}, whatever its type; or it is declared by no definition
     * and its name is secret by {@link #isSecretKey}. A declared setting of another type (Kafka's
     * {@code key.serializer}, {@code partitioner.ignore.keys}) is shown: its definition says what
     * it holds.
     *
     * @param name the setting's name; not null
     * @param declaredType its type in the definition that declares it, or null when none does
     * @return true when its value must never be shown
     */
    public static boolean isSecretSetting(String name, ConfigDef.Type declaredType) {
        if (declaredType == ConfigDef.Type.PASSWORD) {
            return true;
        }
        String normalized = normalized(name);
        return containsAny(normalized, SECRET_WORDS)
                || (declaredType == null && containsAny(normalized, UNDECLARED_SECRET_WORDS));
    }

    private static String normalized(String name) {
        StringBuilder text = new StringBuilder(name.length());
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c != '.' && c != '-' && c != '_') {
                text.append(Character.toLowerCase(c));
            }
        }
        return text.toString();
    }

    private static boolean containsAny(String normalized, List<String> words) {
        for (String word : words) {
            if (normalized.contains(word)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The secrets embedded in a setting's value: URL passwords (also percent-decoded, as a driver
     * may log them) and the values of credential-named assignments.
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
        forEachSecretValue(value, (start, end) -> addWithDecoded(found, unquoted(value.substring(start, end))));
        found.remove(HIDDEN);
        found.remove("");
        return found;
    }

    /** What {@link #forEachSecretValue} calls with each value's range. */
    @FunctionalInterface
    private interface ValueRange {
        void accept(int start, int end);
    }

    /**
     * Calls back with the range of each value assigned to a credential-named key, in order. A
     * value is read only after its key was found secret, and the search goes on after it, or
     * after a harmless key's {@code =}, since a value may itself hold a key
     * ({@code url=jdbc:h2:mem:x;PASSWORD=pw}): linear in the text's length.
     */
    private static void forEachSecretValue(String text, ValueRange action) {
        Matcher key = ASSIGNMENT.matcher(text);
        Matcher value = VALUE.matcher(text);
        int from = 0;
        while (from < text.length() && key.find(from)) {
            from = key.end();
            if (isSecretTextKey(normalized(key.group(1))) && value.region(from, text.length()).lookingAt()) {
                action.accept(from, value.end());
                from = value.end();
            }
        }
    }

    private static String unquoted(String value) {
        if (value.startsWith("\"") || value.startsWith("'")) {
            int end = value.length() > 1 && value.charAt(value.length() - 1) == value.charAt(0)
                    ? value.length() - 1 : value.length();
            return value.substring(1, end);
        }
        return value;
    }

    private static boolean isSecretTextKey(String normalized) {
        if (containsAny(normalized, TEXT_WORDS)) {
            return true;
        }
        for (String word : TEXT_WORDS_LAST) {
            if (normalized.endsWith(word) || normalized.endsWith(word + "s")) {
                return true;
            }
        }
        return false;
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
     * (ISO-8859-1), as a stream of bytes sees it: each secret is also matched in that charset's
     * encoding and in UTF-8.
     *
     * @param charset the charset the text was encoded with; not null
     * @return a redactor for the byte view
     */
    public Redactor forBytesOf(Charset charset) {
        Set<String> encoded = new LinkedHashSet<>();
        for (String secret : secrets) {
            encoded.add(new String(secret.getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1));
            encoded.add(new String(secret.getBytes(charset), StandardCharsets.ISO_8859_1));
        }
        return of(encoded);
    }

    /**
     * Hides every known secret and every recognized credential in a text. For JSON, which escapes
     * by its own rules; for a terminal or a log line use {@link #display} or {@link #oneLine}.
     *
     * @param text the text; may be null
     * @return the text with secrets replaced by {@value #HIDDEN}; null for null
     */
    public String redact(String text) {
        if (text == null || text.isEmpty()) {
            return text;
        }
        // Overlapping secrets, or one inside another, are hidden as one stretch.
        String result = matcher == null ? text : matcher.replaceAll(text, HIDDEN);
        result = URL_CREDENTIALS.matcher(result).replaceAll("$1$2:" + Matcher.quoteReplacement(HIDDEN) + "@");
        return hideAssignments(result);
    }

    private static String hideAssignments(String text) {
        StringBuilder result = new StringBuilder(text.length());
        int[] copied = {0};
        forEachSecretValue(text, (start, end) -> {
            result.append(text, copied[0], start).append(HIDDEN);
            copied[0] = end;
        });
        return copied[0] == 0 ? text : result.append(text, copied[0], text.length()).toString();
    }

    /**
     * Text for a human on a terminal: {@link #redact redacted}, then with every control character,
     * bidirectional override or isolate and line or paragraph separator shown as an escape
     * ({@link LogText#visible}), so the text is one line that cannot move the cursor, recolour
     * the terminal or reorder what follows.
     *
     * @param text the text; may be null
     * @return the text to show; {@code "null"} for null
     */
    public String display(String text) {
        return LogText.visible(redact(text));
    }

    /**
     * Text for a log line: {@link #redact redacted}, then {@link LogText#oneLine}.
     *
     * @param text the text; may be null
     * @return the text on one line; {@code "null"} for null
     */
    public String oneLine(String text) {
        return LogText.oneLine(redact(text));
    }

    /**
     * How many secret values this redactor knows (for logs; never the values).
     *
     * @return the count
     */
    public int knownSecrets() {
        return secrets.size();
    }

    @Override
    public String toString() {
        return "Redactor[" + secrets.size() + " known secret(s)]";
    }
}
