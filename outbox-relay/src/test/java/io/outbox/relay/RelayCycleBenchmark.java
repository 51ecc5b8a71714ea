package io.outbox.relay;

import io.outbox.OutboxHeader;
import io.outbox.OutboxMessage;
import io.outbox.tck.InMemoryOutboxStore;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * CPU time of the relay's publishing thread per pass of its loop ("cycle") at 8, 1,024 and 65,536
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
 * The store's own calls on that thread (acquire, discovery) are included. Prints numbers;
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
        for (int buckets : new int[] {8, 1_024, 65_536}) {
            run(buckets, "measured");
        }
    }

    private static void run(int buckets, String label) throws Exception {
        InMemoryOutboxStore store = new InMemoryOutboxStore(Clock.systemUTC());
        List<OutboxMessage> messages = new ArrayList<>(buckets);
        for (int b = 0; b < buckets; b++) { // an explicit partition p lands in bucket p % bucketCount (E2)
            messages.add(OutboxMessage.create("bench", "k", "v", STRING, STRING, List.<OutboxHeader>of(), buckets, b));
        }
        store.enqueue(messages);
        ScriptedPublisher publisher = new ScriptedPublisher().hold();
        RelayOptions options = RelayOptions.builder().relayId("cycle-bench-" + buckets).bucketCount(buckets)
                .pollInterval(Duration.ofMillis(100)).leaseRenewInterval(Duration.ofSeconds(1))
                .leaseDuration(Duration.ofSeconds(30)).build();
        try (OutboxRelay relay = OutboxRelay.builder(store, publisher).options(options).build()) {
            relay.start();
            long thread = threadId("outbox-relay-" + options.relayId());
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
            while (publisher.calls().size() < buckets && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            long startCpu = THREADS.getThreadCpuTime(thread);
            long startCycles = relay.cycles();
            print(label, buckets, "start", startCycles, startCpu);
            publisher.answer(batch -> PublishResult.success(batch.size()));
            publisher.calls().forEach(ScriptedPublisher.Call::succeed);
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
        }
    }

    private static void print(String label, int buckets, String phase, long cycles, long cpuNanos) {
        if (label.equals("measured")) {
            System.out.printf("relay cycle buckets=%,d phase=%s cycles=%,d cpu.ms=%.1f cpu.ms.per.cycle=%.3f%n",
                    buckets, phase, cycles, ms(cpuNanos), ms(cpuNanos) / Math.max(1, cycles));
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
