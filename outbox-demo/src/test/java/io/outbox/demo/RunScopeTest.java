package io.outbox.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.OutboxMessage;
import io.outbox.relay.internal.Redactor;
import io.outbox.spi.CloseableOutboxStore;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The clean-up of a run on an interruption: what the JVM shutdown hook runs, invoked directly
 * (no signal is sent), exactly once together with the normal clean-up.
 */
class RunScopeTest {

    /** A database that counts what is done to it. */
    private static final class CountingDatabase implements DemoDatabase {
        final AtomicInteger drops = new AtomicInteger();
        final AtomicInteger closes = new AtomicInteger();

        @Override
        public String describe() {
            return "counting";
        }

        @Override
        public List<String> objectNames() {
            return List.of("demo_t_orders", "demo_t_outbox");
        }

        @Override
        public void createSchema() {
        }

        @Override
        public void placeOrder(Order order, OutboxMessage message) {
        }

        @Override
        public void enqueue(List<OutboxMessage> messages) {
        }

        @Override
        public int maxMessagesPerTransaction() {
            return 1;
        }

        @Override
        public CloseableOutboxStore openRelayStore() {
            throw new UnsupportedOperationException();
        }

        @Override
        public void dropSchema() {
            drops.incrementAndGet();
        }

        @Override
        public void close() {
            closes.incrementAndGet();
        }
    }

    private final StringWriter logged = new StringWriter();
    private final PrintWriter log = new PrintWriter(logged, true);
    private final CountingDatabase database = new CountingDatabase();

    private RunScope scope(boolean keep) {
        // An address nobody listens on: the admin client connects only when used, and nothing is.
        return new RunScope(DemoKafka.connect("127.0.0.1:9", log), database, keep, Redactor.patternsOnly(), log);
    }

    @Test
    void theHookDropsTheRunsTablesOnceAndSaysSo() {
        RunScope scope = scope(false);

        scope.onShutdown();
        scope.close();
        scope.onShutdown();

        assertThat(database.drops).hasValue(1);
        assertThat(database.closes).hasValue(1);
        assertThat(logged.toString()).isEqualTo(String.format(
                "interrupted; cleaned up: dropped demo_t_orders, demo_t_outbox%n"));
    }

    @Test
    void afterTheNormalCleanUpTheHookDoesNothing() {
        RunScope scope = scope(false);

        scope.close();
        scope.onShutdown();

        assertThat(database.drops).hasValue(1);
        assertThat(database.closes).hasValue(1);
        assertThat(logged.toString()).isEmpty();
    }

    @Test
    void withKeepTheHookKeepsAndSaysWhat() {
        RunScope scope = scope(true);

        scope.onShutdown();

        assertThat(database.drops).hasValue(0);
        assertThat(database.closes).hasValue(1);
        assertThat(logged.toString()).isEqualTo(String.format(
                "interrupted; kept (--keep): demo_t_orders, demo_t_outbox%n"));
    }

    @Test
    void theHookInterruptsTheRunWhichCleansUpItself() throws Exception {
        CountDownLatch opened = new CountDownLatch(1);
        AtomicBoolean ownerInterrupted = new AtomicBoolean();
        RunScope[] scope = new RunScope[1];
        Thread owner = new Thread(() -> {
            try (RunScope s = scope(false)) {
                scope[0] = s;
                opened.countDown();
                Thread.sleep(60_000); // a run in progress
            } catch (InterruptedException e) {
                ownerInterrupted.set(true);
            }
        });
        owner.start();
        assertThat(opened.await(30, TimeUnit.SECONDS)).isTrue();

        scope[0].onShutdown();
        owner.join(30_000);

        assertThat(ownerInterrupted).isTrue();
        assertThat(database.drops).hasValue(1);
        assertThat(database.closes).hasValue(1);
        assertThat(logged.toString()).endsWith(String.format("interrupted; cleaned up: dropped demo_t_orders,"
                + " demo_t_outbox%n"));
    }
}
