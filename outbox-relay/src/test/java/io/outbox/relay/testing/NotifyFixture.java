package io.outbox.relay.testing;

import io.outbox.OutboxMessage;
import io.outbox.embedded.EmbeddedKafkaBroker;
import io.outbox.relay.OutboxRelay;
import io.outbox.relay.RelayOptions;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.spi.LeaseRelease;
import io.outbox.spi.LeaseRenewal;
import io.outbox.spi.LeaseRequest;
import io.outbox.spi.OutboxStore;
import io.outbox.spi.Pending;
import io.outbox.store.jdbc.JdbcOutboxStore;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * What the notification tests share: the real PostgreSQL of this machine
 * ({@code OUTBOX_TEST_POSTGRES_URL}, user {@code OUTBOX_TEST_POSTGRES_USER}), JDBC stores on
 * unique tables, relays publishing to an in-process Kafka broker, and a consumer that notes when
 * each message id arrived. Shared by the notification transport modules' tests through this
 * module's test jar. Not thread-safe apart from the consumed-message records.
 */
public final class NotifyFixture implements AutoCloseable {

    public static final String URL = env("OUTBOX_TEST_POSTGRES_URL", "jdbc:postgresql://127.0.0.1:5432/test");
    public static final String USER = env("OUTBOX_TEST_POSTGRES_USER", "postgres");
    public static final String PASSWORD = System.getenv("OUTBOX_TEST_POSTGRES_PASSWORD");
    public static final int BUCKETS = 8;

    private static final StringSerializer STRING = new StringSerializer();

    public final EmbeddedKafkaBroker broker;
    public final String prefix = "ntf_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10) + "_";
    public final String topic = prefix.replace("_", "-") + "t";
    public final PGSimpleDataSource dataSource = new PGSimpleDataSource();
    public final JdbcOutboxStore writerStore;
    private final List<AutoCloseable> closing = new ArrayList<>();
    /** Message id to the nanoTime it was consumed at. */
    public final Map<UUID, Long> consumed = new ConcurrentHashMap<>();
    public final AtomicInteger duplicates = new AtomicInteger();
    private final Thread consumer;
    private volatile boolean closed;

    /**
     * Creates the tables and the topic and starts the consumer.
     *
     * @param broker the running broker; not closed here
     */
    public NotifyFixture(EmbeddedKafkaBroker broker) {
        this.broker = broker;
        dataSource.setUrl(URL);
        dataSource.setUser(USER);
        if (PASSWORD != null) {
            dataSource.setPassword(PASSWORD);
        }
        writerStore = JdbcOutboxStore.builder(dataSource).tablePrefix(prefix).build();
        writerStore.createSchema();
        broker.createTopic(topic, BUCKETS);
        consumer = new Thread(this::consume, "test-consumer");
        consumer.setDaemon(true);
        consumer.start();
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    /** A new connection to the test database; the caller closes it. */
    public Connection connection() throws SQLException {
        return DriverManager.getConnection(URL, USER, PASSWORD);
    }

    /** A store of its own for a relay, counting the calls a hint can cause. */
    public CountingStore relayStore() {
        return new CountingStore(JdbcOutboxStore.builder(dataSource).tablePrefix(prefix).build());
    }

    /** Starts a relay on the store publishing to the broker; closed by {@link #close()}. */
    public OutboxRelay relay(OutboxStore store, RelayOptions options) {
        KafkaOutboxPublisher publisher = KafkaOutboxPublisher.builder(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
                ProducerConfig.LINGER_MS_CONFIG, 0)).build();
        OutboxRelay relay = new OutboxRelay(store, publisher, options);
        closing.add(publisher);
        closing.add(relay);
        relay.start();
        return relay;
    }

    /** Closes the resource in {@link #close()}, in reverse order of registration. */
    public <T extends AutoCloseable> T closeLater(T closeable) {
        closing.add(closeable);
        return closeable;
    }

    /** A message to the topic whose key hashes to the bucket. */
    public static OutboxMessage message(String topic, int bucket) {
        String key = keyFor(bucket);
        return OutboxMessage.create(topic, key, "v", STRING, STRING, BUCKETS);
    }

    /** A key that hashes to the bucket (E2). */
    public static String keyFor(int bucket) {
        for (int i = 0; ; i++) {
            String key = "k" + i;
            if (io.outbox.OutboxBucket.forKey(key.getBytes(StandardCharsets.UTF_8), BUCKETS) == bucket) {
                return key;
            }
        }
    }

    private void consume() {
        Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = c.partitionsFor(topic, Duration.ofSeconds(30)).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            c.assign(partitions);
            c.seekToBeginning(partitions);
            while (!closed) {
                for (ConsumerRecord<byte[], byte[]> record : c.poll(Duration.ofMillis(50))) {
                    long now = System.nanoTime();
                    Header h = record.headers().lastHeader(KafkaOutboxPublisher.DEFAULT_MESSAGE_ID_HEADER);
                    UUID id = UUID.fromString(new String(h.value(), StandardCharsets.UTF_8));
                    if (consumed.putIfAbsent(id, now) != null) {
                        duplicates.incrementAndGet();
                    }
                }
            }
        } catch (org.apache.kafka.common.errors.InterruptException e) {
            // closing
        }
    }

    @Override
    public void close() {
        for (int i = closing.size() - 1; i >= 0; i--) {
            try {
                closing.get(i).close();
            } catch (Exception e) {
                throw new IllegalStateException("closing " + closing.get(i) + " failed", e);
            }
        }
        closed = true;
        try {
            consumer.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A store that counts the calls a relay makes, by kind. */
    public static final class CountingStore implements LeaseRenewal.Self, LeaseRelease.Self {

        public final JdbcOutboxStore delegate;
        public final AtomicInteger acquire = new AtomicInteger();
        public final AtomicInteger pending = new AtomicInteger();
        public final AtomicInteger nextBatch = new AtomicInteger();
        public final AtomicInteger other = new AtomicInteger();

        CountingStore(JdbcOutboxStore delegate) {
            this.delegate = delegate;
        }

        /** The calls a hint can cause: a fetch of a hinted bucket or a discovery. */
        public int hintCalls() {
            return pending.get() + nextBatch.get();
        }

        public int all() {
            return acquire.get() + pending.get() + nextBatch.get() + other.get();
        }

        @Override
        public List<Integer> acquireBucketLeases(LeaseRequest request) {
            acquire.incrementAndGet();
            return delegate.acquireBucketLeases(request);
        }

        @Override
        public List<Integer> bucketsWithPending(List<Integer> buckets) {
            pending.incrementAndGet();
            return delegate.bucketsWithPending(buckets);
        }

        @Override
        public List<Pending> nextBatch(int bucket, int maxCount, long maxBytes) {
            nextBatch.incrementAndGet();
            return delegate.nextBatch(bucket, maxCount, maxBytes);
        }

        @Override
        public void markPublished(int bucket, List<Pending> published) {
            other.incrementAndGet();
            delegate.markPublished(bucket, published);
        }

        @Override
        public List<Integer> renewBucketLeases(LeaseRequest request) {
            other.incrementAndGet();
            return delegate.renewBucketLeases(request);
        }

        @Override
        public void releaseBucketLeases(String relayId) {
            other.incrementAndGet();
            delegate.releaseBucketLeases(relayId);
        }
    }
}
