package io.outbox.notify.postgres;

import io.outbox.spi.OutboxMisconfigurationException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

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
 */
public record PostgresTransportSettings(String url, String user, String password, String channel,
                                        Duration reconnectBackoff, Duration reconnectMaxBackoff) {

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

    /** Default channel. */
    public static final String DEFAULT_CHANNEL = "outbox_notifications";

    static final Map<String, String> DOCUMENTATION = documentation();

    /**
     * Checks the values.
     *
     * @param url the JDBC URL, {@code jdbc:postgresql:} that the driver can parse
     * @param user the user or null
     * @param password the password or null
     * @param channel the channel
     * @param reconnectBackoff the first reconnect pause, 10 ms to 60 s
     * @param reconnectMaxBackoff the longest reconnect pause, at least the first, at most 300 s
     * @throws OutboxMisconfigurationException naming a bad value
     */
    public PostgresTransportSettings {
        Objects.requireNonNull(channel, "channel must not be null");
        Objects.requireNonNull(reconnectBackoff, "reconnectBackoff must not be null");
        Objects.requireNonNull(reconnectMaxBackoff, "reconnectMaxBackoff must not be null");
        if (url == null || !url.startsWith("jdbc:postgresql:")) {
            throw new OutboxMisconfigurationException("notification setting " + URL + " must be a PostgreSQL JDBC URL "
                    + "(jdbc:postgresql://host:port/database), was " + (url == null ? "not set"
                    : "another kind of URL (value hidden)"));
        }
        if (org.postgresql.Driver.parseURL(url, null) == null) {
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
    }

    /**
     * A builder with the defaults: channel {@value #DEFAULT_CHANNEL}, reconnect after 100 ms
     * doubling up to 5 s.
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
        java.sql.DriverPropertyInfo[] properties;
        try {
            properties = new org.postgresql.Driver().getPropertyInfo(url, new java.util.Properties());
        } catch (RuntimeException e) {
            return; // parseURL above decided already
        }
        for (java.sql.DriverPropertyInfo property : properties) {
            if (property.value != null && property.choices != null && property.choices.length > 0
                    && !java.util.Arrays.stream(property.choices).allMatch(c -> c.matches("[0-9.]+"))
                    && java.util.Arrays.stream(property.choices).noneMatch(property.value::equalsIgnoreCase)) {
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
     *     {@value #CHANNEL}, {@value #RECONNECT_BACKOFF_MS}, {@value #RECONNECT_MAX_BACKOFF_MS}
     * @return the settings
     * @throws OutboxMisconfigurationException naming an unknown key or a bad value
     */
    public static PostgresTransportSettings fromMap(Map<String, String> values) {
        Set<String> unknown = new TreeSet<>(values.keySet());
        unknown.removeAll(DOCUMENTATION.keySet());
        if (!unknown.isEmpty()) {
            throw new OutboxMisconfigurationException("unknown PostgreSQL notification setting(s) " + unknown
                    + "; known: " + DOCUMENTATION.keySet());
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
                + (password == null ? "none" : "***") + ", channel=" + channel + "]";
    }

    private static Map<String, String> documentation() {
        Map<String, String> docs = new LinkedHashMap<>();
        docs.put(URL, "JDBC URL of the PostgreSQL database, jdbc:postgresql://host:port/db; required");
        docs.put(USER, "database user; default the driver's");
        docs.put(PASSWORD, "database password; default none");
        docs.put(CHANNEL, "LISTEN/NOTIFY channel, [A-Za-z_][A-Za-z0-9_]{0,62}; default " + DEFAULT_CHANNEL);
        docs.put(RECONNECT_BACKOFF_MS, "first pause before reconnecting the listener in ms; default 100");
        docs.put(RECONNECT_MAX_BACKOFF_MS, "longest pause before reconnecting in ms; default 5000");
        return Map.copyOf(docs);
    }

    /** Builds {@link PostgresTransportSettings}. Not thread-safe. */
    public static final class Builder {

        private final String url;
        private String user;
        private String password;
        private String channel = DEFAULT_CHANNEL;
        private Duration reconnectBackoff = Duration.ofMillis(100);
        private Duration reconnectMaxBackoff = Duration.ofSeconds(5);

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
         * @return the settings
         * @throws OutboxMisconfigurationException naming a bad value
         */
        public PostgresTransportSettings build() {
            return new PostgresTransportSettings(url, user, password, channel, reconnectBackoff, reconnectMaxBackoff);
        }
    }
}
