package io.outbox.relay;

import io.outbox.relay.kafka.KafkaOutboxPublisher;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.metrics.KafkaMetric;

/**
 * A real {@link KafkaProducer} behind a gate in its send path, to stall a relay in the middle of
 * a transaction the way a GC pause or a frozen process would: {@link Gate#holdAfter} lets a number
 * of sends through and then holds every later send until {@link Gate#open()}; {@link Gate#delay}
 * slows every send down.
 */
final class GatedProducer implements Producer<byte[], byte[]> {

    /** One gate for all the producers of one publisher. */
    static final class Gate {
        private volatile CountDownLatch opened = new CountDownLatch(0);
        private volatile int passBeforeHold = -1;
        private final AtomicInteger passed = new AtomicInteger();
        private final CountDownLatch held = new CountDownLatch(1);
        private volatile long delayMillis;
        /** Ids of the records sent or held after {@link #holdAfter} was called. */
        final Set<UUID> sentOrHeldWhileArmed = ConcurrentHashMap.newKeySet();

        Function<Map<String, Object>, Producer<byte[], byte[]>> factory() {
            return config -> new GatedProducer(new KafkaProducer<>(config), this);
        }

        /** From now on, lets {@code sends} more sends through, then holds every send until {@link #open()}. */
        void holdAfter(int sends) {
            opened = new CountDownLatch(1);
            passed.set(0);
            passBeforeHold = sends;
        }

        void delay(long millis) {
            delayMillis = millis;
        }

        boolean awaitHeld(Duration timeout) throws InterruptedException {
            return held.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
        }

        void open() {
            passBeforeHold = -1;
            opened.countDown();
        }

        void beforeSend(ProducerRecord<byte[], byte[]> record) {
            if (delayMillis > 0) {
                sleep(delayMillis);
            }
            if (passBeforeHold < 0) {
                return;
            }
            Header id = record.headers().lastHeader(KafkaOutboxPublisher.DEFAULT_MESSAGE_ID_HEADER);
            sentOrHeldWhileArmed.add(UUID.fromString(new String(id.value(), StandardCharsets.UTF_8)));
            if (passed.getAndIncrement() >= passBeforeHold) {
                held.countDown();
                try {
                    opened.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        private static void sleep(long millis) {
            try {
                Thread.sleep(millis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private final Producer<byte[], byte[]> delegate;
    private final Gate gate;

    GatedProducer(Producer<byte[], byte[]> delegate, Gate gate) {
        this.delegate = delegate;
        this.gate = gate;
    }

    @Override
    public Future<RecordMetadata> send(ProducerRecord<byte[], byte[]> record, Callback callback) {
        gate.beforeSend(record);
        return delegate.send(record, callback);
    }

    @Override
    public Future<RecordMetadata> send(ProducerRecord<byte[], byte[]> record) {
        gate.beforeSend(record);
        return delegate.send(record);
    }

    @Override
    public void initTransactions() {
        delegate.initTransactions();
    }

    @Override
    public void beginTransaction() {
        delegate.beginTransaction();
    }

    @Override
    public void sendOffsetsToTransaction(Map<TopicPartition, OffsetAndMetadata> offsets,
                                         ConsumerGroupMetadata groupMetadata) {
        delegate.sendOffsetsToTransaction(offsets, groupMetadata);
    }

    @Override
    public void commitTransaction() {
        delegate.commitTransaction();
    }

    @Override
    public void abortTransaction() {
        delegate.abortTransaction();
    }

    @Override
    public void registerMetricForSubscription(KafkaMetric metric) {
        delegate.registerMetricForSubscription(metric);
    }

    @Override
    public void unregisterMetricFromSubscription(KafkaMetric metric) {
        delegate.unregisterMetricFromSubscription(metric);
    }

    @Override
    public void flush() {
        delegate.flush();
    }

    @Override
    public List<PartitionInfo> partitionsFor(String topic) {
        return delegate.partitionsFor(topic);
    }

    @Override
    public Map<MetricName, ? extends Metric> metrics() {
        return delegate.metrics();
    }

    @Override
    public Uuid clientInstanceId(Duration timeout) {
        return delegate.clientInstanceId(timeout);
    }

    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public void close(Duration timeout) {
        delegate.close(timeout);
    }
}
