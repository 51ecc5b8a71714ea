package io.outbox.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.demo.DeliveryChecker.CheckResult;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code ./demo --notify redis|postgres} on the real PostgreSQL and Redis of this machine (rules
 * N3-N5, R8): the writers tell only their own transport, every relay hears of commits only through
 * its own subscription or listening connection, as a relay in another process would; the summary
 * says how many hints the relays received while the writers ran and prints the commit-to-consume
 * latency. No latency bound is asserted: on a loaded machine the writers fall behind the rate and
 * the figure measures the queue (the figures come from {@code ./demo notify-bench} on a quiet one).
 */
class DemoNotifyTest {

    /** Orders per second: slow enough that the relays idle between orders, so each order needs a wake-up. */
    private static final String RATE = "200";
    private static final Pattern RECEIVED = Pattern.compile("received ([0-9,]+) hint messages");

    private record Outcome(int status, DemoSummary summary, String out, String err) {
    }

    private static Outcome demo(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        OutboxDemo app = new OutboxDemo();
        String url = TestServers.required("OUTBOX_TEST_POSTGRES_URL", "PostgreSQL");
        String user = TestServers.required("OUTBOX_TEST_POSTGRES_USER", "PostgreSQL");
        String[] common = {"--jdbc-url", url, "--jdbc-user", user, "--bootstrap-servers", TestServers.kafka(),
            "--orders", "1000", "--customers", "50", "--relays", "2", "--rate", RATE, "--no-progress"};
        String[] all = new String[common.length + args.length];
        System.arraycopy(common, 0, all, 0, common.length);
        System.arraycopy(args, 0, all, common.length, args.length);
        int status = app.execute(new PrintWriter(out), new PrintWriter(err), all);
        return new Outcome(status, app.runCommand().summary(), out.toString(), err.toString());
    }

    private static void assertWokenThroughTheTransport(Outcome outcome, String wakeUps) {
        String context = String.format("%nstdout:%n%s%nstderr:%n%s", outcome.out(), outcome.err());
        assertThat(outcome.summary()).as("a summary" + context).isNotNull();
        CheckResult result = outcome.summary().result();
        assertThat(outcome.status()).as("exit status" + context).isZero();
        assertThat(result.enqueued()).as("enqueued" + context).isEqualTo(1000);
        assertThat(result.lost()).as("lost" + context).isZero();
        assertThat(result.orderViolations()).as("order violations" + context).isZero();
        assertThat(outcome.out()).contains("wake-ups", wakeUps, "latency p50", "latency p99",
                "OK: every committed order was delivered");
        Matcher received = RECEIVED.matcher(outcome.summary().wakeUps());
        assertThat(received.find()).as("the summary counts the hints" + context).isTrue();
        assertThat(Long.parseLong(received.group(1).replace(",", "")))
                .as("hints the relays received through the transport while the writers ran" + context).isPositive();
        assertThat(result.p99Millis()).isNotNaN();
    }

    @Test
    void n5_redis_theRelaysAreWokenThroughRedisPubSub() {
        String redis = TestServers.required("OUTBOX_TEST_REDIS_URI", "Redis");

        Outcome outcome = demo("--notify", "redis", "--redis-uri", redis);

        assertWokenThroughTheTransport(outcome, "redis pub/sub (" + redis + ", channel outbox-demo-");
    }

    @Test
    void n5_postgres_theRelaysAreWokenThroughListenNotify() {
        Outcome outcome = demo("--notify", "postgres");

        assertWokenThroughTheTransport(outcome, "postgres LISTEN/NOTIFY (channel outbox_demo_");
    }
}
