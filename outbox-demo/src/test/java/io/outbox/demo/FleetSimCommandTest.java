package io.outbox.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.demo.CommandLineTest.Outcome;
import org.junit.jupiter.api.Test;

/**
 * {@code ./demo fleet-sim}: a small fleet prints every figure and exits 0 (its bad options are in
 * {@link CommandLineTest}).
 */
class FleetSimCommandTest {

    @Test
    void aSmallFleetMeetsTheTargetsAndPrintsEveryFigure() {
        Outcome outcome = CommandLineTest.run("fleet-sim", "--relays", "12", "--buckets", "1024", "--rounds", "2",
                "--scaling", "256", "--churn-runs", "2", "--churn-duration", "2m");
        assertThat(outcome.status()).as(outcome.out() + outcome.err()).isZero();
        assertThat(outcome.out())
                .contains("cold start 12 relays: converged in ")
                .contains("stable fleet: 0 buckets moved in 2 rounds")
                .containsPattern("steady state, per relay: [0-9.]+ store calls/s \\(0\\.100 acquireBucketLeases")
                .contains("join relay-006a: converged in 2 round(s)")
                .contains("leave relay-006a: converged in 2 round(s)")
                .contains("crash relay-004: converged in ")
                .contains("CPU per acquisition at 1,024 buckets, 12 relays")
                .contains("CPU per acquisition at 256 buckets, 12 relays")
                .contains("load average")
                .contains("churn: 2 run(s) of 120s, 64 buckets, 2 veterans")
                .containsPattern("churn seed 2: churn 120 s: [0-9]+ starts, [0-9]+ crashes, longest unowned [0-9.]+ s")
                .containsPattern("churn: longest unowned [0-9.]+ s over 2 run\\(s\\) \\(target 60.0 s")
                .endsWith("targets: all held" + System.lineSeparator());
    }
}
