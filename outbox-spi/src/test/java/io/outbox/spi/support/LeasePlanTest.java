package io.outbox.spi.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.spi.LeaseRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.IntStream;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/** Rules S4, S4b, S5, S6 and S7 for the shared lease planner. */
class LeasePlanTest {

    private static final Duration LEASE = Duration.ofSeconds(30);

    @Test
    void s4_firstRelayClaimsEverythingAndRecordsMissingRows() {
        LeasePlan plan = LeasePlan.compute(LeaseRequest.of("a", 4, LEASE), 1_000, Map.of(), List.of());
        assertThat(buckets(plan.claim())).containsExactly(0, 1, 2, 3);
        assertThat(plan.missingBuckets()).containsExactly(0, 1, 2, 3);
        assertThat(plan.keep()).isEmpty();
        assertThat(plan.claimExpiry()).isEqualTo(31_000);
    }

    @Test
    void s4_excessIsReleasedKeepingPreferredRangeThenHeldBuckets() {
        // a holds all 8; b is live: shares 4/4, a's range [0,4).
        List<BucketLease> leases = IntStream.range(0, 8).mapToObj(b -> new BucketLease(b, "a", 20_000)).toList();
        LeaseRequest request = new LeaseRequest("a", 8, LEASE, List.of(5, 6, 7));
        LeasePlan plan = LeasePlan.compute(request, 10_000, Map.of("a", 9_000L, "b", 9_500L), leases);
        assertThat(buckets(plan.keep())).containsExactly(0, 1, 2, 3);
        assertThat(buckets(plan.release())).containsExactly(4, 5, 6, 7);
        assertThat(plan.claim()).isEmpty();
        assertThat(plan.renewedExpiry(leases.get(0))).isEqualTo(40_000);
    }

    @Test
    void r11_busyBucketsAreKeptFirstAndCountTowardTheShare() {
        // a holds all 8; b is live: shares 4/4, a's range [0,4); a is publishing 6.
        List<BucketLease> leases = IntStream.range(0, 8).mapToObj(b -> new BucketLease(b, "a", 20_000)).toList();
        LeaseRequest request = new LeaseRequest("a", 8, LEASE, List.of(0, 1, 2, 3, 4, 5, 6, 7), List.of(6));
        LeasePlan plan = LeasePlan.compute(request, 10_000, Map.of("a", 9_000L, "b", 9_500L), leases);
        assertThat(buckets(plan.keep())).containsExactly(0, 1, 2, 6);
        assertThat(buckets(plan.release())).containsExactly(3, 4, 5, 7);
    }

    @Test
    void r11_busyBucketsAreKeptEvenAboveTheShare() {
        // a holds all 4 and publishes 0, 1 and 3; b is live: a's share is 2.
        List<BucketLease> leases = IntStream.range(0, 4).mapToObj(b -> new BucketLease(b, "a", 20_000)).toList();
        LeaseRequest request = new LeaseRequest("a", 4, LEASE, List.of(0, 1, 2, 3), List.of(0, 1, 3));
        LeasePlan plan = LeasePlan.compute(request, 10_000, Map.of("a", 9_000L, "b", 9_500L), leases);
        assertThat(plan.share()).isEqualTo(2);
        assertThat(buckets(plan.keep())).containsExactly(0, 1, 3);
        assertThat(buckets(plan.release())).containsExactly(2);
        // b, seeing a hold 3 of 4, claims the one a gave up and nothing a keeps.
        List<BucketLease> after = List.of(new BucketLease(0, "a", 40_000), new BucketLease(1, "a", 40_000),
                BucketLease.free(2), new BucketLease(3, "a", 40_000));
        LeasePlan b = LeasePlan.compute(LeaseRequest.of("b", 4, LEASE), 10_001, Map.of("a", 10_000L), after);
        assertThat(buckets(b.claim())).containsExactly(2);
    }

    @Test
    void s4b_heldBucketsAreKeptBeforeOthersOutsideTheRange() {
        // c's range is [6,8) of 8 with three relays; c holds 0, 1 and 2 (none in range) and held 2 last time.
        List<BucketLease> leases = List.of(new BucketLease(0, "c", 50_000), new BucketLease(1, "c", 50_000),
                new BucketLease(2, "c", 50_000));
        LeasePlan plan = LeasePlan.compute(new LeaseRequest("c", 8, LEASE, List.of(2)), 10_000,
                Map.of("a", 9_000L, "b", 9_000L), leases);
        assertThat(plan.share()).isEqualTo(2);
        assertThat(buckets(plan.keep())).containsExactly(0, 2);
        assertThat(buckets(plan.release())).containsExactly(1);
    }

    @Test
    void s5_s13_renewalNeverShortensButAlwaysChangesALeaseWhenTheClockWentBack() {
        BucketLease lease = new BucketLease(0, "a", 100_000);
        LeasePlan plan = LeasePlan.compute(LeaseRequest.of("a", 1, LEASE), 50_000, Map.of(), List.of(lease));
        assertThat(buckets(plan.keep())).containsExactly(0);
        assertThat(plan.renewedExpiry(lease)).isEqualTo(100_001);
    }

    @Test
    void s5_unexpiredLeaseOfADeadRelayIsNotClaimable() {
        List<BucketLease> leases = List.of(new BucketLease(0, "dead", 40_000), new BucketLease(1, null, 0));
        LeasePlan plan = LeasePlan.compute(LeaseRequest.of("a", 2, LEASE), 39_999, Map.of("dead", 1L), leases);
        assertThat(buckets(plan.claim())).containsExactly(1);
        LeasePlan later = LeasePlan.compute(LeaseRequest.of("a", 2, LEASE), 40_000, Map.of("dead", 1L), leases);
        assertThat(buckets(later.claim())).containsExactly(0, 1);
    }

    @Test
    void staleHeartbeatsAreReportedButNotTheCallers() {
        LeasePlan plan = LeasePlan.compute(LeaseRequest.of("a", 2, LEASE), 1_000_000,
                Map.of("old", 1_000L, "recent-dead", 990_000L - 30_000L, "a", 1L), List.of());
        assertThat(plan.staleRelays()).containsOnlyKeys("old");
        assertThat(plan.fairShare().relays()).containsExactly("a");
    }

    @Test
    void leaseRowsOutsideTheRangeAreIgnoredAndDuplicatesRefused() {
        LeasePlan plan = LeasePlan.compute(LeaseRequest.of("a", 2, LEASE), 1, Map.of(),
                List.of(new BucketLease(5, "x", 99), BucketLease.free(0), BucketLease.free(1)));
        assertThat(buckets(plan.claim())).containsExactly(0, 1);
        assertThat(plan.missingBuckets()).isEmpty();
        assertThatThrownBy(() -> LeasePlan.compute(LeaseRequest.of("a", 2, LEASE), 1, Map.of(),
                List.of(BucketLease.free(0), BucketLease.free(0)))).hasMessageContaining("bucket 0");
    }

    /**
     * Relays that see one snapshot in which every live relay renews never plan the same write, and
     * each keeps and claims at most its share; a lease overdue (expired a quarter lease duration
     * ago: its planned claimer did not take it) is the one thing every relay may claim (R14).
     */
    @Property(tries = 2000)
    void s4b_relaysSeeingOneSnapshotNeverPlanTheSameWrite(@ForAll @IntRange(min = 1, max = 40) int buckets,
                                                          @ForAll @IntRange(min = 1, max = 12) int relays,
                                                          @ForAll long seed) {
        Random random = new Random(seed);
        long now = 1_000_000;
        Map<String, Long> heartbeats = new HashMap<>();
        for (int i = 0; i < relays; i++) {
            // renewing (within half a lease) or dead (older than a lease)
            heartbeats.put("r" + random.nextInt(1000), random.nextBoolean() ? now - random.nextInt(15_000)
                    : now - 30_000 - random.nextInt(10_000));
        }
        List<String> ids = new ArrayList<>(heartbeats.keySet());
        List<BucketLease> leases = randomLeases(random, buckets, ids, now);
        Set<Integer> claimed = new HashSet<>();
        for (String id : ids) {
            if (!LeasePlan.isLive(heartbeats.get(id), now, LEASE.toMillis())) {
                continue;
            }
            LeasePlan plan = LeasePlan.compute(LeaseRequest.of(id, buckets, LEASE), now, heartbeats, leases);
            List<BucketLease> planned = plannedClaims(plan, now);
            for (BucketLease c : planned) {
                assertThat(claimed.add(c.bucket())).as("bucket %d planned twice", c.bucket()).isTrue();
            }
            assertThat(plan.claim()).allSatisfy(c -> assertThat(c.isClaimable(now)).isTrue());
            assertThat(plan.keep()).allSatisfy(l -> assertThat(l.isHeldBy(id, now)).isTrue());
            assertThat(plan.keep().size() + planned.size()).isLessThanOrEqualTo(plan.share());
        }
    }

    /**
     * R14, S4b: with live relays that stopped renewing (heartbeats unchanged for more than half a
     * lease), the buckets their shares reserve go to the renewing relays, still without two
     * relays planning the same write (overdue leases aside).
     */
    @Property(tries = 2000)
    void r14_s4b_bucketsReservedForSilentRelaysArePlannedOnceAmongTheRenewing(
            @ForAll @IntRange(min = 1, max = 40) int buckets, @ForAll @IntRange(min = 1, max = 12) int relays,
            @ForAll long seed) {
        Random random = new Random(seed);
        long now = 1_000_000;
        Map<String, Long> heartbeats = new HashMap<>();
        for (int i = 0; i < relays; i++) {
            heartbeats.put("r" + random.nextInt(1000), now - random.nextInt(40_000)); // some silent, some dead
        }
        List<String> ids = new ArrayList<>(heartbeats.keySet());
        List<BucketLease> leases = randomLeases(random, buckets, ids, now);
        Set<Integer> claimed = new HashSet<>();
        Set<Integer> claimable = new HashSet<>();
        leases.stream().filter(l -> l.isClaimable(now)).forEach(l -> claimable.add(l.bucket()));
        IntStream.range(0, buckets).filter(b -> leases.stream().noneMatch(l -> l.bucket() == b))
                .forEach(claimable::add);
        boolean anyRenewing = false;
        for (String id : ids) {
            if (heartbeats.get(id) < now - LEASE.toMillis() / 2) {
                continue; // a silent relay makes no plan: a relay that plans has just renewed
            }
            anyRenewing = true;
            LeasePlan plan = LeasePlan.compute(LeaseRequest.of(id, buckets, LEASE), now, heartbeats, leases);
            for (BucketLease c : plannedClaims(plan, now)) {
                assertThat(claimed.add(c.bucket())).as("bucket %d planned twice", c.bucket()).isTrue();
            }
        }
        if (anyRenewing) {
            assertThat(claimed).as("every claimable bucket is planned for a renewing relay")
                    .containsAll(claimable.stream().filter(b -> leases.stream().noneMatch(l -> l.bucket() == b
                            && l.owner() != null && now - l.expiresAtMillis() >= LEASE.toMillis() / 4)).toList());
        }
    }

    private static List<BucketLease> randomLeases(Random random, int buckets, List<String> ids, long now) {
        List<BucketLease> leases = new ArrayList<>();
        for (int b = 0; b < buckets; b++) {
            if (random.nextInt(5) == 0) {
                continue; // missing row
            }
            String owner = random.nextInt(3) == 0 ? null : ids.get(random.nextInt(ids.size()));
            leases.add(new BucketLease(b, owner, now - 20_000 + random.nextInt(60_000)));
        }
        return leases;
    }

    /** The claims of a plan that are planned, not overdue (expired at least a quarter lease ago). */
    private static List<BucketLease> plannedClaims(LeasePlan plan, long now) {
        return plan.claim().stream().filter(c -> c.owner() == null
                || now - c.expiresAtMillis() < LEASE.toMillis() / 4).toList();
    }

    /** A fleet applying plans to a simulated lease table converges, then stays put with no refused writes. */
    @Property(tries = 300)
    void s7_fleetConvergesThenStaysStable(@ForAll @IntRange(min = 1, max = 32) int buckets,
                                          @ForAll @IntRange(min = 1, max = 10) int relays, @ForAll long seed) {
        Random random = new Random(seed);
        Fleet fleet = new Fleet(buckets);
        List<String> ids = IntStream.range(0, relays).mapToObj(i -> "relay-" + random.nextInt(100_000)).distinct()
                .toList();
        for (int round = 0; round < 6; round++) {
            List<String> order = new ArrayList<>(ids);
            java.util.Collections.shuffle(order, random);
            order.forEach(fleet::acquire);
            fleet.now += 1_000;
        }
        FairShare share = FairShare.of(buckets, ids);
        Map<Integer, String> converged = new TreeMap<>(fleet.owners());
        for (String id : ids) {
            assertThat(fleet.owned(id)).as("share of %s", id).hasSize(share.share(id));
        }
        int refusedBefore = fleet.refused;
        for (int round = 0; round < 5; round++) {
            ids.forEach(fleet::acquire);
            fleet.now += 1_000;
        }
        assertThat(fleet.owners()).isEqualTo(converged);
        assertThat(fleet.refused).isEqualTo(refusedBefore);
    }

    @Test
    void r14_theShareOfASilentPeerGoesToTheRenewingRelaysAboveTheirShares() {
        // 6 free buckets; c is live (heartbeat 20 s old, lease 30 s) but silent: shares 2/2/2 by rank
        // (a [0,2), c [2,4), z [4,6)); c's range goes to a and z by a share over the two renewing relays.
        Map<String, Long> heartbeats = Map.of("a", 100_000L, "c", 80_000L, "z", 99_000L);
        LeasePlan a = LeasePlan.compute(LeaseRequest.of("a", 6, LEASE), 100_000, heartbeats, List.of());
        LeasePlan z = LeasePlan.compute(LeaseRequest.of("z", 6, LEASE), 100_000, heartbeats, List.of());
        assertThat(a.share()).isEqualTo(2);
        assertThat(buckets(a.claim())).containsExactly(0, 1, 2);
        assertThat(buckets(z.claim())).containsExactly(3, 4, 5);
    }

    @Test
    void r14_aBucketLeftClaimableForAQuarterLeaseIsClaimedWhateverThePlan() {
        // x died long ago; bucket 1 (b's range) expired 10 s ago, bucket 3 (b's range too) 5 s ago.
        List<BucketLease> leases = List.of(new BucketLease(0, "a", 120_000), new BucketLease(1, "x", 90_000),
                new BucketLease(2, "a", 120_000), new BucketLease(3, "x", 95_000));
        Map<String, Long> heartbeats = Map.of("a", 100_000L, "b", 99_000L, "x", 1_000L);
        LeasePlan a = LeasePlan.compute(LeaseRequest.of("a", 4, LEASE), 100_000, heartbeats, leases);
        LeasePlan b = LeasePlan.compute(LeaseRequest.of("b", 4, LEASE), 100_000, heartbeats, leases);
        assertThat(buckets(b.claim())).as("planned for b").containsExactly(1, 3);
        assertThat(buckets(a.claim())).as("a takes only the overdue one").containsExactly(1);
    }

    @Test
    void r14_aBucketAboveTheShareIsKeptUntilARenewingPeerIsShort() {
        List<BucketLease> leases = IntStream.range(0, 4).mapToObj(b -> new BucketLease(b, "a", 120_000)).toList();
        LeaseRequest request = new LeaseRequest("a", 4, LEASE, List.of(0, 1, 2, 3));
        LeasePlan silentPeer = LeasePlan.compute(request, 100_000, Map.of("a", 100_000L, "b", 80_000L), leases);
        assertThat(silentPeer.share()).isEqualTo(2);
        assertThat(buckets(silentPeer.keep())).containsExactly(0, 1, 2, 3);
        assertThat(silentPeer.release()).isEmpty();
        LeasePlan renewingPeer = LeasePlan.compute(request, 100_000, Map.of("a", 100_000L, "b", 99_000L), leases);
        assertThat(buckets(renewingPeer.keep())).containsExactly(0, 1);
        assertThat(buckets(renewingPeer.release())).containsExactly(2, 3);
    }

    @Test
    void s6_takeoverAfterARelayStops() {
        Fleet fleet = new Fleet(8);
        for (int round = 0; round < 4; round++) {
            fleet.acquire("a");
            fleet.acquire("b");
            fleet.now += 1_000;
        }
        assertThat(fleet.owned("a")).hasSize(4);
        // b stops calling; a gets its buckets once they expire and b's heartbeat is older than a lease.
        for (int round = 0; round < 40; round++) {
            fleet.acquire("a");
            fleet.now += 1_000;
        }
        assertThat(fleet.owned("a")).hasSize(8);
    }

    private static List<Integer> buckets(List<BucketLease> leases) {
        return leases.stream().map(BucketLease::bucket).toList();
    }

    /** A minimal single-threaded lease table applying plans with the documented conditions. */
    private static final class Fleet {
        final int buckets;
        final Map<Integer, BucketLease> leases = new TreeMap<>();
        final Map<String, Long> heartbeats = new HashMap<>();
        final Map<String, List<Integer>> held = new HashMap<>();
        long now = 1_000_000;
        int refused;

        Fleet(int buckets) {
            this.buckets = buckets;
        }

        void acquire(String relay) {
            heartbeats.put(relay, now);
            LeaseRequest request = new LeaseRequest(relay, buckets, LEASE, held.getOrDefault(relay, List.of()));
            LeasePlan plan = LeasePlan.compute(request, now, heartbeats, leases.values());
            plan.missingBuckets().forEach(b -> leases.putIfAbsent(b, BucketLease.free(b)));
            for (BucketLease keep : plan.keep()) {
                BucketLease current = leases.get(keep.bucket());
                if (relay.equals(current.owner()) && current.expiresAtMillis() == keep.expiresAtMillis()) {
                    leases.put(keep.bucket(), new BucketLease(keep.bucket(), relay, plan.renewedExpiry(keep)));
                } else {
                    refused++;
                }
            }
            for (BucketLease release : plan.release()) {
                leases.put(release.bucket(), new BucketLease(release.bucket(), null, release.expiresAtMillis()));
            }
            for (BucketLease claim : plan.claim()) {
                if (leases.get(claim.bucket()).isClaimable(now)) {
                    leases.put(claim.bucket(), new BucketLease(claim.bucket(), relay, plan.claimExpiry()));
                } else {
                    refused++;
                }
            }
            held.put(relay, owned(relay));
        }

        List<Integer> owned(String relay) {
            return leases.values().stream().filter(l -> l.isHeldBy(relay, now)).map(BucketLease::bucket).toList();
        }

        Map<Integer, String> owners() {
            Map<Integer, String> owners = new TreeMap<>();
            leases.values().forEach(l -> {
                if (l.owner() != null && l.expiresAtMillis() > now) {
                    owners.put(l.bucket(), l.owner());
                }
            });
            return owners;
        }
    }

    /**
     * Scale: at the documented maximum of 65,536 buckets, 64 relays planning from one empty
     * snapshot claim disjoint sets that cover every bucket, each its FairShare share (S4b). Prints
     * the planning time; no timing assertion (a benchmark figure, not a test bound).
     */
    @Test
    void S4b_plansAt65536BucketsCoverEveryBucketOnceAcrossRelays() {
        int buckets = 65_536;
        List<String> relays = IntStream.range(0, 64).mapToObj(i -> String.format("relay-%02d", i)).toList();
        Map<String, Long> heartbeats = new HashMap<>();
        relays.forEach(r -> heartbeats.put(r, 1_000L));
        java.util.BitSet claimed = new java.util.BitSet(buckets);
        FairShare shares = FairShare.of(buckets, relays);
        long planning = 0;
        for (String relay : relays) {
            long started = System.nanoTime();
            LeasePlan plan = LeasePlan.compute(LeaseRequest.of(relay, buckets, LEASE), 1_000L, heartbeats, List.of());
            planning += System.nanoTime() - started;
            assertThat(plan.claim()).as("%s's claims", relay).hasSize(shares.share(relay));
            for (BucketLease lease : plan.claim()) {
                assertThat(claimed.get(lease.bucket())).as("bucket %d claimed twice", lease.bucket()).isFalse();
                claimed.set(lease.bucket());
                assertThat(shares.preferredRelay(lease.bucket())).isEqualTo(relay);
            }
        }
        long micros = planning / 1_000;
        assertThat(claimed.cardinality()).isEqualTo(buckets);
        System.out.printf("LeasePlan at %d buckets: %d relays planned in %d us (%d us each)%n", buckets,
                relays.size(), micros, micros / relays.size());
    }
}
