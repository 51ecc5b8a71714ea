package io.outbox.relay;

import io.outbox.embedded.EmbeddedKafkaBroker;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.relay.kafka.KafkaTransactions;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * What one transactional producer costs (rule K5, the bound {@link KafkaTransactions#maxBuckets()}):
 * for 1, 16, 64 and 128 producers with the publisher's settings against the in-process broker,
 * each initialized and through 10 transactions of 10 records, it prints the time to create and
 * initialize one, the retained heap (client and broker in one JVM, after GC), the threads, and the
 * producers' open connections (their {@code connection-count} metric). Prints numbers; asserts
 * nothing. Run it with
 *
 * <pre>
 * mvn -B -ntp -o -pl outbox-relay -am verify -Drelay.test.excludedGroups= -Dgroups=benchmark \
 *     -Dtest=TransactionalProducerCostBenchmark -Dsurefire.failIfNoSpecifiedTests=false
 * </pre>
 */
@Tag("benchmark")
class TransactionalProducerCostBenchmark {

    private static final Map<String, Object> EXTRA = Boolean.getBoolean("cost.fastRetry") ? Map.of("retry.backoff.ms", 10) : Map.of();

    @Test
    void costPerTransactionalProducer() throws Exception {
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start()) {
            broker.createTopic("cost", 8);
            Map<String, Object> config = KafkaOutboxPublisher.effectiveConfig(broker.adminConfig());
            warmUp(config);
            for (int count : new int[] {1, 16, 64, 128}) {
                measure(config, count);
            }
        }
    }

    private static void warmUp(Map<String, Object> config) {
        List<Producer<byte[], byte[]>> producers = open(config, 4, "warm");
        producers.forEach(p -> p.close(Duration.ofSeconds(5)));
    }

    private static void measure(Map<String, Object> config, int count) throws InterruptedException {
        long heapBefore = usedHeapAfterGc();
        int threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();
        long start = System.nanoTime();
        List<Producer<byte[], byte[]>> producers = open(config, count, "n" + count);
        long openNanos = System.nanoTime() - start;
        long txStart = System.nanoTime();
        for (int round = 0; round < 10; round++) {
            for (int i = 0; i < producers.size(); i++) {
                transaction(producers.get(i), i, 10);
            }
        }
        long txNanos = System.nanoTime() - txStart;
        long heapAfter = usedHeapAfterGc();
        for (int i = 0; i < producers.size(); i++) {
            transaction(producers.get(i), i, 500); // a full default batch: the producer keeps its pooled buffers
        }
        long heapAfterFullBatch = usedHeapAfterGc();
        int threadsAfter = ManagementFactory.getThreadMXBean().getThreadCount();
        double connections = 0;
        for (Producer<byte[], byte[]> p : producers) {
            for (Map.Entry<MetricName, ? extends Metric> e : p.metrics().entrySet()) {
                if (e.getKey().name().equals("connection-count") && e.getKey().group().equals("producer-metrics")) {
                    connections += ((Number) e.getValue().metricValue()).doubleValue();
                }
            }
        }
        System.err.printf("transactional producers=%d: create+initTransactions %.1f ms each; heap +%.2f MiB "
                        + "(%.3f MiB each); threads +%d (%.2f each); connections %.0f (%.2f each); "
                        + "commit of 10 records %.2f ms; after one transaction of 500 records of 1 KiB each: "
                        + "%.3f MiB each%n", count, openNanos / 1e6 / count,
                (heapAfter - heapBefore) / 1048576.0, (heapAfter - heapBefore) / 1048576.0 / count,
                threadsAfter - threadsBefore, (threadsAfter - threadsBefore) / (double) count, connections,
                connections / count, txNanos / 1e6 / (10.0 * count),
                (heapAfterFullBatch - heapBefore) / 1048576.0 / count);
        producers.forEach(p -> p.close(Duration.ofSeconds(5)));
        Thread.sleep(500);
    }

    private static void transaction(Producer<byte[], byte[]> p, int i, int records) {
        p.beginTransaction();
        for (int r = 0; r < records; r++) {
            p.send(new ProducerRecord<>("cost", ("key-" + i).getBytes(StandardCharsets.UTF_8), new byte[1024]));
        }
        p.commitTransaction();
    }

    private static List<Producer<byte[], byte[]>> open(Map<String, Object> base, int count, String prefix) {
        List<Producer<byte[], byte[]>> producers = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Map<String, Object> config = new java.util.HashMap<>(base);
            config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "cost-" + prefix + "-" + i);
            config.put(ProducerConfig.CLIENT_ID_CONFIG, "cost-" + prefix + "-" + i);
            config.putAll(EXTRA);
            Producer<byte[], byte[]> p = new KafkaProducer<>(config);
            p.initTransactions();
            producers.add(p);
        }
        return producers;
    }

    private static long usedHeapAfterGc() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(100);
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
