package io.outbox.notify.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.outbox.spi.OutboxMisconfigurationException;
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
}
