package io.outbox.relay.internal;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collections;
import java.util.List;

/**
 * Conversions between the engine's bucket sets ({@link BitSet}, one bit per bucket) and the
 * ascending lists of the store SPI and the listener, and a compact text for log lines. Every
 * method is linear in the set's size or the list's length. Stateless, thread-safe.
 */
final class BucketSets {

    private BucketSets() {
    }

    /** The set bits, ascending, as an immutable list. */
    static List<Integer> toList(BitSet buckets) {
        List<Integer> list = new ArrayList<>(buckets.cardinality());
        for (int b = buckets.nextSetBit(0); b >= 0; b = buckets.nextSetBit(b + 1)) {
            list.add(b);
        }
        return Collections.unmodifiableList(list);
    }

    /**
     * A store's answer as a set, checked: no null, every bucket in {@code [0, bucketCount)}.
     *
     * @throws IllegalStateException naming the call and the bad bucket
     */
    static BitSet fromStore(List<Integer> buckets, int bucketCount, String call) {
        if (buckets == null) {
            throw new IllegalStateException("the store's " + call + " returned null");
        }
        BitSet set = new BitSet(bucketCount);
        for (Integer bucket : buckets) {
            if (bucket == null || bucket < 0 || bucket >= bucketCount) {
                throw new IllegalStateException("the store's " + call + " returned bucket " + bucket + ", outside [0, "
                        + bucketCount + ")");
            }
            set.set(bucket);
        }
        return set;
    }

    /** Ranges of set bits, for example {@code [0-3, 5, 7-9]}; {@code []} when empty. */
    static String describe(BitSet buckets) {
        StringBuilder text = new StringBuilder("[");
        for (int start = buckets.nextSetBit(0); start >= 0; ) {
            int end = buckets.nextClearBit(start) - 1;
            if (text.length() > 1) {
                text.append(", ");
            }
            text.append(start);
            if (end > start) {
                text.append('-').append(end);
            }
            start = buckets.nextSetBit(end + 1);
        }
        return text.append(']').toString();
    }
}
