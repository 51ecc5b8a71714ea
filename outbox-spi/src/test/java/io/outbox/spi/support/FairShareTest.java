package io.outbox.spi.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/** Rules S4, S4b and S7: the fair share and the preferred ranges. */
class FairShareTest {

    @Property(tries = 1000)
    void s4_sharesSumToBucketCountAndDifferByAtMostOne(@ForAll @IntRange(min = 1, max = 300) int buckets,
                                                       @ForAll("relayIds") Set<String> relays) {
        FairShare share = FairShare.of(buckets, relays);
        List<Integer> shares = relays.stream().map(share::share).toList();
        assertThat(shares.stream().mapToInt(Integer::intValue).sum()).isEqualTo(buckets);
        assertThat(Collections.max(shares) - Collections.min(shares)).isLessThanOrEqualTo(1);
    }

    @Property(tries = 1000)
    void s4b_rangesAreDisjointContiguousAndCoverEveryBucket(@ForAll @IntRange(min = 1, max = 300) int buckets,
                                                            @ForAll("relayIds") Set<String> relays) {
        FairShare share = FairShare.of(buckets, relays);
        int[] owners = new int[buckets];
        for (String relay : relays) {
            BucketRange range = share.preferredRange(relay);
            assertThat(range.size()).isEqualTo(share.share(relay));
            for (int b : range.buckets()) {
                owners[b]++;
                assertThat(share.preferredRelay(b)).isEqualTo(relay);
            }
        }
        assertThat(owners).containsOnly(1);
    }

    @Property(tries = 500)
    void s4b_resultDoesNotDependOnInputOrder(@ForAll @IntRange(min = 1, max = 100) int buckets,
                                             @ForAll("relayIds") Set<String> relays, @ForAll long seed) {
        List<String> shuffled = new ArrayList<>(relays);
        Collections.shuffle(shuffled, new Random(seed));
        FairShare a = FairShare.of(buckets, relays);
        FairShare b = FairShare.of(buckets, shuffled);
        assertThat(b.relays()).isEqualTo(a.relays());
        for (String relay : relays) {
            assertThat(b.share(relay)).isEqualTo(a.share(relay));
            assertThat(b.preferredRange(relay)).isEqualTo(a.preferredRange(relay));
        }
    }

    @Property(tries = 500)
    void s7_joiningRelayGetsNonZeroShareWhenRelaysAtMostBuckets(@ForAll @IntRange(min = 1, max = 64) int buckets,
                                                                 @ForAll("relayIds") Set<String> relays,
                                                                 @ForAll("relayId") String joiner) {
        Set<String> after = new java.util.HashSet<>(relays);
        after.add(joiner);
        FairShare share = FairShare.of(buckets, after);
        if (after.size() <= buckets) {
            assertThat(after).allSatisfy(r -> assertThat(share.share(r)).isPositive());
        } else {
            assertThat(after.stream().filter(r -> share.share(r) > 0)).hasSize(buckets);
        }
    }

    @Test
    void ranksAreOrdinalAndRangesFollowRank() {
        FairShare share = FairShare.of(8, List.of("relay-b", "relay-a", "relay-c", "relay-a"));
        assertThat(share.relays()).containsExactly("relay-a", "relay-b", "relay-c");
        assertThat(share.preferredRange("relay-a")).isEqualTo(new BucketRange(0, 3));
        assertThat(share.preferredRange("relay-b")).isEqualTo(new BucketRange(3, 6));
        assertThat(share.preferredRange("relay-c")).isEqualTo(new BucketRange(6, 8));
        assertThat(share.share("stranger")).isZero();
        assertThat(share.rank("stranger")).isEqualTo(-1);
        assertThat(FairShare.of(4, List.of()).preferredRelay(2)).isNull();
        // Ordinal, not locale order: upper case sorts before lower case.
        assertThat(FairShare.of(2, List.of("b", "B", "a")).relays()).containsExactly("B", "a", "b");
    }

    @Provide
    Arbitrary<Set<String>> relayIds() {
        return relayId().set().ofMinSize(1).ofMaxSize(40);
    }

    @Provide
    Arbitrary<String> relayId() {
        return Arbitraries.strings().withCharRange('!', '~').ofMinLength(1).ofMaxLength(20);
    }

    /** The constant-time preferredRelay agrees with the ranges for every bucket. */
    @Test
    void preferredRelayIsTheRelayWhoseRangeHoldsTheBucket() {
        for (int n : new int[] {1, 2, 7, 8, 100, 1024}) {
            for (int r : new int[] {1, 2, 3, 7, 8, 9, 150}) {
                FairShare shares = FairShare.of(n, java.util.stream.IntStream.range(0, r).mapToObj(i -> "r" + i).toList());
                for (int b = 0; b < n; b++) {
                    String expected = null;
                    for (int rank = 0; rank < shares.relays().size(); rank++) {
                        if (shares.rangeOfRank(rank).contains(b)) {
                            expected = shares.relays().get(rank);
                        }
                    }
                    org.assertj.core.api.Assertions.assertThat(shares.preferredRelay(b))
                            .as("bucket %d of %d among %d relays", b, n, r).isEqualTo(expected);
                }
            }
        }
    }
}
