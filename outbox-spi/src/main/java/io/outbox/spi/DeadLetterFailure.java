package io.outbox.spi;

import java.time.Instant;
import java.util.Objects;

/**
 * Why a relay gave up on a message: what {@link DeadLetters#moveToDeadLetters} records beside the
 * message's bytes (capability C4, rule R12).
 *
 * <p>Texts are cut to the widths every store keeps: {@code reason} to
 * {@value #MAX_REASON_LENGTH} and {@code causeClass} to {@value #MAX_CAUSE_CLASS_LENGTH} UTF-16
 * units, never splitting a surrogate pair (the cut text is one unit shorter instead).
 *
 * @param reason the last failure's message; not null (an empty reason is kept empty); cut
 * @param causeClass the last failure's exception class name; not null; cut
 * @param attempts how many message-specific failures were counted, {@code >= 1}
 * @param firstFailureAt the first counted failure; not null; truncated to milliseconds
 * @param lastFailureAt the last counted failure; not null, not before {@code firstFailureAt};
 *     truncated to milliseconds
 * @param relayId the relay that gave up; not null, not blank; cut to 128 units
 */
public record DeadLetterFailure(String reason, String causeClass, int attempts, Instant firstFailureAt,
                                Instant lastFailureAt, String relayId) {

    /** The longest {@link #reason()} a store keeps, in UTF-16 units. */
    public static final int MAX_REASON_LENGTH = 1000;

    /** The longest {@link #causeClass()} a store keeps, in UTF-16 units. */
    public static final int MAX_CAUSE_CLASS_LENGTH = 255;

    /** The longest {@link #relayId()}, in UTF-16 units, as {@link LeaseRequest} allows. */
    public static final int MAX_RELAY_ID_LENGTH = 128;

    /**
     * Validates and cuts the fields.
     *
     * @param reason see the record component
     * @param causeClass see the record component
     * @param attempts see the record component
     * @param firstFailureAt see the record component
     * @param lastFailureAt see the record component
     * @param relayId see the record component
     * @throws NullPointerException if a field is null
     * @throws IllegalArgumentException if {@code attempts < 1}, the failure times are out of
     *     order, or the relay id is blank
     */
    public DeadLetterFailure {
        reason = cut(Objects.requireNonNull(reason, "reason must not be null"), MAX_REASON_LENGTH);
        causeClass = cut(Objects.requireNonNull(causeClass, "causeClass must not be null"), MAX_CAUSE_CLASS_LENGTH);
        if (attempts < 1) {
            throw new IllegalArgumentException("attempts must be >= 1 but was " + attempts);
        }
        firstFailureAt = Instant.ofEpochMilli(Objects.requireNonNull(firstFailureAt,
                "firstFailureAt must not be null").toEpochMilli());
        lastFailureAt = Instant.ofEpochMilli(Objects.requireNonNull(lastFailureAt,
                "lastFailureAt must not be null").toEpochMilli());
        if (lastFailureAt.isBefore(firstFailureAt)) {
            throw new IllegalArgumentException("lastFailureAt " + lastFailureAt + " is before firstFailureAt "
                    + firstFailureAt);
        }
        Objects.requireNonNull(relayId, "relayId must not be null");
        if (relayId.isBlank()) {
            throw new IllegalArgumentException("relayId must not be blank but was '" + relayId + "'");
        }
        relayId = cut(relayId, MAX_RELAY_ID_LENGTH);
    }

    /**
     * Cuts a text to at most {@code maxLength} UTF-16 units without splitting a surrogate pair:
     * when the cut would fall between a high and a low surrogate, the high one goes too.
     *
     * @param text the text; not null
     * @param maxLength the most units kept, {@code >= 0}
     * @return {@code text} itself when short enough, else its cut prefix
     * @throws IllegalArgumentException if {@code maxLength < 0}
     */
    public static String cut(String text, int maxLength) {
        if (maxLength < 0) {
            throw new IllegalArgumentException("maxLength must be >= 0 but was " + maxLength);
        }
        if (text.length() <= maxLength) {
            return text;
        }
        int end = maxLength;
        if (end > 0 && Character.isHighSurrogate(text.charAt(end - 1)) && Character.isLowSurrogate(text.charAt(end))) {
            end--;
        }
        return text.substring(0, end);
    }
}
