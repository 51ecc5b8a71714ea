package io.outbox.notify.redis;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.RedisURI;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import io.lettuce.core.resource.NettyCustomizer;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.outbox.notify.HintPayload;
import io.outbox.notify.NotificationTransport;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bucket hints over Redis pub/sub, on Lettuce (rules N3-N6). Every process subscribes to the
 * outbox's channel with its own connection, so each receives every broadcast; hints are
 * {@link HintPayload} text, and the ones this instance sent come back to it and are dropped.
 *
 * <h2>Connections and outages (N4)</h2>
 * Two connections: one publishing, one subscribed. Lettuce reconnects both once they were up
 * (auto-reconnect, with this transport's delay: exponential from 100 ms up to
 * {@link RedisTransportSettings#reconnectMaxDelay()}) and subscribes the channel again; the
 * transport adds no reconnect loop of its own. Only the very first connection of each is
 * attempted here, again after each failure with the same capped backoff, because Lettuce retries
 * only connections that were established once. While Redis is down, publishes fail at once
 * (commands are rejected, not queued), so a writer's notifier drops those hints and counts them,
 * and relays find the messages by polling. The subscription logs one WARN when it goes down and
 * one INFO when it is back, and then tells the listener hints may have been missed.
 *
 * <h2>Dead connections (N6)</h2>
 * A connection that goes half-open (no FIN or RST ever arrives: a NAT or firewall that dropped the
 * flow, a frozen proxy) raises no event by itself, and a subscribed connection sends nothing. So
 * each connection gets a {@code PING} every third of
 * {@link RedisTransportSettings#livenessTimeout()}, and a Netty idle handler in its pipeline
 * closes it once nothing at all was read from it for the whole timeout; Lettuce's watchdog then
 * reconnects and subscribes again as after any other disconnect. A dead subscription is therefore
 * noticed within the liveness timeout. TCP keep-alive would not do: a frozen proxy's kernel still
 * acknowledges it, and the pings keep the connection from ever idling long enough for it.
 * {@link #state()} and the listener's {@link Listener#onStateChanged} report each loss and
 * recovery.
 *
 * <p>Thread-safe. Closing releases both connections, the client and its threads.
 */
public final class RedisNotificationTransport implements NotificationTransport {

    private static final Logger LOG = LoggerFactory.getLogger(RedisNotificationTransport.class);

    /** Redis has no payload limit worth the name; this keeps a message small on the wire. */
    static final int MAX_PAYLOAD_BYTES = 64 * 1024;

    private final RedisTransportSettings settings;
    private final String origin = UUID.randomUUID().toString().replace("-", "").substring(0, 16);
    private final ClientResources resources;
    private final RedisClient client;
    private final ScheduledExecutorService connector;
    private final Object lock = new Object();
    private final AtomicLong disconnects = new AtomicLong();
    private StatefulRedisConnection<String, String> publishing;
    private StatefulRedisPubSubConnection<String, String> subscribed;
    private Listener listener;
    private final StateKeeper states = new StateKeeper(RedisNotificationTransportProvider.NAME);
    /** When the idle handler last closed a silent connection, by {@link System#nanoTime()}. */
    private volatile long silentCloseNanos = System.nanoTime() - TimeUnit.DAYS.toNanos(1);
    private volatile boolean closed;

    /**
     * Creates the transport; it connects on first use.
     *
     * @param settings not null
     */
    public RedisNotificationTransport(RedisTransportSettings settings) {
        this.settings = Objects.requireNonNull(settings, "settings must not be null");
        this.resources = ClientResources.builder()
                .reconnectDelay(Delay.exponential(Duration.ofMillis(100), settings.reconnectMaxDelay(), 2,
                        TimeUnit.MILLISECONDS))
                .nettyCustomizer(new NettyCustomizer() {
                    @Override
                    public void afterChannelInitialized(Channel channel) {
                        channel.pipeline().addFirst(new CloseWhenSilent(settings.livenessTimeout()));
                    }
                })
                .build();
        this.client = RedisClient.create(resources, RedisURI.create(settings.uri()));
        client.setOptions(ClientOptions.builder()
                .autoReconnect(true)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .timeoutOptions(TimeoutOptions.enabled(settings.commandTimeout()))
                .build());
        this.connector = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "outbox-notify-redis-connect");
            t.setDaemon(true);
            return t;
        });
        long every = Math.max(1, settings.livenessTimeout().toMillis() / 3);
        resources.eventExecutorGroup().scheduleWithFixedDelay(this::ping, every, every, TimeUnit.MILLISECONDS);
    }

    /**
     * Closes a connection from which nothing was read for the liveness timeout (N6); the pings
     * keep a live one talking. Lettuce's watchdog reconnects what was closed. One per channel.
     */
    private final class CloseWhenSilent extends IdleStateHandler {

        private final long timeoutMillis;

        CloseWhenSilent(Duration timeout) {
            super(timeout.toMillis(), 0, 0, TimeUnit.MILLISECONDS);
            this.timeoutMillis = timeout.toMillis();
        }

        @Override
        protected void channelIdle(ChannelHandlerContext ctx, IdleStateEvent event) {
            if (event.state() == IdleState.READER_IDLE) {
                silentCloseNanos = System.nanoTime();
                LOG.debug("closing a Redis connection silent for liveness.timeout.ms={} channel={} remote={}",
                        timeoutMillis, settings.channel(), ctx.channel().remoteAddress());
                ctx.close();
            }
        }
    }

    /** A PING on each open connection; the answer only has to arrive (N6). Runs on a Lettuce thread. */
    private void ping() {
        StatefulRedisConnection<String, String> pub;
        StatefulRedisPubSubConnection<String, String> sub;
        synchronized (lock) {
            if (closed) {
                return;
            }
            pub = publishing;
            sub = subscribed;
        }
        try {
            if (sub != null && sub.isOpen()) {
                sub.async().ping();
            }
            if (pub != null && pub.isOpen()) {
                pub.async().ping();
            }
        } catch (RuntimeException e) {
            LOG.debug("a keep-alive PING failed channel={} error={}", settings.channel(), e.toString());
        }
    }

    @Override
    public String name() {
        return RedisNotificationTransportProvider.NAME;
    }

    /**
     * This instance's origin id, which its own messages carry.
     *
     * @return 16 hexadecimal characters
     */
    public String origin() {
        return origin;
    }

    /**
     * How often the subscription went down since the transport started.
     *
     * @return the count
     */
    public long disconnects() {
        return disconnects.get();
    }

    /**
     * Whether the subscription is up: subscribed and not disconnected since.
     *
     * @return true while hints can arrive; {@code state().connected()}
     */
    public boolean isListening() {
        return states.state().connected();
    }

    @Override
    public State state() {
        return states.state();
    }

    /**
     * Publishes on the channel; connects first if needed.
     *
     * @param buckets not null, not empty
     * @throws io.lettuce.core.RedisException if Redis is unreachable, the command is rejected
     *     while disconnected, or it timed out after {@link RedisTransportSettings#commandTimeout()}
     */
    @Override
    public void publish(int[] buckets) {
        String payload = HintPayload.encode(origin, buckets, MAX_PAYLOAD_BYTES);
        publishingConnection().sync().publish(settings.channel(), payload);
    }

    private StatefulRedisConnection<String, String> publishingConnection() {
        synchronized (lock) {
            if (closed) {
                throw new IllegalStateException("the Redis notification transport is closed");
            }
            if (publishing == null) {
                publishing = client.connect();
            }
            return publishing;
        }
    }

    @Override
    public AutoCloseable listen(Listener hints) {
        Objects.requireNonNull(hints, "listener must not be null");
        synchronized (lock) {
            if (closed) {
                throw new IllegalStateException("the Redis notification transport is closed");
            }
            if (listener != null) {
                throw new IllegalStateException("the Redis notification transport has a listener already");
            }
            listener = hints;
        }
        connector.execute(() -> subscribe(1));
        return this::close;
    }

    /** The first subscription, retried with backoff; after it, Lettuce reconnects and resubscribes. */
    private void subscribe(int attempt) {
        if (closed) {
            return;
        }
        StatefulRedisPubSubConnection<String, String> connection;
        try {
            connection = client.connectPubSub();
        } catch (RuntimeException e) {
            long delay = Math.min(settings.reconnectMaxDelay().toMillis(), 100L << Math.min(attempt - 1, 16));
            if (attempt == 1) {
                LOG.warn("cannot subscribe to notifications yet; relays poll until it works channel={} uri={} "
                        + "retry.ms={} error={}", settings.channel(), settings.redactedUri(), delay, e.toString());
            } else {
                LOG.debug("subscribing to notifications failed again channel={} attempt={} retry.ms={} error={}",
                        settings.channel(), attempt, delay, e.toString());
            }
            connector.schedule(() -> subscribe(attempt + 1), delay, TimeUnit.MILLISECONDS);
            return;
        }
        Listener hints = listener;
        AtomicBoolean down = new AtomicBoolean(attempt > 1);
        connection.addListener(new RedisPubSubAdapter<>() {
            @Override
            public void message(String channel, String message) {
                HintPayload.Decoded decoded = HintPayload.decode(message);
                if (decoded == null) {
                    LOG.debug("ignored a message that is no hint channel={}", channel);
                } else if (!decoded.origin().equals(origin)) {
                    hints.onHints(decoded.buckets());
                }
            }

            @Override
            public void subscribed(String channel, long count) {
                states.change(true, closed ? null : hints);
                if (down.compareAndSet(true, false)) {
                    LOG.info("notification subscription is back channel={} uri={}", channel, settings.redactedUri());
                    hints.onReconnected();
                }
            }
        });
        connection.addListener(new RedisConnectionStateListener() {
            @Override
            public void onRedisDisconnected(RedisChannelHandler<?, ?> handler) {
                if (!closed && !down.getAndSet(true)) {
                    disconnects.incrementAndGet();
                    boolean silent = System.nanoTime() - silentCloseNanos < TimeUnit.SECONDS.toNanos(1);
                    LOG.warn("notification subscription lost; relays poll until Redis is back channel={} uri={} "
                            + "cause={}", settings.channel(), settings.redactedUri(), silent
                            ? "no answer for liveness.timeout.ms=" + settings.livenessTimeout().toMillis()
                            : "connection closed");
                }
                states.change(false, closed ? null : hints);
            }

            @Override
            public void onRedisConnected(RedisChannelHandler<?, ?> handler, SocketAddress address) {
                LOG.debug("notification connection up channel={} address={}", settings.channel(), address);
            }
        });
        try {
            connection.sync().subscribe(settings.channel());
        } catch (RuntimeException e) {
            connection.close();
            connector.schedule(() -> subscribe(attempt + 1), settings.reconnectMaxDelay().toMillis(),
                    TimeUnit.MILLISECONDS);
            return;
        }
        synchronized (lock) {
            if (closed) {
                connection.close();
                return;
            }
            subscribed = connection;
        }
        LOG.info("subscribed to notifications channel={} uri={} origin={}", settings.channel(),
                settings.redactedUri(), origin);
    }

    @Override
    public void close() {
        StatefulRedisConnection<String, String> pub;
        StatefulRedisPubSubConnection<String, String> sub;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            pub = publishing;
            sub = subscribed;
        }
        states.change(false, null);
        connector.shutdownNow();
        closeQuietly(sub);
        closeQuietly(pub);
        try {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            resources.shutdown(0, 2, TimeUnit.SECONDS);
        } catch (RuntimeException e) {
            LOG.debug("shutting the Redis client down failed", e);
        }
    }

    private static void closeQuietly(AutoCloseable closeable) {
        if (closeable == null) {
            return;
        }
        try {
            closeable.close();
        } catch (Exception e) {
            LOG.debug("closing a Redis connection failed", e);
        }
    }

    @Override
    public String toString() {
        return "RedisNotificationTransport[" + settings.redactedUri() + ", channel=" + settings.channel() + "]";
    }
}
