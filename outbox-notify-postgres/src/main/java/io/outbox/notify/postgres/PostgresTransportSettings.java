package io.outbox.notify.postgres;

import io.outbox.spi.OutboxMisconfigurationException;
import java.sql.DriverPropertyInfo;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.common.config.ConfigDef;
import org.postgresql.Driver;

/**
 * Settings of the PostgreSQL transport. Immutable; build with {@link #builder(String)} or
 * {@link #fromMap(Map)}.
 *
 * @param url the JDBC URL of the PostgreSQL database the listening connection opens
 *     ({@code jdbc:postgresql://host:port/db}); the one the outbox tables live in
 * @param user the user, or null for the URL's or the driver's default
 * @param password the password, or null
 * @param channel the LISTEN/NOTIFY channel, one per outbox and environment: 1 to 63 characters of
 *     {@code [A-Za-z0-9_]}, not starting with a digit
 * @param reconnectBackoff the first pause before reconnecting the listening connection; it
 *     doubles per failure in a row
 * @param reconnectMaxBackoff the longest pause before reconnecting
 * @param livenessTimeout the bound on noticing a dead listening connection (rule N6): a
 *     {@code SELECT 1} goes every third of it, and may take the rest
 */
public record PostgresTransportSettings(String url, String user, String password, String channel,
                                        Duration reconnectBackoff, Duration reconnectMaxBackoff,
                                        Duration livenessTimeout) {

    /** Setting: the JDBC URL. */
    public static final String URL = "url";
    /** Setting: the user. */
    public static final String USER = "user";
    /** Setting: the password. */
    public static final String PASSWORD = "password";
    /** Setting: the channel. */
    public static final String CHANNEL = "channel";
    /** Setting: the first reconnect pause in milliseconds. */
    public static final String RECONNECT_BACKOFF_MS = "reconnect.backoff.ms";
    /** Setting: the longest reconnect pause in milliseconds. */
    public static final String RECONNECT_MAX_BACKOFF_MS = "reconnect.max.backoff.ms";
    /** Setting: the liveness timeout in milliseconds (N6). */
    public static final String LIVENESS_TIMEOUT_MS = "liveness.timeout.ms";

    /** Default channel. */
    public static final String DEFAULT_CHANNEL = "outbox_notifications";
    /** Default liveness timeout: a dead listening connection is noticed within 15 s (N6). */
    public static final Duration DEFAULT_LIVENESS_TIMEOUT = Duration.ofSeconds(15);

    /** Default first reconnect pause: 100 ms. */
    public static final Duration DEFAULT_RECONNECT_BACKOFF = Duration.ofMillis(100);
    /** Default longest reconnect pause: 5 s. */
    public static final Duration DEFAULT_RECONNECT_MAX_BACKOFF = Duration.ofSeconds(5);

    private static final Set<String> KEYS = Set.copyOf(configDef().names());

    /**
     * Checks the values.
     *
     * @param url the JDBC URL, {@code jdbc:postgresql:} that the driver can parse
     * @param user the user or null
     * @param password the password or null
     * @param channel the channel
     * @param reconnectBackoff the first reconnect pause, 10 ms to 60 s
     * @param reconnectMaxBackoff the longest reconnect pause, at least the first, at most 300 s
     * @param livenessTimeout the liveness timeout, 500 ms to 300 s
     * @throws OutboxMisconfigurationException naming a bad value
     */
    public PostgresTransportSettings {
        Objects.requireNonNull(channel, "channel must not be null");
        Objects.requireNonNull(reconnectBackoff, "reconnectBackoff must not be null");
        Objects.requireNonNull(reconnectMaxBackoff, "reconnectMaxBackoff must not be null");
        Objects.requireNonNull(livenessTimeout, "livenessTimeout must not be null");
        if (url == null || !url.startsWith("jdbc:postgresql:")) {
            throw new OutboxMisconfigurationException("notification setting " + URL + " must be a PostgreSQL JDBC URL "
                    + "(jdbc:postgresql://host:port/database), was " + (url == null ? "not set"
                    : "another kind of URL (value hidden)"));
        }
        if (Driver.parseURL(url, null) == null) {
            // A URL the driver can never parse would be retried as if the database were down. Neither
            // the URL nor the driver's message, which can quote it (a password, say), is shown.
            throw new OutboxMisconfigurationException("notification setting " + URL + " is a PostgreSQL JDBC URL the "
                    + "driver cannot parse (value hidden; check host, a numeric port and database, and give "
                    + "credentials in " + USER + " and " + PASSWORD + ", not before the host)");
        }
        requireDriverChoices(url);
        if (!channel.matches("[A-Za-z_][A-Za-z0-9_]{0,62}")) {
            throw new OutboxMisconfigurationException("notification setting " + CHANNEL + "='" + channel
                    + "' must be 1 to 63 characters of [A-Za-z0-9_], not starting with a digit");
        }
        if (reconnectBackoff.toMillis() < 10 || reconnectBackoff.toMillis() > 60_000) {
            throw new OutboxMisconfigurationException("notification setting " + RECONNECT_BACKOFF_MS + "="
                    + reconnectBackoff.toMillis() + " must be in [10, 60000]");
        }
        if (reconnectMaxBackoff.compareTo(reconnectBackoff) < 0 || reconnectMaxBackoff.toMillis() > 300_000) {
            throw new OutboxMisconfigurationException("notification setting " + RECONNECT_MAX_BACKOFF_MS + "="
                    + reconnectMaxBackoff.toMillis() + " must be in [" + RECONNECT_BACKOFF_MS + " ("
                    + reconnectBackoff.toMillis() + "), 300000]");
        }
        if (livenessTimeout.toMillis() < 500 || livenessTimeout.toMillis() > 300_000) {
            throw new OutboxMisconfigurationException("notification setting " + LIVENESS_TIMEOUT_MS + "="
                    + livenessTimeout.toMillis() + " must be in [500, 300000]");
        }
    }

    /**
     * A builder with the defaults: channel {@value #DEFAULT_CHANNEL}, reconnect after 100 ms
     * doubling up to 5 s, liveness timeout 15 s.
     *
     * @param url the JDBC URL
     * @return a new builder
     */
    public static Builder builder(String url) {
        return new Builder(url);
    }

    /**
     * Refuses a URL property whose value is not one the driver lists for it ({@code sslmode=bogus}):
     * pgjdbc refuses it on every connection attempt, so the listener would retry for ever.
     */
    private static void requireDriverChoices(String url) {
        DriverPropertyInfo[] properties;
        try {
            properties = new Driver().getPropertyInfo(url, new Properties());
        } catch (RuntimeException e) {
            return; // parseURL above decided already
        }
        for (DriverPropertyInfo property : properties) {
            if (property.value != null && property.choices != null && property.choices.length > 0
                    && !Arrays.stream(property.choices).allMatch(c -> c.matches("[0-9.]+"))
                    && Arrays.stream(property.choices).noneMatch(property.value::equalsIgnoreCase)) {
                throw new OutboxMisconfigurationException("notification setting " + URL + ": the PostgreSQL driver "
                        + "accepts only " + String.join(", ", property.choices) + " for its property '"
                        + property.name + "' (value hidden)");
            }
        }
    }

    /**
     * Settings from string values; missing ones keep their default.
     *
     * @param values by the keys {@value #URL} (required), {@value #USER}, {@value #PASSWORD},
     *     {@value #CHANNEL}, {@value #RECONNECT_BACKOFF_MS}, {@value #RECONNECT_MAX_BACKOFF_MS},
     *     {@value #LIVENESS_TIMEOUT_MS}
     * @return the settings
     * @throws OutboxMisconfigurationException naming an unknown key or a bad value
     */
    public static PostgresTransportSettings fromMap(Map<String, String> values) {
        Set<String> unknown = new TreeSet<>(values.keySet());
        unknown.removeAll(KEYS);
        if (!unknown.isEmpty()) {
            throw new OutboxMisconfigurationException("unknown PostgreSQL notification setting(s) " + unknown
                    + "; known: " + new TreeSet<>(KEYS));
        }
        Builder b = builder(values.get(URL) == null ? null : values.get(URL).trim());
        b.user = values.get(USER);
        b.password = values.get(PASSWORD);
        if (values.containsKey(CHANNEL)) {
            b.channel(values.get(CHANNEL).trim());
        }
        if (values.containsKey(RECONNECT_BACKOFF_MS)) {
            b.reconnectBackoff = Duration.ofMillis(millis(RECONNECT_BACKOFF_MS, values.get(RECONNECT_BACKOFF_MS)));
        }
        if (values.containsKey(RECONNECT_MAX_BACKOFF_MS)) {
            b.reconnectMaxBackoff = Duration.ofMillis(millis(RECONNECT_MAX_BACKOFF_MS,
                    values.get(RECONNECT_MAX_BACKOFF_MS)));
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

    @Override
    public String toString() {
        return "PostgresTransportSettings[url=" + url + ", user=" + user + ", password="
                + (password == null ? "none" : "***") + ", channel=" + channel + ", livenessTimeout=" + livenessTimeout
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
                .define(URL, ConfigDef.Type.STRING, ConfigDef.NO_DEFAULT_VALUE, ConfigDef.Importance.HIGH,
                        "JDBC URL of the PostgreSQL database, jdbc:postgresql://host:port/db, for the listening "
                                + "connection (and, for writers that are not JDBC, the publishing one). The standalone "
                                + "relay takes the store's store.url when it is jdbc:postgresql:.")
                .define(USER, ConfigDef.Type.STRING, null, ConfigDef.Importance.HIGH,
                        "Database user; unset for the driver's (the standalone relay's: the store's).")
                .define(PASSWORD, ConfigDef.Type.PASSWORD, null, ConfigDef.Importance.HIGH,
                        "Database password (the standalone relay's: the store's); never logged.")
                .define(CHANNEL, ConfigDef.Type.STRING, DEFAULT_CHANNEL, ConfigDef.Importance.MEDIUM,
                        "LISTEN/NOTIFY channel, 1 to 63 characters of [A-Za-z0-9_], not starting with a digit: one "
                                + "per outbox and environment.")
                .define(RECONNECT_BACKOFF_MS, ConfigDef.Type.LONG, DEFAULT_RECONNECT_BACKOFF.toMillis(),
                        ConfigDef.Importance.LOW, "First pause before reconnecting the listener in ms, [10, 60000]; "
                                + "doubled per failure in a row.")
                .define(RECONNECT_MAX_BACKOFF_MS, ConfigDef.Type.LONG, DEFAULT_RECONNECT_MAX_BACKOFF.toMillis(),
                        ConfigDef.Importance.LOW, "Longest pause before reconnecting in ms, from "
                                + RECONNECT_BACKOFF_MS + " to 300000.")
                .define(LIVENESS_TIMEOUT_MS, ConfigDef.Type.LONG, DEFAULT_LIVENESS_TIMEOUT.toMillis(),
                        ConfigDef.Importance.LOW, "A dead listening connection is noticed within this (N6: a "
                                + "SELECT 1 every third of it), then reconnected; in ms, [500, 300000]. Also the "
                                + "driver's socketTimeout (rounded up to whole seconds) unless the URL sets one.");
    }

    /** Builds {@link PostgresTransportSettings}. Not thread-safe. */
    public static final class Builder {

        private final String url;
        private String user;
        private String password;
        private String channel = DEFAULT_CHANNEL;
        private Duration reconnectBackoff = DEFAULT_RECONNECT_BACKOFF;
        private Duration reconnectMaxBackoff = DEFAULT_RECONNECT_MAX_BACKOFF;
        private Duration livenessTimeout = DEFAULT_LIVENESS_TIMEOUT;

        private Builder(String url) {
            this.url = url;
        }

        /**
         * @param user the user, or null
         * @param password the password, or null
         * @return this builder
         */
        public Builder credentials(String user, String password) {
            this.user = user;
            this.password = password;
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
         * @param first the first reconnect pause
         * @param max the longest reconnect pause
         * @return this builder
         */
        public Builder reconnectBackoff(Duration first, Duration max) {
            this.reconnectBackoff = first;
            this.reconnectMaxBackoff = max;
            return this;
        }

        /**
         * @param timeout the bound on noticing a dead listening connection, 500 ms to 300 s (N6)
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
        public PostgresTransportSettings build() {
            return new PostgresTransportSettings(url, user, password, channel, reconnectBackoff, reconnectMaxBackoff,
                    livenessTimeout);
        }
    }
}
