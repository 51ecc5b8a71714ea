package io.outbox.demo;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Reads a duration such as {@code 90s}, {@code 500ms}, {@code 2m}, {@code 1h}, {@code 30} (seconds) or
 * {@code PT30S}, positive and at most {@link #MAX} (every duration option is a timeout, and a longer
 * one would overflow where it becomes a deadline in nanoseconds).
 */
final class DurationConverter implements ITypeConverter<Duration> {

    /** The longest duration an option takes. */
    static final Duration MAX = Duration.ofHours(24);

    /** {@link #MAX} as the options write it. */
    static final String MAX_TEXT = "24h";

    private static final Pattern SIMPLE = Pattern.compile("(\\d+)\\s*(ms|s|m|h)?");

    /** A duration as the options write it: {@code 500ms}, {@code 90s}. */
    static String format(Duration duration) {
        return duration.toMillis() % 1000 == 0 ? duration.toSeconds() + "s" : duration.toMillis() + "ms";
    }

    @Override
    public Duration convert(String value) {
        Duration duration = parse(value);
        if (duration.isNegative() || duration.isZero()) {
            throw new TypeConversionException("'" + value + "' is not a positive duration");
        }
        if (duration.compareTo(MAX) > 0) {
            throw new TypeConversionException("'" + value + "' is longer than the most allowed, " + MAX_TEXT);
        }
        return duration;
    }

    private static Duration parse(String value) {
        String text = value.trim().toLowerCase(Locale.ROOT);
        Matcher m = SIMPLE.matcher(text);
        try {
            if (m.matches()) {
                long amount = Long.parseLong(m.group(1));
                String unit = m.group(2) == null ? "s" : m.group(2);
                return switch (unit) {
                    case "ms" -> Duration.ofMillis(amount);
                    case "m" -> Duration.ofMinutes(amount);
                    case "h" -> Duration.ofHours(amount);
                    default -> Duration.ofSeconds(amount);
                };
            }
            return Duration.parse(value.trim().toUpperCase(Locale.ROOT));
        } catch (NumberFormatException | ArithmeticException | DateTimeParseException e) {
            throw new TypeConversionException("'" + value + "' is not a duration; write e.g. 90s, 500ms, 2m or 1h");
        }
    }
}
