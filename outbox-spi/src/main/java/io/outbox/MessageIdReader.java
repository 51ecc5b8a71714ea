package io.outbox;

import io.outbox.InvalidMessageIdException.Problem;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/**
 * Reads the outbox message id from a consumed Kafka record, for the consumer's inbox (rule I1):
 * the relay stamps every record with the header {@value #DEFAULT_HEADER} (configurable there) whose
 * value is the message's UUID as UTF-8 text (rule K2), after the message's own headers, so the
 * last header of that name is the one read.
 *
 * <pre>{@code
 * MessageIdReader ids = MessageIdReader.defaults();        // a record without a valid id throws
 * for (ConsumerRecord<String, String> record : records) {
 *     UUID id = ids.read(record).orElseThrow();           // never empty with the default policy
 *     ... inbox.firstDelivery(connection, "billing", id) ...
 * }
 * }</pre>
 *
 * <p>A record that has no such header, whose value is null, or whose value is not a UUID in its
 * canonical 36-character form (8-4-4-4-12 hex digits, either case, as {@link MessageIds} parses
 * it; {@link UUID#fromString}'s laxer forms such as {@code 1-2-3-4-5} are refused) is never
 * accepted silently: the {@link Policy} decides. The default, {@link Policy#FAIL}, throws an
 * {@link InvalidMessageIdException} naming the record's topic, partition and offset, the header
 * and what was wrong. {@link Policy#SKIP} makes {@link #read} return empty, so the caller drops
 * the record on purpose; {@link Policy#RECORD_COORDINATES} deduplicates it by its topic, partition
 * and offset instead, which catches a consumer reading the same offset again but not a repeat the
 * relay published as a new record. A policy of your own may log, count, or forward the record to a
 * dead-letter topic.
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class MessageIdReader {

    /** The header the relay writes unless configured otherwise (RelayOptions' default). */
    public static final String DEFAULT_HEADER = "x-outbox-message-id";

    private static final MessageIdReader DEFAULTS = new MessageIdReader(DEFAULT_HEADER, Policy.FAIL);
    private static final int SHOWN_BYTES = 64;

    private final String headerName;
    private final Policy policy;

    private MessageIdReader(String headerName, Policy policy) {
        this.headerName = headerName;
        this.policy = policy;
    }

    /**
     * What a record without a usable message id gets.
     */
    @FunctionalInterface
    public interface Policy {

        /** Throws the {@link InvalidMessageIdException}: the default. */
        Policy FAIL = (record, problem) -> {
            throw problem;
        };

        /** Returns empty: the caller skips the record, knowingly. */
        Policy SKIP = (record, problem) -> Optional.empty();

        /**
         * Returns {@link #coordinatesId(ConsumerRecord)}: the record is deduplicated by where it sits
         * in the log.
         */
        Policy RECORD_COORDINATES = (record, problem) -> Optional.of(coordinatesId(record));

        /**
         * Decides for one record.
         *
         * @param record the record; not null
         * @param problem what is wrong, ready to throw; not null
         * @return the id to deduplicate the record by, or empty to have {@link #read} return empty
         * @throws RuntimeException to refuse the record (FAIL throws {@code problem})
         */
        Optional<UUID> onInvalid(ConsumerRecord<?, ?> record, InvalidMessageIdException problem);
    }

    /**
     * The reader for header {@value #DEFAULT_HEADER} with {@link Policy#FAIL}.
     *
     * @return the shared default reader
     */
    public static MessageIdReader defaults() {
        return DEFAULTS;
    }

    /**
     * A reader of another header, or with another policy.
     *
     * @param headerName the header the relay stamps (its {@code messageIdHeader} option); not null,
     *     not empty
     * @param policy what records without a usable id get; not null
     * @return the reader
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code headerName} is empty
     */
    public static MessageIdReader of(String headerName, Policy policy) {
        Objects.requireNonNull(headerName, "headerName must not be null");
        Objects.requireNonNull(policy, "policy must not be null");
        if (headerName.isEmpty()) {
            throw new IllegalArgumentException("headerName must not be empty");
        }
        return new MessageIdReader(headerName, policy);
    }

    /**
     * Reads the default header with the default policy: the id, or an exception.
     *
     * @param record the record; not null
     * @return the message id; never null
     * @throws InvalidMessageIdException if the record has no usable id
     */
    public static UUID messageId(ConsumerRecord<?, ?> record) {
        return DEFAULTS.read(record).orElseThrow();
    }

    /**
     * The header this reader reads.
     *
     * @return the header name
     */
    public String headerName() {
        return headerName;
    }

    /**
     * The policy for records without a usable id.
     *
     * @return the policy
     */
    public Policy policy() {
        return policy;
    }

    /**
     * Reads the record's message id.
     *
     * @param record the record; not null
     * @return the id from the last header of {@link #headerName()}; or, when it is missing, null or
     *     malformed, what the policy returns (empty only when the policy says to skip)
     * @throws NullPointerException if {@code record} is null, or the policy returned null
     * @throws InvalidMessageIdException with {@link Policy#FAIL} when the record has no usable id
     */
    public Optional<UUID> read(ConsumerRecord<?, ?> record) {
        Objects.requireNonNull(record, "record must not be null");
        Header header = record.headers().lastHeader(headerName);
        byte[] value = header == null ? null : header.value();
        if (value != null) {
            UUID id = parse(value);
            if (id != null) {
                return Optional.of(id);
            }
        }
        Problem problem = header == null ? Problem.MISSING : value == null ? Problem.NULL_VALUE : Problem.MALFORMED;
        Optional<UUID> decided = policy.onInvalid(record, invalid(record, problem, value));
        return Objects.requireNonNull(decided, "the message-id policy returned null instead of an Optional");
    }

    /**
     * A stable id for a record's place in the log: a name-based (version 3) UUID of
     * {@code kafka:<topic>/<partition>@<offset>}. The same record read again yields the same id.
     *
     * @param record the record; not null
     * @return the id
     */
    public static UUID coordinatesId(ConsumerRecord<?, ?> record) {
        return UUID.nameUUIDFromBytes(("kafka:" + record.topic() + "/" + record.partition() + "@" + record.offset())
                .getBytes(StandardCharsets.UTF_8));
    }

    /** The UUID of canonical text ({@link MessageIds}), or null when the bytes are anything else. */
    static UUID parse(byte[] value) {
        // One character per byte: a byte outside ASCII is no hex digit, so it is refused.
        return value.length != MessageIds.LENGTH ? null
                : MessageIds.parseOrNull(new String(value, StandardCharsets.ISO_8859_1));
    }

    private InvalidMessageIdException invalid(ConsumerRecord<?, ?> record, Problem problem, byte[] value) {
        String where = "record " + record.topic() + "-" + record.partition() + "@" + record.offset();
        String what = switch (problem) {
            case MISSING -> "has no header '" + headerName + "'";
            case NULL_VALUE -> "has a header '" + headerName + "' with a null value";
            case MALFORMED -> "has a header '" + headerName + "' that is not a UUID (8-4-4-4-12 hex digits): "
                    + show(value);
        };
        return new InvalidMessageIdException(where + " " + what + ", so the inbox cannot deduplicate it; was it"
                + " published by the outbox relay, with this header name? Choose MessageIdReader.Policy.SKIP or"
                + " RECORD_COORDINATES to consume such records anyway", problem, record.topic(), record.partition(),
                record.offset());
    }

    /** The value as printable ASCII with other bytes escaped, cut after {@value #SHOWN_BYTES} bytes. */
    private static String show(byte[] value) {
        StringBuilder sb = new StringBuilder("'");
        for (int i = 0; i < Math.min(value.length, SHOWN_BYTES); i++) {
            int b = value[i] & 0xff;
            if (b >= 0x20 && b < 0x7f && b != '\'' && b != '\\') {
                sb.append((char) b);
            } else {
                sb.append(String.format("\\x%02x", b));
            }
        }
        sb.append('\'');
        if (value.length > SHOWN_BYTES) {
            sb.append("... (").append(value.length).append(" bytes)");
        }
        return sb.toString();
    }

    @Override
    public String toString() {
        return "MessageIdReader[header=" + headerName + "]";
    }
}
