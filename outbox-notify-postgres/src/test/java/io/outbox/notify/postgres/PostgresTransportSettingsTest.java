package io.outbox.notify.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.spi.OutboxMisconfigurationException;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The transport's settings are checked without connecting; a URL that can never work is refused. */
class PostgresTransportSettingsTest {

    @Test
    void n5_aUrlTheDriverCanNeverParseIsAMisconfigurationWithItsValueHidden() {
        for (String url : new String[] {"jdbc:postgresql://127.0.0.1:notaport/test", "jdbc:postgresql://h:99999/db",
                "jdbc:postgresql://u:pw-4411@127.0.0.1/test"}) {
            assertThatThrownBy(() -> PostgresTransportSettings.fromMap(Map.of(PostgresTransportSettings.URL, url)))
                    .as(url).isInstanceOf(OutboxMisconfigurationException.class)
                    .hasMessageContaining(PostgresTransportSettings.URL).hasMessageContaining("cannot parse")
                    .hasMessageNotContaining("pw-4411").hasMessageNotContaining("notaport");
        }
    }

    /** pgjdbc refuses {@code sslmode=bogus} on every connection: refused here, not retried by the listener. */
    @Test
    void n5_aUrlPropertyValueTheDriverDoesNotListIsAMisconfigurationWithItsValueHidden() {
        assertThatThrownBy(() -> PostgresTransportSettings.fromMap(Map.of(PostgresTransportSettings.URL,
                "jdbc:postgresql://127.0.0.1:5432/test?sslmode=bogus&password=pw-4412")))
                .isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContainingAll(PostgresTransportSettings.URL, "'sslmode'", "verify-full", "value hidden")
                .hasMessageNotContaining("pw-4412").hasMessageNotContaining("bogus");
        assertThatThrownBy(() -> PostgresTransportSettings.fromMap(Map.of(PostgresTransportSettings.URL,
                "jdbc:mysql://u:pw-4413@h/db"))).isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("must be a PostgreSQL JDBC URL").hasMessageNotContaining("pw-4413");
    }

    @Test
    void n5_aUrlTheDriverParsesIsAccepted() {
        assertThat(PostgresTransportSettings.fromMap(Map.of(PostgresTransportSettings.URL,
                "jdbc:postgresql://127.0.0.1:5432/test?sslmode=disable")).url())
                .isEqualTo("jdbc:postgresql://127.0.0.1:5432/test?sslmode=disable");
    }

    /** The bound on noticing a dead connection: 15 s unless set, and a value out of range is named. */
    @Test
    void n6_theLivenessTimeoutDefaultsTo15sAndAValueOutOfRangeIsRefusedNamingIt() {
        String url = "jdbc:postgresql://127.0.0.1:5432/test";
        assertThat(PostgresTransportSettings.fromMap(Map.of(PostgresTransportSettings.URL, url)).livenessTimeout())
                .isEqualTo(Duration.ofSeconds(15));
        assertThat(PostgresTransportSettings.fromMap(Map.of(PostgresTransportSettings.URL, url,
                PostgresTransportSettings.LIVENESS_TIMEOUT_MS, "2000")).livenessTimeout().toMillis()).isEqualTo(2000);
        assertThatThrownBy(() -> PostgresTransportSettings.fromMap(Map.of(PostgresTransportSettings.URL, url,
                PostgresTransportSettings.LIVENESS_TIMEOUT_MS, "100"))).isInstanceOf(OutboxMisconfigurationException.class)
                .hasMessageContaining("liveness.timeout.ms=100 must be in [500, 300000]");
    }
}
