package io.outbox.spi.support;

import java.util.List;
import java.util.stream.IntStream;

/**
 * A contiguous, possibly empty, range of buckets {@code [start, end)}.
 *
 * @param start the first bucket, inclusive, {@code >= 0}
 * @param end the bucket after the last, exclusive, {@code >= start}
 */
public record BucketRange(int start, int end) {

    /**
     * Validates the bounds.
     *
     * @param start the first bucket, inclusive
     * @param end the bucket after the last, exclusive
     * @throws IllegalArgumentException if {@code start < 0} or {@code end < start}
     */
    public BucketRange {
        if (start < 0 || end < start) {
            throw new IllegalArgumentException("bucket range must satisfy 0 <= start <= end but was ["
                    + start + ", " + end + ")");
        }
    }

    /**
     * The number of buckets in the range.
     *
     * @return {@code end - start}
     */
    public int size() {
        return end - start;
    }

    /**
     * Whether a bucket lies in the range.
     *
     * @param bucket any bucket
     * @return {@code start <= bucket < end}
     */
    public boolean contains(int bucket) {
        return bucket >= start && bucket < end;
    }

    /**
     * The buckets of the range.
     *
     * @return the buckets, ascending; immutable
     */
    public List<Integer> buckets() {
        return IntStream.range(start, end).boxed().toList();
    }

    @Override
    public String toString() {
        return "[" + start + ", " + end + ")";
    }
}
