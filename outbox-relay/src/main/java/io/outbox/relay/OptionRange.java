package io.outbox.relay;

import io.outbox.spi.LeaseRequest;
import io.outbox.spi.OutboxMisconfigurationException;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;

/**
 * The valid values of one relay option (rule R10), used twice from {@link RelayOptions#configDef()}:
 * its {@link #toString()} is the range a {@code --help} text and the reference page
 * {@code docs/reference/relay-options.md} state, and {@link #check} is the validation
 * {@link RelayOptions.Builder#build()} runs. Immutable.
 */
final class OptionRange implements ConfigDef.Validator {

    private enum Kind { RELAY_ID, COUNT, MILLIS, CHOICE, BOOL }

    private static final long DAY_MS = Duration.ofDays(1).toMillis();

    private final Kind kind;
    private final long min;
    private final long max;
    private final String unit;
    private final boolean nullable;
    private final List<String> choices;

    private OptionRange(Kind kind, long min, long max, String unit, boolean nullable) {
        this.kind = kind;
        this.min = min;
        this.max = max;
        this.unit = unit;
        this.nullable = nullable;
        this.choices = List.of();
    }

    private OptionRange(List<String> choices) {
        this.kind = Kind.CHOICE;
        this.min = 0;
        this.max = 0;
        this.unit = "";
        this.nullable = false;
        this.choices = choices;
    }

    /** A boolean option: any non-null value. */
    static OptionRange bool() {
        return new OptionRange(Kind.BOOL, 0, 1, "", false);
    }

    /** One of these names (a string option). */
    static OptionRange choice(String... names) {
        return new OptionRange(List.of(names));
    }

    /** A relay id as {@link LeaseRequest#requireRelayId} accepts it; null means "generate one". */
    static OptionRange relayId() {
        return new OptionRange(Kind.RELAY_ID, 1, LeaseRequest.MAX_RELAY_ID_LENGTH, " chars", true);
    }

    /** An int in {@code [min, max]}; {@code unit} (with its leading space) only shows in the text. */
    static OptionRange count(int min, int max, String unit) {
        return new OptionRange(Kind.COUNT, min, max, unit, false);
    }

    /** A byte count in {@code [min, max]}; null allowed when {@code nullable} (then a default is derived). */
    static OptionRange bytes(long min, long max, boolean nullable) {
        return new OptionRange(Kind.COUNT, min, max, " bytes", nullable);
    }

    /** A duration in {@code [min, max]} milliseconds, given as a {@link Duration} or a long. */
    static OptionRange millis(long min, long max, boolean nullable) {
        return new OptionRange(Kind.MILLIS, min, max, " ms", nullable);
    }

    /**
     * Checks a value.
     *
     * @param key the option's key, for the message
     * @param value an Integer, a Long (milliseconds), a Duration or a String, by the option's type
     * @throws OutboxMisconfigurationException naming the key and the value when it is outside the range
     */
    void check(String key, Object value) {
        if (value == null) {
            if (!nullable) {
                throw invalid(key, "must not be null", null);
            }
            return;
        }
        switch (kind) {
            case BOOL -> {
                if (!(value instanceof Boolean)) {
                    throw invalid(key, "must be true or false", "'" + value + "'");
                }
            }
            case CHOICE -> {
                if (!choices.contains(value)) {
                    throw invalid(key, "must be one of " + String.join(", ", choices), "'" + value + "'");
                }
            }
            case RELAY_ID -> {
                try {
                    LeaseRequest.requireRelayId((String) value);
                } catch (IllegalArgumentException e) {
                    throw new OutboxMisconfigurationException("relay option " + key + " "
                            + e.getMessage().replaceFirst("^relayId ", ""), e);
                }
            }
            case COUNT -> {
                long n = ((Number) value).longValue();
                if (n < min || n > max) {
                    throw invalid(key, "must be in [" + min + ", " + max + "]", n);
                }
            }
            case MILLIS -> {
                long ms;
                Object shown;
                if (value instanceof Duration d) {
                    if (d.compareTo(Duration.ofMillis(max)) > 0) {
                        throw invalid(key, "must be in [" + min + ", " + max + "] ms", d);
                    }
                    ms = d.toMillis();
                } else {
                    ms = ((Number) value).longValue();
                }
                shown = ms + " ms";
                if (ms < min || ms > max) {
                    throw invalid(key, "must be in [" + min + ", " + max + "] ms", shown);
                }
            }
        }
    }

    /** For {@link ConfigDef#parse} users: the same check, reported as Kafka's ConfigException. */
    @Override
    public void ensureValid(String name, Object value) {
        try {
            check(name, value);
        } catch (OutboxMisconfigurationException e) {
            throw new ConfigException(e.getMessage());
        }
    }

    /** The range as the reference page and {@code --help} state it: {@code 1-65536}, {@code 1 ms-1 day}. */
    @Override
    public String toString() {
        return switch (kind) {
            case RELAY_ID, COUNT -> min + "-" + max + unit;
            case MILLIS -> min + " ms-" + (max == DAY_MS ? "1 day" : max + " ms");
            case CHOICE -> String.join(" or ", choices);
            case BOOL -> "true or false";
        };
    }

    private static OutboxMisconfigurationException invalid(String key, String rule, Object value) {
        return new OutboxMisconfigurationException("relay option " + key + " " + rule + " but was " + value);
    }
}
