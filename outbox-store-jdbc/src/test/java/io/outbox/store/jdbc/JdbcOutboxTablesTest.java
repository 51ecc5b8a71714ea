package io.outbox.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Table and schema names are identifiers, or refused: configuration cannot inject SQL. */
class JdbcOutboxTablesTest {

    @Test
    void defaultsAndPrefixes() {
        assertThat(JdbcOutboxTables.defaults())
                .isEqualTo(new JdbcOutboxTables(null, "outbox_messages", "outbox_leases", "outbox_relays"));
        assertThat(JdbcOutboxTables.withPrefix("")).isEqualTo(new JdbcOutboxTables(null, "messages", "leases", "relays"));
        assertThat(JdbcOutboxTables.withPrefix("Shop_2_").inSchema("app").leases()).isEqualTo("Shop_2_leases");
        assertThat(JdbcOutboxTables.defaults().messagesIndex()).isEqualTo("outbox_messages_bucket_id");
    }

    @Test
    void injectionAttemptsAndOtherNonIdentifiersAreRefused() {
        for (String bad : List.of("x\"; DROP TABLE users; --", "a`b", "a.b", "a b", "1abc", "tbl;", "naïve", "a-b",
                "a'b", "a\nb", "")) {
            assertThatThrownBy(() -> new JdbcOutboxTables(null, bad, "l", "r")).as("messages table %s", bad)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("messages table name");
            assertThatThrownBy(() -> JdbcOutboxTables.defaults().inSchema(bad)).as("schema %s", bad)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("schema name");
        }
        for (String bad : List.of("x\"; --", "a.b_", "9_", " ")) {
            assertThatThrownBy(() -> JdbcOutboxTables.withPrefix(bad)).as("prefix %s", bad)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("table prefix");
        }
        assertThatThrownBy(() -> new JdbcOutboxTables(null, "m", "l\u0000", "r"))
                .hasMessageContaining("\\u0000");
    }

    @Test
    void namesAreLimitedToWhatPostgresqlKeeps() {
        String longest = "m".repeat(JdbcOutboxTables.MAX_NAME_LENGTH - "_bucket_id".length());
        assertThat(new JdbcOutboxTables(null, longest, "l", "r").messagesIndex()).hasSize(63);
        assertThatThrownBy(() -> new JdbcOutboxTables(null, longest + "m", "l", "r"))
                .hasMessageContaining("index name");
        assertThatThrownBy(() -> new JdbcOutboxTables(null, "m", "l".repeat(64), "r"))
                .hasMessageContaining("longer than 63");
        assertThatThrownBy(() -> JdbcOutboxTables.withPrefix("p".repeat(50))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theThreeTablesMustDiffer() {
        assertThatThrownBy(() -> new JdbcOutboxTables(null, "t", "t", "r")).hasMessageContaining("must differ");
    }

    @Test
    void namesAreQuotedInEveryDialect() {
        JdbcOutboxTables tables = JdbcOutboxTables.withPrefix("p_").inSchema("app");
        assertThat(new Sql(JdbcDialect.POSTGRESQL, tables).messages).isEqualTo("\"app\".\"p_messages\"");
        assertThat(new Sql(JdbcDialect.H2, tables).leases).isEqualTo("\"app\".\"p_leases\"");
        assertThat(new Sql(JdbcDialect.MYSQL, tables).relays).isEqualTo("`app`.`p_relays`");
    }
}
