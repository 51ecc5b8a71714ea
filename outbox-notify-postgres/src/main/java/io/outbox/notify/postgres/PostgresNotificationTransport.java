package io.outbox.notify.postgres;

import io.outbox.notify.HintPayload;
import io.outbox.notify.NotificationTransport;
import java.net.SocketTimeoutException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Objects;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bucket hints over PostgreSQL LISTEN/NOTIFY (rules N3-N6).
 *
 * <h2>Sending</h2>
 * A JDBC writer's hints travel inside its own transaction:
 * {@link #publishInTransaction(Connection, int[])} runs {@code SELECT pg_notify(channel, payload)}
 * on the writer's connection before it commits, and PostgreSQL delivers the notification exactly
 * when the transaction commits, never when it rolls back. Other writers (a MongoDB or DynamoDB
 * application that still uses PostgreSQL for hints) go through {@link #publish(int[])} on one
 * connection of the transport's own, in auto-commit mode. Payloads are {@link HintPayload} text of
 * at most {@value #MAX_PAYLOAD_BYTES} bytes (PostgreSQL refuses 8,000 or more); a longer bucket
 * list is sent as the unknown bucket.
 *
 * <h2>Listening</h2>
 * One dedicated connection per transport, on thread {@code outbox-notify-postgres-listen}, runs
 * {@code LISTEN} and then waits in {@link PGConnection#getNotifications(int)}, a blocking wait that
 * sends nothing to the server. That wait alone would never notice a half-open connection (no FIN
 * or RST arrives: a NAT or firewall that dropped the flow, a frozen proxy), so between waits the
 * connection makes a round trip, {@code SELECT 1}, every third of
 * {@link PostgresTransportSettings#livenessTimeout()}, with the rest of the timeout as its network
 * timeout: a dead connection fails within the liveness timeout (N6). Connections of the transport
 * also get the driver's {@code tcpKeepAlive} and a {@code socketTimeout} of the liveness timeout
 * (for the login and a publish), unless the URL sets them. When the connection breaks (a restart,
 * {@code pg_terminate_backend}, a network failure, no answer to the round trip) it logs one WARN,
 * reconnects with a backoff that starts at
 * {@link PostgresTransportSettings#reconnectBackoff()} and doubles up to
 * {@link PostgresTransportSettings#reconnectMaxBackoff()}, listens again and tells the listener
 * that hints may have been missed (N4); {@link #state()} and the listener's
 * {@link Listener#onStateChanged} report each loss and recovery. Notifications this instance sent
 * carry its origin id and are dropped.
 *
 * <p>Thread-safe.
 */
public final class PostgresNotificationTransport implements NotificationTransport {

    private static final Logger LOG = LoggerFactory.getLogger(PostgresNotificationTransport.class);

    /** The largest payload sent, in bytes: PostgreSQL's limit is below 8,000. */
    public static final int MAX_PAYLOAD_BYTES = 7_999;

    private static final Executor DIRECT = Runnable::run;

    private final PostgresTransportSettings settings;
    private final String origin = UUID.randomUUID().toString().replace("-", "").substring(0, 16);
    private final String notifySql = "SELECT pg_notify(?, ?)";
    private final Object lock = new Object();
    private final AtomicLong reconnects = new AtomicLong();
    private Connection publishing;
    private Connection listening;
    private Thread listener;
    private final StateKeeper states = new StateKeeper(PostgresNotificationTransportProvider.NAME);
    private volatile boolean closed;

    /**
     * Creates the transport; it connects on first use.
     *
     * @param settings not null
     */
    public PostgresNotificationTransport(PostgresTransportSettings settings) {
        this.settings = Objects.requireNonNull(settings, "settings must not be null");
    }

    @Override
    public String name() {
        return PostgresNotificationTransportProvider.NAME;
    }

    /**
     * This instance's origin id, which its own notifications carry.
     *
     * @return 16 hexadecimal characters
     */
    public String origin() {
        return origin;
    }

    /**
     * How often the listening connection was opened again after it broke.
     *
     * @return the count
     */
    public long reconnects() {
        return reconnects.get();
    }

    @Override
    public State state() {
        return states.state();
    }

    /**
     * Issues {@code pg_notify} inside the writer's transaction, if the connection is PostgreSQL's.
     *
     * @param connection the writer's connection, in its transaction; not null
     * @param buckets not null, not empty
     * @return true on a PostgreSQL connection (the commit delivers the hints); false on another
     *     database, whose writer then goes through {@link #publish(int[])}
     * @throws SQLException if the statement failed
     */
    @Override
    public boolean publishInTransaction(Connection connection, int[] buckets) throws SQLException {
        if (!"PostgreSQL".equals(connection.getMetaData().getDatabaseProductName())) {
            return false;
        }
        notify(connection, buckets);
        return true;
    }

    @Override
    public void publish(int[] buckets) throws SQLException {
        synchronized (lock) {
            if (closed) {
                throw new IllegalStateException("the PostgreSQL notification transport is closed");
            }
            try {
                if (publishing == null || publishing.isClosed()) {
                    publishing = connect();
                }
                notify(publishing, buckets);
            } catch (SQLException e) {
                closeQuietly(publishing);
                publishing = null;
                throw e;
            }
        }
    }

    private void notify(Connection connection, int[] buckets) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(notifySql)) {
            statement.setString(1, settings.channel());
            statement.setString(2, HintPayload.encode(origin, buckets, MAX_PAYLOAD_BYTES));
            statement.execute();
        }
    }

    private Connection connect() throws SQLException {
        Properties properties = new Properties();
        if (settings.user() != null) {
            properties.setProperty("user", settings.user());
        }
        if (settings.password() != null) {
            properties.setProperty("password", settings.password());
        }
        properties.setProperty("ApplicationName", "outbox-notify-" + origin);
        // Defaults the URL may override (its parameters win): a login or publish over a dead path fails
        // after the liveness timeout instead of waiting for ever (N6). Whole seconds, as the driver takes them.
        properties.setProperty("socketTimeout", String.valueOf((settings.livenessTimeout().toMillis() + 999) / 1000));
        properties.setProperty("tcpKeepAlive", "true");
        return DriverManager.getConnection(settings.url(), properties);
    }

    @Override
    public AutoCloseable listen(Listener hints) {
        Objects.requireNonNull(hints, "listener must not be null");
        synchronized (lock) {
            if (closed) {
                throw new IllegalStateException("the PostgreSQL notification transport is closed");
            }
            if (listener != null) {
                throw new IllegalStateException("the PostgreSQL notification transport has a listener already");
            }
            listener = new Thread(() -> listenLoop(hints), "outbox-notify-postgres-listen");
            listener.setDaemon(true);
            listener.start();
        }
        return this::close;
    }

    private void listenLoop(Listener hints) {
        int failures = 0;
        boolean everUp = false;
        boolean warned = false;
        while (!closed) {
            Connection connection = null;
            try {
                connection = connect();
                try (Statement statement = connection.createStatement()) {
                    statement.execute("LISTEN \"" + settings.channel() + "\"");
                }
                synchronized (lock) {
                    if (closed) {
                        closeQuietly(connection);
                        return;
                    }
                    listening = connection;
                }
                states.change(true, closed ? null : hints);
                if (everUp) {
                    reconnects.incrementAndGet();
                    LOG.info("notification listener is back channel={} after.failures={}", settings.channel(), failures);
                    hints.onReconnected();
                } else {
                    LOG.info("listening for notifications channel={} url={} origin={}", settings.channel(),
                            settings.url(), origin);
                }
                everUp = true;
                failures = 0;
                warned = false;
                waitForNotifications(connection, hints);
            } catch (SQLException | RuntimeException e) {
                if (closed) {
                    break;
                }
                failures++;
                states.change(false, hints);
                long delay = Math.min(settings.reconnectMaxBackoff().toMillis(),
                        settings.reconnectBackoff().toMillis() << Math.min(failures - 1, 20));
                if (!warned) {
                    warned = true;
                    LOG.warn("notification listener connection {}; relays poll until it is back channel={} "
                            + "retry.ms={} error={}", everUp ? "lost" : "cannot be opened yet", settings.channel(), delay,
                            failure(e));
                } else {
                    LOG.debug("notification listener reconnect failed channel={} failures={} retry.ms={} error={}",
                            settings.channel(), failures, delay, oneLine(e));
                }
                closeQuietly(connection);
                synchronized (lock) {
                    listening = null;
                }
                try {
                    Thread.sleep(delay);
                } catch (InterruptedException stop) {
                    break;
                }
            }
        }
        synchronized (lock) {
            listening = null;
        }
    }

    /**
     * Waits for notifications until closed, with a round trip every third of the liveness timeout
     * that may take the rest of it (N6); throws when the connection is broken or does not answer.
     */
    private void waitForNotifications(Connection connection, Listener hints) throws SQLException {
        long timeout = settings.livenessTimeout().toMillis();
        long every = Math.max(1, timeout / 3);
        connection.setNetworkTimeout(DIRECT, (int) (timeout - every));
        PGConnection pg = connection.unwrap(PGConnection.class);
        try (Statement probe = connection.createStatement()) {
            long nextProbe = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(every);
            while (!closed) {
                long wait = TimeUnit.NANOSECONDS.toMillis(nextProbe - System.nanoTime());
                PGNotification[] received = pg.getNotifications((int) Math.max(1, wait));
                if (received != null) {
                    for (PGNotification notification : received) {
                        HintPayload.Decoded decoded = HintPayload.decode(notification.getParameter());
                        if (decoded == null) {
                            LOG.debug("ignored a notification that is no hint channel={}", notification.getName());
                        } else if (!decoded.origin().equals(origin)) {
                            hints.onHints(decoded.buckets());
                        }
                    }
                }
                if (System.nanoTime() - nextProbe >= 0) {
                    probe.execute("SELECT 1");
                    nextProbe = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(every);
                }
            }
        }
    }

    /** The error in one line, saying so when the server did not answer in time (N6). */
    private String failure(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof SocketTimeoutException) {
                return "no answer within liveness.timeout.ms=" + settings.livenessTimeout().toMillis() + ": "
                        + oneLine(e);
            }
        }
        return oneLine(e);
    }

    private static String oneLine(Throwable e) {
        return String.valueOf(e).replaceAll("\\s*\\R\\s*", " ");
    }

    @Override
    public void close() {
        Connection pub;
        Connection sub;
        Thread thread;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            pub = publishing;
            sub = listening;
            thread = listener;
        }
        states.change(false, null);
        if (sub != null) {
            try {
                sub.abort(DIRECT); // ends the blocking wait at once
            } catch (SQLException | RuntimeException e) {
                LOG.debug("aborting the listening connection failed", e);
            }
        }
        closeQuietly(pub);
        if (thread != null) {
            thread.interrupt();
            try {
                thread.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static void closeQuietly(Connection connection) {
        if (connection == null) {
            return;
        }
        try {
            connection.close();
        } catch (SQLException | RuntimeException e) {
            LOG.debug("closing a PostgreSQL connection failed", e);
        }
    }

    @Override
    public String toString() {
        return "PostgresNotificationTransport[" + settings.url() + ", channel=" + settings.channel() + "]";
    }
}
