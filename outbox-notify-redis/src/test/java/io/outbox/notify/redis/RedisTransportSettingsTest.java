package io.outbox.notify.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.spi.OutboxMisconfigurationException;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The transport's settings are checked without connecting; a URI that can never connect is refused. */
class RedisTransportSettingsTest {

    /**
     * Lettuce takes {@code redis://:pw@h:notaport} as the host {@code h:notaport} on port 6379,
     * which never resolves: refused, its value hidden, instead of retried for ever.
     */
    @Test
    void n5_aUriWithAPortThatIsNoNumberIsAMisconfigurationWithItsValueHidden() {
        for (String uri : new String[] {"redis://:pw-4414@127.0.0.1:notaport", "redis://pw-4414@cache:notaport/0",
                "rediss://127.0.0.1:abc"}) {
            assertThatThrownBy(() -> RedisTransportSettings.fromMap(Map.of(RedisTransportSettings.URI, uri)))
                    .as(uri).isInstanceOf(OutboxMisconfigurationException.class)
                    .hasMessageContainingAll(RedisTransportSettings.URI, "no host with a numeric port", "value hidden")
                    .hasMessageNotContaining("pw-4414").hasMessageNotContaining("notaport");
        }
    }

    @Test
    void n5_hostsPortsAndIpv6AddressesAreAccepted() {
        for (String uri : new String[] {"redis://127.0.0.1:6379", "redis://[::1]:6379", "redis://cache",
                "rediss://:pw@cache.example.com:6380/2", "redis-sentinel://127.0.0.1:26379,127.0.0.2:26379/0#main",
                "redis-socket:///tmp/redis.sock"}) {
            assertThat(RedisTransportSettings.fromMap(Map.of(RedisTransportSettings.URI, uri)).uri()).as(uri)
                    .isEqualTo(uri);
        }
    }

    /** The bound on noticing a dead connection: 15 s unless set, and a value out of range is named. */
    @Test
    void n6_theLivenessTimeoutDefaultsTo15sAndAValueOutOfRangeIsRefusedNamingIt() {
        assertThat(RedisTransportSettings.fromMap(Map.of()).livenessTimeout()).isEqualTo(Duration.ofSeconds(15));
        assertThat(RedisTransportSettings.fromMap(Map.of(RedisTransportSettings.LIVENESS_TIMEOUT_MS, "2000"))
                .livenessTimeout().toMillis()).isEqualTo(2000);
        assertThatThrownBy(() -> RedisTransportSettings.fromMap(Map.of(RedisTransportSettings.LIVENESS_TIMEOUT_MS,
                "400000"))).isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("liveness.timeout.ms=400000 must be in [500, 300000]");
    }
}
