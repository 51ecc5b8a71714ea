package io.outbox.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.spi.LeaseRequest;
import io.outbox.spi.support.FairShare;
import io.outbox.tck.InMemoryOutboxStore;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * 100 relays, 65,536 buckets on the in-memory store, in simulated time with clock offsets and
 * store latency (S4b, S6, S7, S13). Asserts the properties, never a time: convergence within 3
 * rounds of a cold start, a join or a graceful leave (within 3 rounds of the lease duration after a
 * crash), no move in a stable fleet, moves bounded by the fair-share difference plus one. Small
 * fleets under churn (R14) bound the time a bucket stays unowned, in simulated time.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class FleetSimulationTest {

    private static final int RELAYS = 100;
    private static final int BUCKETS = 65_536;
    /** Lease duration 30 s over renew interval 10 s. */
    private static final int LEASE_ROUNDS = 3;

    private FleetSimulation fleet;

    @BeforeAll
    void coldStart() {
        // Clock offsets up to 45 s, more than the 30 s lease: S13 makes them irrelevant.
        fleet = FleetSimulation.builder().bucketCount(BUCKETS).maxClockOffset(Duration.ofSeconds(45))
                .storeLatency(Duration.ofMillis(20)).seed(20).build();
    }

    @Test
    @Order(1)
    void s7_coldStartOf100RelaysConvergesWithin3Rounds() {
        FleetSimulation.Episode start = fleet.coldStart(FleetSimulation.relayIds(RELAYS), 10);
        System.out.println(start);
        assertThat(start.rounds()).as("rounds until converged: %s", start).isBetween(1, 3);
        assertFairShares();
    }

    @Test
    @Order(2)
    void s7_stableFleetMovesNoBucket() {
        assertThat(fleet.runRounds(3)).as("buckets moved in 3 rounds of a stable fleet").isZero();
        assertFairShares();
    }

    @Test
    @Order(3)
    void s7_joinAtEachRankConvergesWithin3RoundsMovingOnlyTheShareDifference() {
        for (String joiner : List.of("relay-", "relay-049a", "relay-zzz")) {
            FleetSimulation.Episode join = fleet.join(joiner, 10);
            System.out.println(join);
            assertConvergedWithin(join, 3);
            assertThat(fleet.runRounds(1)).as("moves after %s", join).isZero();
        }
    }

    @Test
    @Order(4)
    void s7_gracefulLeaveAtEachRankConvergesWithin3RoundsMovingOnlyTheShareDifference() {
        for (String leaver : List.of("relay-", "relay-050", "relay-zzz")) {
            FleetSimulation.Episode leave = fleet.leave(leaver, 10);
            System.out.println(leave);
            assertConvergedWithin(leave, 3);
            assertThat(fleet.runRounds(1)).as("moves after %s", leave).isZero();
        }
    }

    @Test
    @Order(5)
    void s6_crashConvergesWithin3RoundsOfTheLeaseDuration() {
        FleetSimulation.Episode crash = fleet.crash("relay-033", 20);
        System.out.println(crash);
        assertConvergedWithin(crash, LEASE_ROUNDS + 3);
        assertThat(fleet.runRounds(1)).as("moves after %s", crash).isZero();
    }

    /**
     * The simulation bites: a store that plans each relay's calls under two ids in turn (as if the
     * relay id were not stable) never converges and moves buckets in a fleet of stable membership.
     */
    @Test
    @Order(6)
    void theSimulationCatchesAStoreThatNeverSettles() {
        FleetSimulation faulty = FleetSimulation.builder().bucketCount(256).seed(3)
                .store(clock -> new InMemoryOutboxStore(InMemoryOutboxStore.builder().clock(clock)) {
                    private final Map<String, Integer> calls = new HashMap<>();

                    @Override
                    public List<Integer> acquireBucketLeases(LeaseRequest request) {
                        int call = calls.merge(request.relayId(), 1, Integer::sum);
                        return super.acquireBucketLeases(new LeaseRequest(
                                request.relayId() + "#" + call % 2, request.bucketCount(), request.leaseDuration(),
                                request.heldBuckets()));
                    }
                }).build();
        FleetSimulation.Episode start = faulty.coldStart(FleetSimulation.relayIds(10), 6);
        assertThat(start.converged()).as("%s", start).isFalse();
        assertThat(faulty.runRounds(3)).as("moves of the faulty fleet").isPositive();
        assertThat(faulty.converged()).isFalse();
    }

    /**
     * R14 under churn, 100 seeds of 5 simulated minutes each per setting (64 buckets, lease 10 s,
     * renew 3 s): the default churn (2 veterans, one slot of relays living 1 to 10 s and replaced
     * under new ids after 0.5 to 2 s, one crash-looping id, one restart in four slow by 5 s more)
     * and a heavy one (1 veteran, 3 slots and 2 crash loops of lives 0.5 to 5 s); then the heavy one
     * with a renew interval of 1 s, under a quarter lease, where an overdue claim waits a quarter lease
     * rather than one renew interval (50 seeds). No bucket stays unowned longer than two lease
     * durations; once the churn stops the fleet converges within the lease duration plus the rounds
     * of a quarter lease and 3 more, and then moves nothing.
     */
    @Test
    @Order(7)
    void r14_underChurnNoBucketStaysUnownedLongerThanTwoLeaseDurations() {
        Duration lease = Duration.ofSeconds(10);
        FleetSimulation.Churn heavy = FleetSimulation.Churn.builder().veterans(1).churningSlots(3).crashLoops(2)
                .life(Duration.ofMillis(500), Duration.ofSeconds(5)).build();
        record Setting(FleetSimulation.Churn churn, Duration renew, int seeds) {
        }
        Map<String, Setting> settings = new LinkedHashMap<>();
        settings.put("default churn", new Setting(FleetSimulation.Churn.builder().build(), Duration.ofSeconds(3), 100));
        settings.put("heavy churn", new Setting(heavy, Duration.ofSeconds(3), 100));
        settings.put("heavy churn, renew 1 s", new Setting(heavy, Duration.ofSeconds(1), 50));
        for (Map.Entry<String, Setting> churn : settings.entrySet()) {
            Duration renew = churn.getValue().renew();
            // rounds until a lease duration and then a quarter lease have passed
            int settleRounds = roundsFor(lease.toMillis(), renew) + roundsFor(lease.toMillis() / 4, renew);
            long[] longest = new long[churn.getValue().seeds()];
            double changes = 0;
            int crashes = 0;
            for (int seed = 0; seed < longest.length; seed++) {
                FleetSimulation sim = FleetSimulation.builder().bucketCount(64).leases(lease, renew).seed(seed).build();
                FleetSimulation.ChurnRun run = sim.churn(churn.getValue().churn(), Duration.ofMinutes(5));
                assertThat(run.longestUnownedMillis()).as("R14, %s, seed %d: %s", churn.getKey(), seed, run)
                        .isLessThanOrEqualTo(2 * lease.toMillis());
                sim.runRounds(settleRounds + 3);
                assertThat(sim.converged()).as("%s, seed %d: converged after the churn stopped", churn.getKey(), seed)
                        .isTrue();
                assertThat(sim.runRounds(3)).as("%s, seed %d: moves once converged", churn.getKey(), seed).isZero();
                longest[seed] = run.longestUnownedMillis();
                changes += run.ownershipChangesPerMinute();
                crashes += run.crashes();
            }
            Arrays.sort(longest);
            System.out.printf(Locale.ROOT, "%s, %d seeds of 5 min: longest unowned %.1f s (median over seeds %.1f s), "
                            + "%.1f crashes and %.0f ownership changes per minute%n", churn.getKey(), longest.length,
                    longest[longest.length - 1] / 1000.0, longest[longest.length / 2] / 1000.0,
                    crashes / (5.0 * longest.length), changes / longest.length);
        }
    }

    /** How many rounds of {@code renew} it takes for {@code millis} to pass, rounded up. */
    private static int roundsFor(long millis, Duration renew) {
        return (int) ((millis + renew.toMillis() - 1) / renew.toMillis());
    }

    private void assertConvergedWithin(FleetSimulation.Episode episode, int rounds) {
        assertThat(episode.rounds()).as("rounds until converged: %s", episode).isBetween(1, rounds);
        assertThat(episode.moved()).as("buckets moved: %s", episode).isLessThanOrEqualTo(episode.shareDifference() + 1);
        assertFairShares();
    }

    private void assertFairShares() {
        FairShare share = FairShare.of(BUCKETS, fleet.liveRelays());
        int total = 0;
        for (String relay : fleet.liveRelays()) {
            assertThat(fleet.held(relay)).as("buckets of %s", relay).hasSize(share.share(relay));
            total += fleet.held(relay).size();
        }
        assertThat(total).isEqualTo(BUCKETS);
        assertThat(fleet.converged()).isTrue();
    }
}
