package io.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Locale;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The one message-id parser: the canonical 8-4-4-4-12 form only, either case. */
class MessageIdsTest {

    private static final String ID = "123e4567-e89b-42d3-a456-426614174000";

    @Test
    void readsTheCanonicalFormInEitherCase() {
        UUID id = UUID.fromString(ID);
        assertThat(MessageIds.parse(ID)).isEqualTo(id);
        assertThat(MessageIds.parse(ID.toUpperCase(Locale.ROOT))).isEqualTo(id);
        assertThat(MessageIds.isCanonical(ID)).isTrue();
    }

    @Test
    void refusesWhatUuidFromStringWouldPadOrReadOtherwise() {
        String missingDigit = ID.substring(0, 35);
        String[] bad = {"1-1-1-1-1", missingDigit, ID.substring(1), "",
            " " + ID.substring(1), ID.replace("-", ""), ID.replace('-', '_'), "g" + ID.substring(1),
            ID.substring(0, 35) + "\u0660", "+23e4567-e89b-42d3-a456-426614174000", ID + "0"};
        for (String text : bad) {
            assertThat(MessageIds.parseOrNull(text)).as("'%s'", text).isNull();
            assertThatThrownBy(() -> MessageIds.parse(text)).as("'%s'", text)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not a message id: '" + text
                            + "'").hasMessageContaining("8-4-4-4-12 hex digits");
        }
        assertThat(UUID.fromString("1-1-1-1-1")).as("what the lax parser makes of it")
                .isEqualTo(UUID.fromString("00000001-0001-0001-0001-000000000001"));
        assertThat(MessageIds.parseOrNull(null)).isNull();
        assertThatThrownBy(() -> MessageIds.parse(null)).hasMessageContaining("not a message id: null");
    }

    @Test
    void aLongValueIsNamedByItsBeginningAndLength() {
        String long1 = "x".repeat(100_000);
        assertThatThrownBy(() -> MessageIds.parse(long1))
                .hasMessageContaining("'" + "x".repeat(64) + "'... (100000 characters)")
                .satisfies(e -> assertThat(e.getMessage()).hasSizeLessThan(300));
    }
}
