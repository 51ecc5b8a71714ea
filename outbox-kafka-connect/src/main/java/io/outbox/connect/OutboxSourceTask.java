package io.outbox.connect;

import io.outbox.relay.OutboxRelay;
import io.outbox.relay.RelayOptions;
import io.outbox.relay.kafka.OutboxRecords;
import io.outbox.spi.CloseableOutboxStore;
import io.outbox.spi.OutboxStores;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;
import org.apache.kafka.connect.source.TransactionContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One task of {@link OutboxSourceConnector}: a relay ({@link OutboxRelay}) whose publisher is
 * Connect. The relay leases buckets from the store under the task's own relay id (rule X1: a task,
 * another task, a standalone relay or a zombie instance of this task never publish one bucket at
 * the same time), reads each owned bucket in enqueue order and hands its batches to
 * {@link #poll()} as the records the standalone relay would publish (X2); a message is deleted only
 * after Connect reported its record written, never on null metadata, and with exactly-once support
 * only after its transaction committed (X3). A bucket's next batch is read only after the previous
 * one was settled, so a record Connect did not write is never overtaken: it and the rest of its
 * batch are read again from the bucket's head after {@code relay.error.backoff.ms} (rule R3).
 *
 * <p>Wake-ups come from the {@code notify.*} transport, if one is set; the relay polls the store
 * every {@code relay.poll.interval.ms} anyway. Leases are renewed every
 * {@code relay.lease.renew.interval.ms} and given back on {@link #stop()}.
 *
 * <p>Threads: Connect calls {@link #start}, {@link #poll}, {@link #commit} and {@link #stop} on the
 * task's thread, {@link #commitRecord} on the producer's thread (without exactly-once support) or
 * the task's; the relay runs its own threads ({@code outbox-relay-<relayId>}, its store threads and
 * its renewal thread).
 */
public final class OutboxSourceTask extends SourceTask {

    private static final Logger LOG = LoggerFactory.getLogger(OutboxSourceTask.class);
    /** The longest a {@link #poll()} waits for a batch, so that a stopping task is never held up. */
    private static final Duration POLL_WAIT = Duration.ofMillis(500);

    private CloseableOutboxStore store;
    private ConnectPublisher publisher;
    private OutboxRelay relay;
    private AutoCloseable notifications;

    /** Creates the task; Connect calls {@link #start}. */
    public OutboxSourceTask() {
    }

    @Override
    public String version() {
        return OutboxSourceConnector.VERSION;
    }

    /**
     * Opens the store, starts the relay under this task's relay id and, if configured, the
     * notification transport.
     *
     * @param props the task's configuration from {@link OutboxSourceConnector#taskConfigs}
     * @throws ConnectException if the configuration is invalid or the store cannot be opened
     */
    @Override
    public void start(Map<String, String> props) {
        OutboxConnectorConfig config;
        try {
            config = OutboxConnectorConfig.parse(props);
        } catch (ConfigException e) {
            throw new ConnectException(e.getMessage(), e);
        }
        int task = OutboxSourceConnector.taskIndex(props);
        byte[] random = new byte[4];
        ThreadLocalRandom.current().nextBytes(random);
        String relayId = OutboxConnectorConfig.relayId(props.getOrDefault("name", ""), task,
                HexFormat.of().formatHex(random));
        RelayOptions options = config.relayOptions(relayId);
        TransactionContext transactions = context == null ? null : context.transactionContext();
        publisher = new ConnectPublisher(OutboxRecords.withMessageIdHeader(config.messageIdHeader()), transactions);
        store = OutboxStores.open(config.storeName(), config.storeSettings(), getClass().getClassLoader());
        try {
            relay = OutboxRelay.builder(store, publisher).options(options).build();
            relay.start();
            notifications = config.notifySettings().start(relay);
        } catch (RuntimeException e) {
            stop();
            throw new ConnectException("the outbox source task could not start: " + e.getMessage(), e);
        }
        LOG.info("outbox source task started relayId={} task={} range={} buckets={} transactions={}", relayId, task,
                OutboxSourceConnector.taskRange(props), options.bucketCount(),
                transactions == null ? "none" : "one per bucket batch");
    }

    /**
     * The next records: the batches the relay handed over since the last call, or null after a
     * short wait when there are none. With connector-defined transactions, one bucket batch per
     * call, and a call with no records after each, asking Connect to commit (or abort) its
     * transaction.
     *
     * @return records, or null
     * @throws ConnectException if the relay stopped on a misconfiguration (rule R6)
     * @throws InterruptedException if the task's thread is interrupted
     */
    @Override
    public List<SourceRecord> poll() throws InterruptedException {
        CompletableFuture<Void> termination = relay.termination();
        if (termination.isCompletedExceptionally()) {
            Throwable cause = termination.handle((ok, error) -> error).join();
            throw new ConnectException("the outbox relay of this task stopped: " + cause.getMessage(), cause);
        }
        return publisher.poll(POLL_WAIT);
    }

    /**
     * Connect's report on one record: written where {@code metadata} says, or not written when it
     * is null (never deleted then).
     *
     * @param record a record {@link #poll()} returned
     * @param metadata where Kafka wrote it, or null
     */
    @Override
    public void commitRecord(SourceRecord record, RecordMetadata metadata) {
        publisher.recordReported(record, metadata);
    }

    /** Connect committed; with connector-defined transactions this settles the committed batch. */
    @Override
    public void commit() {
        if (publisher != null) {
            publisher.committed();
        }
    }

    /**
     * Gives up the batches Connect has not reported, stops the relay (which gives its leases back,
     * capability C3) and closes the transport and the store. Idempotent.
     */
    @Override
    public void stop() {
        if (publisher != null) {
            publisher.stop();
        }
        closeQuietly(notifications, "notification transport");
        notifications = null;
        closeQuietly(relay, "relay");
        relay = null;
        closeQuietly(store, "store");
        store = null;
    }

    /**
     * The relay id this task leases its buckets under (X1), for tests.
     *
     * @return the id, or null when the task is not running
     */
    String relayId() {
        return relay == null ? null : relay.relayId();
    }

    private static void closeQuietly(AutoCloseable resource, String what) {
        if (resource == null) {
            return;
        }
        try {
            resource.close();
        } catch (Exception e) {
            LOG.warn("closing the {} failed: {}", what, e.toString());
        }
    }
}
