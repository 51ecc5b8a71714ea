package io.outbox.demo;

import io.outbox.relay.internal.Redactor;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The resources of one run: the Kafka cluster (or embedded broker), the run's database and the
 * topics it creates. Closing it drops the run's tables and deletes its topics, unless
 * {@code --keep} asked to keep them, then closes the database and the cluster.
 *
 * <p>While open, a JVM shutdown hook stands by for an interruption (Ctrl-C, SIGTERM): it
 * interrupts the thread that opened the scope, gives it {@link #GRACE} to unwind (stopping its
 * writers, relays and consumer, then closing this scope), closes the scope itself if that did not
 * happen, and prints one line saying what it cleaned up. The clean-up runs exactly once, whichever
 * of the two paths gets there first; the other waits for it.
 */
final class RunScope implements AutoCloseable {

    /** How long the shutdown hook waits for the interrupted run to close this scope itself. */
    static final Duration GRACE = Duration.ofSeconds(15);

    private final DemoKafka kafka;
    private final DemoDatabase database;
    private final boolean keep;
    private final PrintWriter log;
    private final Redactor redactor;
    private final List<String> topics = new ArrayList<>();
    private final Thread owner;
    private final Thread hook;
    private final Object state = new Object();
    private boolean closeStarted; // guarded by state
    private final CountDownLatch closeDone = new CountDownLatch(1);
    private volatile String outcome = "";
    private volatile boolean interrupted;

    RunScope(DemoKafka kafka, DemoDatabase database, boolean keep, Redactor redactor, PrintWriter log) {
        this.kafka = kafka;
        this.database = database;
        this.keep = keep;
        this.redactor = redactor;
        this.log = log;
        this.owner = Thread.currentThread();
        this.hook = new Thread(this::onShutdown, "demo-cleanup");
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /**
     * Opens the run's database (first: a wrong address or password fails fast), then connects to
     * Kafka or starts the embedded broker.
     *
     * @param connections how many writers use the database at once
     */
    static RunScope open(StoreKind store, StoreOptions storeOptions, KafkaOptions kafkaOptions, String runId,
                         int connections, PrintWriter log) {
        DemoDatabase database = storeOptions.open(store, runId, connections);
        try {
            return new RunScope(DemoKafka.connect(kafkaOptions.bootstrapServers, log), database, storeOptions.keep,
                    storeOptions.redactor(), log);
        } catch (RuntimeException | Error e) {
            database.close();
            throw e;
        }
    }

    DemoKafka kafka() {
        return kafka;
    }

    DemoDatabase database() {
        return database;
    }

    /**
     * Creates a topic of the run, or uses it if it exists.
     *
     * @return its partition count
     */
    int createTopic(String topic, int partitions) throws InterruptedException {
        synchronized (topics) {
            topics.add(topic);
        }
        return kafka.createTopic(topic, partitions);
    }

    /**
     * What the JVM shutdown hook runs: interrupts the run, lets it close this scope, else closes
     * it, and says what was cleaned up. Does nothing when the scope was closed already.
     */
    void onShutdown() {
        synchronized (state) {
            if (closeStarted && closeDone.getCount() == 0) {
                return; // the run ended normally; its hook was about to be removed
            }
            interrupted = true;
            if (!closeStarted && owner != Thread.currentThread()) {
                owner.interrupt();
            }
        }
        try {
            if (owner != Thread.currentThread() && owner.isAlive()) {
                closeDone.await(GRACE.toMillis(), TimeUnit.MILLISECONDS);
            }
            close();
            boolean done = closeDone.await(GRACE.toMillis(), TimeUnit.MILLISECONDS);
            log.println("interrupted; " + (done ? outcome : "the clean-up did not finish within "
                    + DurationConverter.format(GRACE) + "; the run's tables and topics may remain"));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            log.println("interrupted; the clean-up was interrupted too; the run's tables and topics may remain");
        }
        log.flush();
    }

    /**
     * Drops the run's tables and deletes its topics (unless kept), then closes the database and
     * the cluster; once: a second call, also from another thread, waits for the first.
     */
    @Override
    public void close() {
        boolean first;
        synchronized (state) {
            first = !closeStarted;
            closeStarted = true;
        }
        if (!first) {
            awaitClosed();
            return;
        }
        boolean wasInterrupted = Thread.interrupted(); // an interruption must not cut the clean-up short
        try {
            outcome = cleanUp(interrupted); // the hook says what it did
        } finally {
            closeDone.countDown();
            if (Thread.currentThread() != hook) {
                try {
                    Runtime.getRuntime().removeShutdownHook(hook);
                } catch (IllegalStateException shutdownInProgress) {
                    // the hook is running or about to; it finds the scope closed
                }
            }
            if (wasInterrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Drops or keeps, closes, and says what it did. */
    private String cleanUp(boolean quiet) {
        List<String> topicNames;
        synchronized (topics) {
            topicNames = List.copyOf(topics);
        }
        List<String> done = new ArrayList<>();
        try {
            if (keep) {
                String kept = "kept (--keep): " + (topicNames.isEmpty() || kafka.embedded() ? "" : "topic(s) "
                        + String.join(", ", topicNames) + "; ") + String.join(", ", database.objectNames())
                        + (topicNames.isEmpty() || !kafka.embedded() ? "" : "; the topic(s) "
                        + String.join(", ", topicNames) + " end with the embedded broker");
                if (!quiet) {
                    log.println(kept);
                }
                done.add(kept);
            } else {
                try {
                    database.dropSchema();
                    done.add("dropped " + String.join(", ", database.objectNames()));
                } catch (Exception e) {
                    log.println("warning: could not drop the run's tables " + database.objectNames() + ": "
                            + redactor.redact(String.valueOf(e)));
                }
                List<String> deleted = kafka.deleteCreatedTopics(log);
                if (!deleted.isEmpty()) {
                    done.add("deleted topic(s) " + String.join(", ", deleted));
                }
            }
        } finally {
            try {
                database.close();
            } finally {
                kafka.close();
            }
        }
        if (kafka.embedded()) {
            done.add("stopped the embedded broker, its topics with it");
        }
        return keep ? String.join("; ", done) : "cleaned up: " + (done.isEmpty() ? "nothing" : String.join("; ", done));
    }

    /**
     * Whether the JVM is shutting down (a shutdown hook can no longer be added then): an error of
     * the run now is the interruption's doing, not the run's.
     */
    static boolean shuttingDown() {
        Thread probe = new Thread(() -> { });
        try {
            Runtime.getRuntime().addShutdownHook(probe);
        } catch (IllegalStateException e) {
            return true;
        }
        Runtime.getRuntime().removeShutdownHook(probe);
        return false;
    }

    private void awaitClosed() {
        try {
            closeDone.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
