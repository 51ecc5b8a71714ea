package io.outbox.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The demo's {@code --inbox} consumer end to end (rules I1, I2's input): every order is applied to
 * its customer's counter through the store's inbox while the consumer rewinds its partitions to
 * cause repeats; every counter must end equal to the customer's orders, the repeats refused.
 */
class DemoInboxTest {

    private record Outcome(int status, RunCommand command, String out, String err) {
    }

    private static Outcome demo(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        OutboxDemo app = new OutboxDemo();
        List<String> all = new ArrayList<>(List.of(args));
        all.add("--inbox");
        all.add("--no-progress");
        int status = app.execute(new PrintWriter(out), new PrintWriter(err), all.toArray(String[]::new));
        return new Outcome(status, app.runCommand(), out.toString(), err.toString());
    }

    private static void assertCountersMatch(Outcome outcome, int orders) {
        String context = String.format("%nstdout:%n%s%nstderr:%n%s", outcome.out(), outcome.err());
        InboxConsumer.Result inbox = outcome.command().inboxResult();
        assertThat(inbox).as("the run had an inbox consumer" + context).isNotNull();
        assertThat(inbox.distinctOrders()).as("distinct orders the inbox consumer read" + context).isEqualTo(orders);
        assertThat(inbox.firstDeliveries()).as("first deliveries" + context).isEqualTo(orders);
        assertThat(inbox.counted()).as("sum of the counters" + context).isEqualTo(orders);
        assertThat(inbox.mismatchedCustomers()).as("customers whose counter differs" + context).isZero();
        assertThat(inbox.rewinds()).as("rewinds" + context).isPositive();
        assertThat(inbox.repeatsDropped()).as("repeats the inbox refused" + context).isPositive();
        assertThat(inbox.passed()).isTrue();
        assertThat(outcome.status()).as("exit status" + context).isZero();
        assertThat(outcome.out()).contains("inbox repeats", "OK: every customer's counter equals the orders it placed");
    }

    @Test
    void I1_aCounterThatDiffersFailsTheRunWithStatus3() {
        InboxConsumer.Result off = new InboxConsumer.Result(10, 10, 4, 2, 11, 1, "customer 3: counter 2, orders 1");
        assertThat(off.passed()).isFalse();
        assertThat(off.exitCode(0)).isEqualTo(OutboxDemo.EXIT_ERROR).isEqualTo(3);
        assertThat(off.exitCode(OutboxDemo.EXIT_LOST)).as("the delivery check's status comes first")
                .isEqualTo(OutboxDemo.EXIT_LOST);
        assertThat(off.render()).contains("mismatches", "FAILED", "customer 3: counter 2, orders 1");
        InboxConsumer.Result ok = new InboxConsumer.Result(10, 10, 4, 2, 10, 0, null);
        assertThat(ok.exitCode(0)).isZero();
        assertThat(ok.render()).contains("OK: every customer's counter equals the orders it placed");
    }

    @Test
    void I1_onEmbeddedH2EveryCounterEqualsTheOrdersPlacedDespiteRepeats() {
        assertCountersMatch(demo("--orders", "1000", "--customers", "40"), 1000);
    }

    @Test
    void I1_onPostgresql() {
        String url = TestServers.required("OUTBOX_TEST_POSTGRES_URL", "PostgreSQL");
        String user = TestServers.required("OUTBOX_TEST_POSTGRES_USER", "PostgreSQL");
        assertCountersMatch(demo("--jdbc-url", url, "--jdbc-user", user, "--bootstrap-servers", TestServers.kafka(),
                "--orders", "600", "--customers", "30"), 600);
    }

    @Test
    void I1_onMariadb() {
        String url = TestServers.required("OUTBOX_TEST_MARIADB_URL", "MariaDB");
        String user = TestServers.required("OUTBOX_TEST_MARIADB_USER", "MariaDB");
        assertCountersMatch(demo("--jdbc-url", url, "--jdbc-user", user, "--bootstrap-servers", TestServers.kafka(),
                "--orders", "500", "--customers", "30"), 500);
    }

    @Test
    void I1_onDynoxide() {
        String endpoint = TestServers.required("OUTBOX_TEST_DYNAMODB_ENDPOINT", "the dynoxide DynamoDB emulator");
        assertCountersMatch(demo("--dynamodb-endpoint", endpoint, "--bootstrap-servers", TestServers.kafka(),
                "--orders", "300", "--customers", "20"), 300);
    }

    /** One writer and one relay, as jongodb needs (see DemoEndToEndTest); the inbox consumer is one thread. */
    @Test
    void I1_onJongodb() {
        String uri = TestServers.required("OUTBOX_TEST_JONGODB_URI", "the jongodb MongoDB emulator");
        assertCountersMatch(demo("--mongodb-uri", uri, "--mongodb-database", "outbox_demo_test", "--relays", "1",
                "--writers", "1", "--bootstrap-servers", TestServers.kafka(), "--orders", "100", "--customers", "10"),
                100);
    }
}
