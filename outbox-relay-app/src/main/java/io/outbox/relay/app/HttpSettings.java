package io.outbox.relay.app;

import io.outbox.spi.OutboxMisconfigurationException;
import java.time.Duration;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.types.Password;

/**
 * The standalone relay's HTTP settings ({@code http.*}, rule H1): off unless {@value #PORT} is set.
 *
 * @param port the TCP port, 0 for any free one; null when the endpoint is off
 * @param bindAddress the address the endpoint listens on; not null
 * @param readyThreshold how long the store or the broker may stay unreachable before
 *     {@code /health/ready} answers 503; positive
 * @param adminToken the token write operations need (rule H2), or null: then they are off
 */
record HttpSettings(Integer port, String bindAddress, Duration readyThreshold, Password adminToken) {

    /** Prefix of the HTTP settings. */
    static final String PREFIX = "http.";
    /** Key of the port. */
    static final String PORT = "http.port";
    /** Key of the bind address. */
    static final String BIND_ADDRESS = "http.bind.address";
    /** Key of the readiness threshold. */
    static final String READY_THRESHOLD_MS = "http.ready.unreachable.threshold.ms";
    /** Key of the admin token. */
    static final String ADMIN_TOKEN = "http.admin.token";

    private static final ConfigDef DEFINITION = new ConfigDef()
            .define(PORT, ConfigDef.Type.INT, null, unsetOr(ConfigDef.Range.between(0, 65535)), ConfigDef.Importance.MEDIUM,
                    "TCP port of the HTTP endpoint, 0 to 65535 (health, readiness, Prometheus metrics, pending messages, leases "
                            + "and dead letters; docs/standalone-relay.md); 0 picks a free port, logged at INFO. "
                            + "Unset: no endpoint.")
            .define(BIND_ADDRESS, ConfigDef.Type.STRING, "0.0.0.0", new ConfigDef.NonEmptyStringWithoutControlChars(),
                    ConfigDef.Importance.LOW, "Address the HTTP endpoint listens on; 127.0.0.1 keeps it local.")
            .define(READY_THRESHOLD_MS, ConfigDef.Type.LONG, 30_000L, ConfigDef.Range.between(1, 86_400_000L),
                    ConfigDef.Importance.LOW, "How long the store or the broker may be unreachable before "
                            + "/health/ready answers 503, in milliseconds.")
            .define(ADMIN_TOKEN, ConfigDef.Type.PASSWORD, null, ConfigDef.Importance.MEDIUM,
                    "Token of the HTTP write operations (replay, purge, drain, resume), sent as 'Authorization: "
                            + "Bearer <token>'; compared in constant time, never logged. Unset: no write operations "
                            + "(404).");

    /** The validator, letting an unset value through. */
    private static ConfigDef.Validator unsetOr(ConfigDef.Range range) {
        return new ConfigDef.Validator() {
            @Override
            public void ensureValid(String name, Object value) {
                if (value != null) {
                    range.ensureValid(name, value);
                }
            }

            @Override
            public String toString() {
                return range + " or unset";
            }
        };
    }

    /**
     * The definition of every HTTP setting, under its full key.
     *
     * @return the definition; callers must not change it
     */
    static ConfigDef configDef() {
        return DEFINITION;
    }

    /**
     * Parses the HTTP settings.
     *
     * @param settings the {@code http.*} settings under their full keys; not null
     * @return the settings
     * @throws OutboxMisconfigurationException naming the key for an unknown key or a bad value
     *     (never showing the token)
     */
    static HttpSettings of(Map<String, String> settings) {
        for (String key : settings.keySet()) {
            if (!DEFINITION.names().contains(key)) {
                throw new OutboxMisconfigurationException("unknown HTTP setting '" + key + "'; the relay accepts "
                        + new java.util.TreeSet<>(DEFINITION.names()));
            }
        }
        Map<String, Object> parsed;
        try {
            parsed = DEFINITION.parse(settings);
        } catch (ConfigException e) {
            throw new OutboxMisconfigurationException("invalid HTTP setting: " + e.getMessage(), e);
        }
        Password token = (Password) parsed.get(ADMIN_TOKEN);
        if (token != null && token.value().isEmpty()) {
            throw new OutboxMisconfigurationException(ADMIN_TOKEN + " is empty; unset it to turn write operations off");
        }
        return new HttpSettings((Integer) parsed.get(PORT), (String) parsed.get(BIND_ADDRESS),
                Duration.ofMillis((Long) parsed.get(READY_THRESHOLD_MS)), token);
    }

    /**
     * Whether the endpoint runs.
     *
     * @return true when {@value #PORT} is set
     */
    boolean enabled() {
        return port != null;
    }
}
