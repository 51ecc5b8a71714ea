package io.outbox.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code ./demo fleet-sim}: a small fleet prints every figure and exits 0; bad options exit 2. */
class FleetSimCommandTest {

    private record Outcome(int status, String out, String err) {
    }

    private static Outcome run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = new OutboxExamples().execute(new PrintWriter(out), new PrintWriter(err), args);
        return new Outcome(status, out.toString(), err.toString());
    }

    @Test
    void aSmallFleetMeetsTheTargetsAndPrintsEveryFigure() {
        Outcome outcome = run("fleet-sim", "--relays", "12", "--buckets", "1024", "--rounds", "2", "--scaling", "256");
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
                .endsWith("targets: all held" + System.lineSeparator());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "--relays 0                                | --relays must be at least 1 but was 0",
        "--buckets 65537                           | --buckets must be 1-65536 but was 65537",
        "--lease-duration 10s --renew-interval 10s | --renew-interval must be shorter than --lease-duration but was 10s >= 10s",
        "--store-latency-ms -1                     | --store-latency-ms and --max-clock-offset-ms must not be negative",
        "--rounds 0                                | --rounds must be at least 1 but was 0",
        "--scaling 0                               | --scaling takes bucket counts 1-65536 or 'none' but got '0'"})
    void badOptionsExitWith2NamingTheValue(String options, String message) {
        String[] args = ("fleet-sim " + options.trim()).split("\\s+");
        Outcome outcome = run(args);
        assertThat(outcome.status()).isEqualTo(OutboxExamples.EXIT_USAGE);
        assertThat(outcome.err()).contains(message);
    }
}
