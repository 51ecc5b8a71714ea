package io.outbox.tck;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.spi.support.FairShare;
import java.time.Duration;
import java.util.List;
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
 * crash), no move in a stable fleet, moves bounded by the fair-share difference plus one.
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
                    private final java.util.Map<String, Integer> calls = new java.util.HashMap<>();

                    @Override
                    public List<Integer> acquireBucketLeases(io.outbox.spi.LeaseRequest request) {
                        int call = calls.merge(request.relayId(), 1, Integer::sum);
                        return super.acquireBucketLeases(new io.outbox.spi.LeaseRequest(
                                request.relayId() + "#" + call % 2, request.bucketCount(), request.leaseDuration(),
                                request.heldBuckets()));
                    }
                }).build();
        FleetSimulation.Episode start = faulty.coldStart(FleetSimulation.relayIds(10), 6);
        assertThat(start.converged()).as("%s", start).isFalse();
        assertThat(faulty.runRounds(3)).as("moves of the faulty fleet").isPositive();
        assertThat(faulty.converged()).isFalse();
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
