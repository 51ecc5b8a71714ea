package io.outbox.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Short sustained runs (seconds for minutes): they run to their end, print a line per interval and
 * the drift line, and lose nothing. No timing assertion: figures on a shared build machine mean
 * little.
 */
class SustainedSmokeTest {

    /** An interval's line: index, committed/s, p50, p99, backlog, table, index, cleanup, db and bench CPU, load. */
    private static final String INTERVAL = "\\n  %d +[\\d,]+ +[\\d.-]+ +[\\d.-]+ +[\\d,]+ +%s +%s +%s +%s +[\\d.-]+ +\\d+\\.\\d\\d";

    @Test
    void onH2ARunPrintsEveryIntervalTheDriftAndLosesNothing() {
        String out = sustained("--rate", "200", "--writers", "2", "--minute", "2s", "--duration", "8s",
                "--drift-minutes", "2", "--customers", "50", "--bootstrap-servers", TestServers.kafka(),
                "--no-progress");

        assertThat(out).contains("Outbox sustained load, run ", "200 msg/s for 8s, transaction sizes 1,10 over 2 writer(s)",
                "database: H2 in this process: counted in the bench process")
                .containsPattern("minute +committed/s +p50 ms +p99 ms +backlog +table MB +index MB +cleanup +db ms/1k");
        for (int minute = 1; minute <= 4; minute++) {
            // in-memory H2: no sizes, no cleanup figure, its CPU in the bench process's
            assertThat(out).containsPattern(String.format(INTERVAL, minute, "-", "-", "-", "-"));
        }
        assertThat(out).containsPattern("drift \\(last 2 minute\\(s\\) against the first 2\\): p50 [\\d.-]+ -> [\\d.-]+ ms, "
                + "p99 [\\d.-]+ -> [\\d.-]+ ms, database CPU - -> - ms per 1,000, bench CPU [\\d.]+ -> [\\d.]+ ms per 1,000");
        assertNothingLost(out);
    }

    @Test
    void onPostgresqlEachIntervalShowsSizesDeadTuplesAndTheBackendsCpu() {
        String url = TestServers.required("OUTBOX_TEST_POSTGRES_URL", "PostgreSQL");
        String user = TestServers.required("OUTBOX_TEST_POSTGRES_USER", "PostgreSQL");

        String out = sustained("--jdbc-url", url, "--jdbc-user", user, "--rate", "200", "--writers", "2",
                "--minute", "2s", "--duration", "8s", "--drift-minutes", "2", "--customers", "50",
                "--bootstrap-servers", TestServers.kafka(), "--no-progress");

        assertThat(out).contains("database: PostgreSQL backends of the run's writer and relay connections")
                .containsPattern("dead tuples \\(autovacuums\\) +db ms/1k");
        for (int minute = 1; minute <= 4; minute++) {
            assertThat(out).containsPattern(String.format(INTERVAL, minute, "\\d+\\.\\d", "\\d+\\.\\d",
                    "[\\d,]+ \\(\\d+\\)", "[\\d.]+"));
        }
        assertThat(out).containsPattern("database CPU [\\d.]+ -> [\\d.]+ ms per 1,000")
                .containsPattern("table \\d+\\.\\d -> \\d+\\.\\d MB");
        assertNothingLost(out);
    }

    @Test
    void aSearchOfOneRatePrintsItsTrialAndTheOutcome() {
        String out = sustained("--search", "--rate", "100", "--min-rate", "100", "--max-rate", "100", "--settle", "1s",
                "--steady", "2s", "--writers", "2", "--customers", "50", "--bootstrap-servers", TestServers.kafka(),
                "--no-progress");

        assertThat(out).contains("backlog slope at most 100 msg/s over 2s after 1s")
                .containsPattern("\\n +100 +[\\d,]+ +-?[\\d,]+\\.\\d +[\\d,]+ +[\\d.-]+ +- +(yes|no)\\n")
                .containsPattern("sustainable rate: (100 msg/s \\(no rate up to --max-rate 100 failed\\)|none found "
                        + "\\(100 msg/s failed\\)) over 1 trial\\(s\\)");
    }

    /** The messages line: as many consumed as committed, none lost, at least one committed. */
    private static void assertNothingLost(String out) {
        Matcher m = Pattern.compile("messages: ([\\d,]+) committed, ([\\d,]+) consumed, 0 lost,").matcher(out);
        assertThat(m.find()).as(out).isTrue();
        assertThat(m.group(2)).isEqualTo(m.group(1));
        assertThat(Long.parseLong(m.group(1).replace(",", ""))).isPositive();
    }

    /** Runs {@code demo sustained} with {@code args}, asserts it exited 0 and returns what it printed. */
    private static String sustained(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        String[] command = new String[args.length + 1];
        command[0] = "sustained";
        System.arraycopy(args, 0, command, 1, args.length);

        int status = new OutboxDemo().execute(new PrintWriter(out), new PrintWriter(err), command);

        assertThat(status).as("stdout:%n%s%nstderr:%n%s", out, err).isZero();
        return out.toString();
    }
}
