package io.outbox.notify.redis;

import io.lettuce.core.RedisURI;
import io.outbox.spi.OutboxMisconfigurationException;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.common.config.ConfigDef;

/**
 * Settings of the Redis transport. Immutable; build with {@link #builder()} or
 * {@link #fromMap(Map)}.
 *
 * @param uri the Redis URI (Lettuce syntax: {@code redis://[password@]host:port[/database]},
 *     {@code rediss://} for TLS)
 * @param channel the pub/sub channel: one per outbox (table or collection) and environment
 * @param commandTimeout how long a publish may take before it counts as failed
 * @param reconnectMaxDelay the longest pause between reconnect attempts (they start at 100 ms
 *     and double)
 * @param livenessTimeout how long a connection may stay silent before it counts as dead and is
 *     closed, so that Lettuce reconnects it (rule N6); a {@code PING} goes every third of it
 */
public record RedisTransportSettings(String uri, String channel, Duration commandTimeout, Duration reconnectMaxDelay,
                                     Duration livenessTimeout) {

    /** Setting: the Redis URI. */
    public static final String URI = "uri";
    /** Setting: the channel. */
    public static final String CHANNEL = "channel";
    /** Setting: the publish timeout in milliseconds. */
    public static final String COMMAND_TIMEOUT_MS = "command.timeout.ms";
    /** Setting: the longest reconnect delay in milliseconds. */
    public static final String RECONNECT_MAX_DELAY_MS = "reconnect.max.delay.ms";
    /** Setting: the liveness timeout in milliseconds (N6). */
    public static final String LIVENESS_TIMEOUT_MS = "liveness.timeout.ms";

    /** Default URI: a Redis on this host. */
    public static final String DEFAULT_URI = "redis://127.0.0.1:6379";
    /** Default channel. */
    public static final String DEFAULT_CHANNEL = "outbox-notifications";
    /** Default liveness timeout: a dead connection is noticed within 15 s (N6). */
    public static final Duration DEFAULT_LIVENESS_TIMEOUT = Duration.ofSeconds(15);

    /** Default publish timeout: 1 s. */
    public static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofSeconds(1);
    /** Default longest reconnect delay: 2 s. */
    public static final Duration DEFAULT_RECONNECT_MAX_DELAY = Duration.ofSeconds(2);

    private static final Set<String> KEYS = Set.copyOf(configDef().names());

    /**
     * Checks the values.
     *
     * @param uri the Redis URI
     * @param channel the channel
     * @param commandTimeout the publish timeout, 1 ms to 60 s
     * @param reconnectMaxDelay the longest reconnect delay, 100 ms to 300 s
     * @param livenessTimeout the liveness timeout, 500 ms to 300 s
     * @throws OutboxMisconfigurationException naming a bad value
     */
    public RedisTransportSettings {
        Objects.requireNonNull(uri, "uri must not be null");
        Objects.requireNonNull(channel, "channel must not be null");
        Objects.requireNonNull(commandTimeout, "commandTimeout must not be null");
        Objects.requireNonNull(reconnectMaxDelay, "reconnectMaxDelay must not be null");
        Objects.requireNonNull(livenessTimeout, "livenessTimeout must not be null");
        RedisURI parsed;
        try {
            parsed = RedisURI.create(uri);
        } catch (RuntimeException e) {
            throw new OutboxMisconfigurationException("notification setting " + URI + " is not a Redis URI "
                    + "(redis://host:port): " + e.getMessage(), e);
        }
        if (parsed.getSocket() == null && parsed.getSentinels().isEmpty() && !isHost(parsed.getHost())) {
            // Lettuce takes redis://h:notaport as the host "h:notaport" on port 6379: it can never connect.
            throw new OutboxMisconfigurationException("notification setting " + URI + " is not a Redis URI "
                    + "(redis://host:port): it names no host with a numeric port (value hidden)");
        }
        if (channel.isBlank() || channel.length() > 256) {
            throw new OutboxMisconfigurationException("notification setting " + CHANNEL + "='" + channel
                    + "' must be 1 to 256 characters, not blank");
        }
        if (commandTimeout.toMillis() < 1 || commandTimeout.toMillis() > 60_000) {
            throw new OutboxMisconfigurationException("notification setting " + COMMAND_TIMEOUT_MS + "="
                    + commandTimeout.toMillis() + " must be in [1, 60000]");
        }
        if (reconnectMaxDelay.toMillis() < 100 || reconnectMaxDelay.toMillis() > 300_000) {
            throw new OutboxMisconfigurationException("notification setting " + RECONNECT_MAX_DELAY_MS + "="
                    + reconnectMaxDelay.toMillis() + " must be in [100, 300000]");
        }
        if (livenessTimeout.toMillis() < 500 || livenessTimeout.toMillis() > 300_000) {
            throw new OutboxMisconfigurationException("notification setting " + LIVENESS_TIMEOUT_MS + "="
                    + livenessTimeout.toMillis() + " must be in [500, 300000]");
        }
    }

    /** Whether Lettuce's host is a name or an address: with a ':' only an IPv6 address. */
    private static boolean isHost(String host) {
        if (host == null || host.isEmpty()) {
            return false;
        }
        if (host.indexOf(':') < 0) {
            return true;
        }
        try {
            String literal = host.startsWith("[") && host.endsWith("]") ? host : "[" + host + "]";
            return new URI("redis://" + literal + "/").getHost() != null;
        } catch (URISyntaxException e) {
            return false;
        }
    }

    /**
     * A builder with the defaults: {@value #DEFAULT_URI}, channel {@value #DEFAULT_CHANNEL},
     * command timeout 1 s, reconnect delay at most 2 s, liveness timeout 15 s.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Settings from string values; missing ones keep their default.
     *
     * @param values by the keys {@value #URI}, {@value #CHANNEL}, {@value #COMMAND_TIMEOUT_MS},
     *     {@value #RECONNECT_MAX_DELAY_MS}, {@value #LIVENESS_TIMEOUT_MS}; not null
     * @return the settings
     * @throws OutboxMisconfigurationException naming an unknown key or a bad value
     */
    public static RedisTransportSettings fromMap(Map<String, String> values) {
        Set<String> unknown = new TreeSet<>(values.keySet());
        unknown.removeAll(KEYS);
        if (!unknown.isEmpty()) {
            throw new OutboxMisconfigurationException("unknown Redis notification setting(s) " + unknown
                    + "; known: " + new TreeSet<>(KEYS));
        }
        Builder b = builder();
        if (values.containsKey(URI)) {
            b.uri(values.get(URI).trim());
        }
        if (values.containsKey(CHANNEL)) {
            b.channel(values.get(CHANNEL).trim());
        }
        if (values.containsKey(COMMAND_TIMEOUT_MS)) {
            b.commandTimeout(Duration.ofMillis(millis(COMMAND_TIMEOUT_MS, values.get(COMMAND_TIMEOUT_MS))));
        }
        if (values.containsKey(RECONNECT_MAX_DELAY_MS)) {
            b.reconnectMaxDelay(Duration.ofMillis(millis(RECONNECT_MAX_DELAY_MS, values.get(RECONNECT_MAX_DELAY_MS))));
        }
        if (values.containsKey(LIVENESS_TIMEOUT_MS)) {
            b.livenessTimeout(Duration.ofMillis(millis(LIVENESS_TIMEOUT_MS, values.get(LIVENESS_TIMEOUT_MS))));
        }
        return b.build();
    }

    private static long millis(String key, String value) {
        try {
            return Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            throw new OutboxMisconfigurationException("notification setting " + key + "='" + value
                    + "' is not a whole number of milliseconds", e);
        }
    }

    /**
     * The URI without its password, for logs.
     *
     * @return the URI with any password replaced by {@code ***}
     */
    public String redactedUri() {
        return uri.replaceAll("(?<=//)[^@/]*@", "***@");
    }

    @Override
    public String toString() {
        return "RedisTransportSettings[uri=" + redactedUri() + ", channel=" + channel + ", commandTimeout="
                + commandTimeout + ", reconnectMaxDelay=" + reconnectMaxDelay + ", livenessTimeout=" + livenessTimeout
                + "]";
    }

    /**
     * The settings as definitions (key, type, default, meaning with its range), for help texts and
     * the reference page; {@link #fromMap(Map)} accepts exactly these keys.
     *
     * @return a new definition
     */
    static ConfigDef configDef() {
        return new ConfigDef()
                .define(URI, ConfigDef.Type.STRING, DEFAULT_URI, ConfigDef.Importance.HIGH,
                        "Redis URI, redis://[password@]host:port[/db] (rediss:// for TLS); the password never "
                                + "appears in logs.")
                .define(CHANNEL, ConfigDef.Type.STRING, DEFAULT_CHANNEL, ConfigDef.Importance.MEDIUM,
                        "The pub/sub channel, 1 to 256 characters: one per outbox (table prefix) and environment.")
                .define(COMMAND_TIMEOUT_MS, ConfigDef.Type.LONG, DEFAULT_COMMAND_TIMEOUT.toMillis(),
                        ConfigDef.Importance.LOW, "Publish timeout in ms, [1, 60000]: a publish that takes longer "
                                + "counts as failed and is dropped.")
                .define(RECONNECT_MAX_DELAY_MS, ConfigDef.Type.LONG, DEFAULT_RECONNECT_MAX_DELAY.toMillis(),
                        ConfigDef.Importance.LOW, "Longest pause between reconnect attempts in ms, [100, 300000]: "
                                + "Lettuce's delay starts at 100 ms and doubles up to this.")
                .define(LIVENESS_TIMEOUT_MS, ConfigDef.Type.LONG, DEFAULT_LIVENESS_TIMEOUT.toMillis(),
                        ConfigDef.Importance.LOW, "A connection silent this long (a PING goes every third of it) "
                                + "is dead (N6): closed and reconnected; in ms, [500, 300000].");
    }

    /** Builds {@link RedisTransportSettings}. Not thread-safe. */
    public static final class Builder {

        private String uri = DEFAULT_URI;
        private String channel = DEFAULT_CHANNEL;
        private Duration commandTimeout = DEFAULT_COMMAND_TIMEOUT;
        private Duration reconnectMaxDelay = DEFAULT_RECONNECT_MAX_DELAY;
        private Duration livenessTimeout = DEFAULT_LIVENESS_TIMEOUT;

        private Builder() {
        }

        /**
         * @param uri the Redis URI; not null
         * @return this builder
         */
        public Builder uri(String uri) {
            this.uri = uri;
            return this;
        }

        /**
         * @param channel the channel; not null
         * @return this builder
         */
        public Builder channel(String channel) {
            this.channel = channel;
            return this;
        }

        /**
         * @param timeout the publish timeout, 1 ms to 60 s
         * @return this builder
         */
        public Builder commandTimeout(Duration timeout) {
            this.commandTimeout = timeout;
            return this;
        }

        /**
         * @param delay the longest reconnect delay, 100 ms to 300 s
         * @return this builder
         */
        public Builder reconnectMaxDelay(Duration delay) {
            this.reconnectMaxDelay = delay;
            return this;
        }

        /**
         * @param timeout how long a connection may stay silent before it is closed and Lettuce
         *     reconnects it, 500 ms to 300 s (N6)
         * @return this builder
         */
        public Builder livenessTimeout(Duration timeout) {
            this.livenessTimeout = timeout;
            return this;
        }

        /**
         * @return the settings
         * @throws OutboxMisconfigurationException naming a bad value
         */
        public RedisTransportSettings build() {
            return new RedisTransportSettings(uri, channel, commandTimeout, reconnectMaxDelay, livenessTimeout);
        }
    }
}
