package io.outbox.relay;

import io.outbox.OutboxHeader;
import io.outbox.OutboxMessage;
import io.outbox.spi.LeaseRequest;
import io.outbox.tck.InMemoryOutboxStore;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * CPU time of the relay's loop thread per pass of its loop ("cycle") at 8, 1,024 and 65,536
 * buckets (in-memory store, instant publisher), in three phases:
 * <ol>
 *   <li>start: one message in every bucket; from start until every bucket's publish is in
 *       flight (the publisher holds them): acquire all buckets, find them all pending, start a
 *       batch in each;</li>
 *   <li>drain: the held publishes complete; until nothing is pending (each cycle applies the
 *       outcomes that arrived and sweeps the ready set);</li>
 *   <li>idle: 3 s with nothing pending (a discovery of every owned bucket each poll interval,
 *       100 ms, and a re-acquire every renew interval, 1 s).</li>
 * </ol>
 * The store's own calls on that thread (acquire, discovery) are included; a last line gives the
 * CPU of one acquire call alone (the in-memory store and its lease plan, every bucket held), the
 * largest single part of a cycle that re-acquires. Prints numbers;
 * asserts nothing. Excluded from the normal build; run it with
 *
 * <pre>
 * mvn -B -ntp -o -pl outbox-relay -am verify -Drelay.test.excludedGroups= -Dgroups=benchmark \
 *     -Dtest=RelayCycleBenchmark -Dsurefire.failIfNoSpecifiedTests=false
 * </pre>
 *
 * and read {@code outbox-relay/target/surefire-reports/io.outbox.relay.RelayCycleBenchmark-output.txt}.
 */
@Tag("benchmark")
class RelayCycleBenchmark {

    private static final StringSerializer STRING = new StringSerializer();
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    @Test
    void cycleCpuTimeAt8And1024And65536Buckets() throws Exception {
        run(8, "warm-up");
        run(1_024, "warm-up");
        run(65_536, "warm-up"); // the JIT compiles the code paths of large sets too
        for (int buckets : new int[] {8, 1_024, 65_536}) {
            run(buckets, "measured");
        }
    }

    private static void run(int buckets, String label) throws Exception {
        InMemoryOutboxStore store = InMemoryOutboxStore.builder().clock(Clock.systemUTC()).build();
        List<OutboxMessage> messages = new ArrayList<>(buckets);
        for (int b = 0; b < buckets; b++) { // an explicit partition p lands in bucket p % bucketCount (E2)
            messages.add(OutboxMessage.create("bench", "k", "v", STRING, STRING, List.<OutboxHeader>of(), buckets, b));
        }
        store.enqueue(messages);
        HoldingPublisher publisher = new HoldingPublisher();
        RelayOptions options = RelayOptions.builder().relayId("cycle-bench-" + buckets).bucketCount(buckets)
                .pollInterval(Duration.ofMillis(100)).leaseRenewInterval(Duration.ofSeconds(1))
                .leaseDuration(Duration.ofSeconds(30)).build();
        try (OutboxRelay relay = OutboxRelay.builder(store, publisher).options(options).build()) {
            relay.start();
            long thread = threadId("outbox-relay-" + options.relayId());
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
            while (publisher.started.get() < buckets && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            long startCpu = THREADS.getThreadCpuTime(thread);
            long startCycles = relay.cycles();
            print(label, buckets, "start", startCycles, startCpu);
            publisher.releaseAll();
            while (store.pendingMetrics(Duration.ofSeconds(1)).pendingCount() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            long drainCpu = THREADS.getThreadCpuTime(thread) - startCpu;
            long drainCycles = relay.cycles() - startCycles;
            print(label, buckets, "drain", drainCycles, drainCpu);
            long idleCpu0 = THREADS.getThreadCpuTime(thread);
            long idleCycles0 = relay.cycles();
            Thread.sleep(3_000);
            long idleCpu = THREADS.getThreadCpuTime(thread) - idleCpu0;
            long idleCycles = relay.cycles() - idleCycles0;
            print(label, buckets, "idle", idleCycles, idleCpu);
            List<Integer> all = relay.ownedBuckets();
            long best = Long.MAX_VALUE;
            for (int i = 0; i < 5; i++) {
                long before = THREADS.getCurrentThreadCpuTime();
                store.acquireBucketLeases(new LeaseRequest(options.relayId(), buckets, options.leaseDuration(), all));
                best = Math.min(best, THREADS.getCurrentThreadCpuTime() - before);
            }
            print(label, buckets, "one-acquire-call", 1, best);
        }
    }

    private static void print(String label, int buckets, String phase, long cycles, long cpuNanos) {
        if (label.equals("measured")) {
            System.out.printf("relay cycle buckets=%,d phase=%s cycles=%,d cpu.ms=%.1f cpu.ms.per.cycle=%.3f%n",
                    buckets, phase, cycles, ms(cpuNanos), ms(cpuNanos) / Math.max(1, cycles));
        }
    }

    /**
     * Holds every publish until {@link #releaseAll()}, then acknowledges at once. Constant work per
     * call (a copy-on-write list of 65,536 calls would itself cost more than the relay).
     */
    private static final class HoldingPublisher implements OutboxPublisher {

        final AtomicInteger started = new AtomicInteger();
        private final Queue<Runnable> held = new ConcurrentLinkedQueue<>();
        private volatile boolean holding = true;

        @Override
        public CompletableFuture<PublishResult> publish(List<OutboxMessage> batch) {
            started.incrementAndGet();
            if (!holding) {
                return CompletableFuture.completedFuture(PublishResult.success(batch.size()));
            }
            CompletableFuture<PublishResult> future = new CompletableFuture<>();
            held.add(() -> future.complete(PublishResult.success(batch.size())));
            return future;
        }

        void releaseAll() {
            holding = false;
            for (Runnable r = held.poll(); r != null; r = held.poll()) {
                r.run();
            }
        }
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }

    private static long threadId(String name) {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals(name)).findFirst()
                .orElseThrow(() -> new IllegalStateException("no thread " + name)).getId();
    }
}
