package io.outbox.demo;

import io.outbox.relay.OutboxRelay;
import io.outbox.relay.RelayListener;
import io.outbox.relay.RelayOptions;
import io.outbox.relay.kafka.KafkaOutboxPublisher;
import io.outbox.relay.kafka.KafkaTransactions;
import io.outbox.spi.OutboxStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.apache.kafka.clients.producer.ProducerConfig;

/**
 * R relays in this process, each with its own store (its own pool or client) and its own
 * {@link KafkaOutboxPublisher}, as R relay processes would have. They share the buckets through
 * the store's leases.
 */
final class RelayFleet implements AutoCloseable {

    /**
     * Lease timing for the demo: buckets are rebalanced every second (the library's default is
     * every 10 s, made for long-running services), so a second relay gets its share at once.
     */
    static final Duration LEASE_DURATION = Duration.ofSeconds(10);
    static final Duration LEASE_RENEW_INTERVAL = Duration.ofSeconds(1);

    private final List<Member> members = new ArrayList<>();
    /** Notified by every relay's counter after each published batch, for {@link #awaitPublished}. */
    private final Object progress = new Object();

    private record Member(OutboxRelay relay, KafkaOutboxPublisher publisher, OutboxStore store, Counter counter) {
    }

    /** Counts what a relay published and what failed; wakes {@link #awaitPublished} after each batch. */
    private static final class Counter implements RelayListener {
        final AtomicLong published = new AtomicLong();
        final AtomicLong publishFailures = new AtomicLong();
        final AtomicLong storeErrors = new AtomicLong();
        private final Object progress;

        Counter(Object progress) {
            this.progress = progress;
        }

        @Override
        public void onPublished(int bucket, int count) {
            published.addAndGet(count);
            synchronized (progress) {
                progress.notifyAll();
            }
        }

        @Override
        public void onPublishFailed(int bucket, int acknowledged, Throwable error) {
            publishFailures.incrementAndGet();
        }

        @Override
        public void onStoreError(Throwable error) {
            storeErrors.incrementAndGet();
        }
    }

    private RelayFleet() {
    }

    /**
     * Creates {@code count} relays named {@code <idPrefix>-1} to {@code <idPrefix>-<count>}, with
     * their stores and publishers; {@link #start()} starts them.
     *
     * @param stores opens one store per relay
     * @param options the relays' options; the relay id is set here
     */
    static RelayFleet create(int count, String idPrefix, Supplier<OutboxStore> stores, String bootstrapServers,
                            RelayOptions options) {
        return create(count, idPrefix, stores, bootstrapServers, options, null);
    }

    /**
     * Creates the relays as {@link #create(int, String, Supplier, String, RelayOptions)} does; with a
     * {@code transactionalIdPrefix} their publishers run in the transactional mode (K5-K7), all
     * with that prefix, so a bucket's producers fence each other whichever relay owns it.
     *
     * @param transactionalIdPrefix the prefix of the buckets' transactional ids, or null for the
     *     default mode
     */
    static RelayFleet create(int count, String idPrefix, Supplier<OutboxStore> stores, String bootstrapServers,
                            RelayOptions options, String transactionalIdPrefix) {
        RelayFleet fleet = new RelayFleet();
        try {
            for (int i = 1; i <= count; i++) {
                String relayId = idPrefix + "-" + i;
                RelayOptions own = options.toBuilder().relayId(relayId).build();
                OutboxStore store = stores.get();
                KafkaOutboxPublisher publisher = null;
                try {
                    Map<String, Object> producer = new LinkedHashMap<>(producerSettings(bootstrapServers, relayId));
                    if (transactionalIdPrefix != null) {
                        producer.put(KafkaTransactions.TRANSACTIONS_CONFIG, "true");
                        producer.put(KafkaTransactions.TRANSACTIONAL_ID_PREFIX_CONFIG, transactionalIdPrefix);
                    }
                    publisher = KafkaOutboxPublisher.builder(producer).build();
                    Counter counter = new Counter(fleet.progress);
                    OutboxRelay relay = OutboxRelay.builder(store, publisher).options(own).listener(counter).build();
                    fleet.members.add(new Member(relay, publisher, store, counter));
                } catch (RuntimeException e) {
                    if (publisher != null) {
                        publisher.close();
                    }
                    DemoDatabase.closeStore(store);
                    throw e;
                }
            }
            return fleet;
        } catch (RuntimeException | Error e) {
            fleet.close();
            throw e;
        }
    }

    /** The relays, in creation order; owned by the fleet. */
    List<OutboxRelay> relays() {
        return members.stream().map(Member::relay).toList();
    }

    /** Starts every relay; they publish on their own threads from now on. */
    void start() {
        members.forEach(m -> m.relay.start());
    }

    /**
     * Waits until the relays have published {@code count} messages in all. It sleeps until a relay
     * reports a published batch (checking for a stopped relay at least every 50 ms), so the wait
     * costs no CPU of its own: the bench counts this process's CPU over the drain.
     *
     * @return whether they did within the timeout
     * @throws IllegalStateException if a relay stopped on a fatal error
     */
    boolean awaitPublished(long count, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (progress) {
            while (published() < count) {
                failIfStopped();
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                progress.wait(Math.max(1, Math.min(TimeUnit.NANOSECONDS.toMillis(left), 50)));
            }
        }
        return true;
    }

    /**
     * The producer settings each relay's publisher gets, before the publisher enforces its own
     * (rule K1, {@link KafkaOutboxPublisher#effectiveConfig}): the cluster and a client id, all
     * else Kafka's defaults.
     */
    static Map<String, Object> producerSettings(String bootstrapServers, String clientId) {
        return Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers, ProducerConfig.CLIENT_ID_CONFIG,
                clientId);
    }

    /** Options for the relays of a run, with the library's store concurrency. */
    static RelayOptions options(int buckets, int batchSize) {
        return options(buckets, batchSize, RelayOptions.DEFAULT_STORE_CONCURRENCY);
    }

    /** Options for the relays of a run. */
    static RelayOptions options(int buckets, int batchSize, int storeConcurrency) {
        return RelayOptions.builder()
                .bucketCount(buckets)
                .batchSize(batchSize)
                .storeConcurrency(storeConcurrency)
                .leaseDuration(LEASE_DURATION)
                .leaseRenewInterval(LEASE_RENEW_INTERVAL)
                .closeTimeout(Duration.ofSeconds(10))
                .build();
    }

    /** Tells every relay that a bucket received a message; only its owner acts (R8). */
    void wakeUp(int bucket) {
        List<Integer> hint = List.of(bucket);
        for (Member m : members) {
            m.relay.wakeUp(hint);
        }
    }

    /**
     * Waits until the relays own every bucket between them, none twice, in fair shares (the
     * largest share at most one above the smallest), so the run starts with the work spread.
     *
     * @return whether they got there in time
     */
    boolean awaitBalanced(int buckets, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() - deadline < 0) {
            failIfStopped();
            int total = 0;
            int smallest = Integer.MAX_VALUE;
            int largest = 0;
            TreeSet<Integer> union = new TreeSet<>();
            for (Member m : members) {
                List<Integer> owned = m.relay.ownedBuckets();
                union.addAll(owned);
                total += owned.size();
                smallest = Math.min(smallest, owned.size());
                largest = Math.max(largest, owned.size());
            }
            if (union.size() == buckets && total == buckets && largest - smallest <= 1) {
                return true;
            }
            Thread.sleep(20);
        }
        return false;
    }

    /** The buckets each relay owns now, by relay id. */
    Map<String, List<Integer>> ownedBuckets() {
        Map<String, List<Integer>> owned = new LinkedHashMap<>();
        members.forEach(m -> owned.put(m.relay.relayId(), m.relay.ownedBuckets()));
        return owned;
    }

    /** Messages published (acknowledged and deleted) by each relay, by relay id. */
    Map<String, Long> publishedByRelay() {
        Map<String, Long> published = new LinkedHashMap<>();
        members.forEach(m -> published.put(m.relay.relayId(), m.counter.published.get()));
        return published;
    }

    /** Messages published by all relays. */
    long published() {
        return members.stream().mapToLong(m -> m.counter.published.get()).sum();
    }

    /** Batches that failed to publish and were retried, over all relays. */
    long publishFailures() {
        return members.stream().mapToLong(m -> m.counter.publishFailures.get()).sum();
    }

    /** Store calls that failed and were retried, over all relays. */
    long storeErrors() {
        return members.stream().mapToLong(m -> m.counter.storeErrors.get()).sum();
    }

    /**
     * Throws if a relay stopped on a fatal error (R6).
     *
     * @throws IllegalStateException naming the relay, with the error as its cause
     */
    void failIfStopped() {
        for (Member m : members) {
            if (m.relay.termination().isCompletedExceptionally()) {
                Throwable cause;
                try {
                    m.relay.termination().join();
                    cause = null;
                } catch (CompletionException e) {
                    cause = e.getCause();
                }
                throw new IllegalStateException("relay " + m.relay.relayId() + " stopped: " + cause, cause);
            }
        }
    }

    /** Closes the relays (which give their leases back), then their publishers and stores. */
    @Override
    public void close() {
        RuntimeException failure = null;
        for (Member m : members) {
            m.relay.close();
        }
        for (Member m : members) {
            try {
                m.publisher.close();
                DemoDatabase.closeStore(m.store);
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        members.clear();
        if (failure != null) {
            throw failure;
        }
    }
}
