package io.outbox.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** Bucket lists print as ranges, however many buckets there are. */
class BucketRangesTest {

    @Test
    void consecutiveBucketsBecomeRanges() {
        assertThat(BucketRanges.format(List.of(0, 1, 2, 3, 7, 9, 10, 11, 12))).isEqualTo("0-3, 7, 9-12");
        assertThat(BucketRanges.format(List.of(12, 9, 7, 3, 11, 2, 10, 1, 0, 7))).isEqualTo("0-3, 7, 9-12");
        assertThat(BucketRanges.format(List.of(5))).isEqualTo("5");
        assertThat(BucketRanges.format(List.of(4, 5))).isEqualTo("4-5");
        assertThat(BucketRanges.format(List.of())).isEqualTo("none");
    }

    @Test
    void allOf65536BucketsAreOneRange() {
        assertThat(BucketRanges.format(IntStream.range(0, 65_536).boxed().toList())).isEqualTo("0-65535");
    }

    @Test
    void eachRelaysBucketsByRelay() {
        Map<String, List<Integer>> owned = new LinkedHashMap<>();
        owned.put("r-1", List.of(0, 1, 2, 3));
        owned.put("r-2", List.of(4, 5, 6, 8));
        owned.put("r-3", List.of());
        assertThat(BucketRanges.format(owned)).isEqualTo("r-1: 0-3; r-2: 4-6, 8; r-3: none");
    }
}
