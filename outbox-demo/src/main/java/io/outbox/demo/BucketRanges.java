package io.outbox.demo;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/** Bucket numbers as the demo prints them: runs of consecutive buckets as ranges, {@code 0-3, 7, 9-12}. */
final class BucketRanges {

    private BucketRanges() {
    }

    /**
     * The buckets in ascending order, consecutive ones as a range; {@code none} when empty.
     *
     * @param buckets bucket numbers, in any order, repeats ignored
     */
    static String format(Collection<Integer> buckets) {
        if (buckets.isEmpty()) {
            return "none";
        }
        List<String> parts = new ArrayList<>();
        Integer first = null;
        int last = 0;
        for (int bucket : new TreeSet<>(buckets)) {
            if (first != null && bucket == last + 1) {
                last = bucket;
                continue;
            }
            if (first != null) {
                parts.add(range(first, last));
            }
            first = bucket;
            last = bucket;
        }
        parts.add(range(first, last));
        return String.join(", ", parts);
    }

    /**
     * Each relay's buckets: {@code relay-1: 0-3, relay-2: 4-7}.
     *
     * @param byRelay bucket numbers by relay id, in the order to print
     */
    static String format(Map<String, ? extends Collection<Integer>> byRelay) {
        List<String> parts = new ArrayList<>();
        byRelay.forEach((relay, buckets) -> parts.add(relay + ": " + format(buckets)));
        return String.join("; ", parts);
    }

    private static String range(int first, int last) {
        return first == last ? Integer.toString(first) : first + "-" + last;
    }
}
