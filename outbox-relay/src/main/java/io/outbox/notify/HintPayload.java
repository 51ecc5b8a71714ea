package io.outbox.notify;

import io.outbox.OutboxCommitNotifier;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * The text a {@link NotificationTransport} sends: the sender's origin id, then the bucket ids,
 * sorted, in base 36, runs of consecutive ids written as ranges: {@code k3x9q2|0,5-a,1z}. An
 * unknown bucket ({@value OutboxCommitNotifier#UNKNOWN_BUCKET}) is written {@code ?} and makes the
 * others redundant (the receiver looks at every bucket it owns). Printable ASCII only, so it fits
 * PostgreSQL's text payloads as well as Redis messages. A list that would not fit the transport's
 * limit is sent as {@code ?}: a hint that costs one discovery query, never a lost hint.
 *
 * <p>Stateless and thread-safe.
 */
public final class HintPayload {

    /** What a payload carried. */
    public record Decoded(String origin, int[] buckets) {

        /**
         * @param origin the sender's origin id; not null
         * @param buckets the bucket ids; not null
         */
        public Decoded {
            Objects.requireNonNull(origin, "origin must not be null");
            Objects.requireNonNull(buckets, "buckets must not be null");
        }
    }

    private static final char SEPARATOR = '|';
    private static final String UNKNOWN = "?";

    private HintPayload() {
    }

    /**
     * Encodes hints.
     *
     * @param origin the sender's id: 1 to 64 characters of {@code [A-Za-z0-9._-]}
     * @param buckets the bucket ids, each {@code >= 0} or {@code -1}; not null, not empty; repeats
     *     and order do not matter
     * @param maxBytes the transport's payload limit, at least 70
     * @return the payload, at most {@code maxBytes} bytes of ASCII
     * @throws IllegalArgumentException naming a bad origin, bucket id or limit
     */
    public static String encode(String origin, int[] buckets, int maxBytes) {
        checkOrigin(origin);
        Objects.requireNonNull(buckets, "buckets must not be null");
        if (buckets.length == 0) {
            throw new IllegalArgumentException("buckets must not be empty");
        }
        if (maxBytes < 70) {
            throw new IllegalArgumentException("maxBytes must be at least 70, was " + maxBytes);
        }
        int[] sorted = buckets.clone();
        Arrays.sort(sorted);
        if (sorted[0] < OutboxCommitNotifier.UNKNOWN_BUCKET) {
            throw new IllegalArgumentException("bucket " + sorted[0] + " is negative and not -1 (unknown)");
        }
        StringBuilder text = new StringBuilder(origin).append(SEPARATOR);
        int prefix = text.length();
        if (sorted[0] == OutboxCommitNotifier.UNKNOWN_BUCKET) {
            return text.append(UNKNOWN).toString();
        }
        int i = 0;
        while (i < sorted.length) {
            int first = sorted[i];
            int last = first;
            while (i + 1 < sorted.length && sorted[i + 1] <= last + 1) {
                last = sorted[++i];
            }
            i++;
            if (text.length() > prefix) {
                text.append(',');
            }
            text.append(Integer.toString(first, 36));
            if (last != first) {
                text.append('-').append(Integer.toString(last, 36));
            }
            if (text.length() > maxBytes) {
                return origin + SEPARATOR + UNKNOWN;
            }
        }
        return text.toString();
    }

    /**
     * Decodes a payload.
     *
     * @param payload the text received; may be null
     * @return what it carried, or null if it is not a hint payload (another application on the
     *     channel, say); never throws
     */
    public static Decoded decode(String payload) {
        if (payload == null) {
            return null;
        }
        int separator = payload.indexOf(SEPARATOR);
        if (separator < 1 || separator == payload.length() - 1) {
            return null;
        }
        String origin = payload.substring(0, separator);
        String list = payload.substring(separator + 1);
        if (list.equals(UNKNOWN)) {
            return new Decoded(origin, new int[] {OutboxCommitNotifier.UNKNOWN_BUCKET});
        }
        try {
            String[] items = list.split(",", -1);
            int[] out = new int[8];
            int n = 0;
            for (String item : items) {
                int dash = item.indexOf('-');
                int first = Integer.parseInt(dash < 0 ? item : item.substring(0, dash), 36);
                int last = dash < 0 ? first : Integer.parseInt(item.substring(dash + 1), 36);
                if (first < 0 || last < first || (long) n + last - first + 1 > 1 << 20) {
                    return null;
                }
                for (int b = first; b <= last; b++) {
                    if (n == out.length) {
                        out = Arrays.copyOf(out, n * 2);
                    }
                    out[n++] = b;
                }
            }
            return new Decoded(origin, Arrays.copyOf(out, n));
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /**
     * The payload's size in bytes as sent (ASCII).
     *
     * @param payload not null
     * @return its UTF-8 length
     */
    public static int byteLength(String payload) {
        return payload.getBytes(StandardCharsets.UTF_8).length;
    }

    private static void checkOrigin(String origin) {
        Objects.requireNonNull(origin, "origin must not be null");
        if (origin.isEmpty() || origin.length() > 64 || !origin.matches("[A-Za-z0-9._-]+")) {
            throw new IllegalArgumentException("origin '" + origin + "' must be 1 to 64 characters of [A-Za-z0-9._-]");
        }
    }
}
