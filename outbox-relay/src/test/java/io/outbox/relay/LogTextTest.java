package io.outbox.relay;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** One-line log text: the ERROR line of a misconfiguration stays one line (rule R6). */
class LogTextTest {

    @Test
    void r6_everyKindOfLineBreakAndTheWhiteSpaceAroundItBecomeOneSpace() {
        assertThat(LogText.oneLine("relation \"m\" does not exist\n  Position: 23; recreate"))
                .isEqualTo("relation \"m\" does not exist Position: 23; recreate");
        assertThat(LogText.oneLine("a\r\nb\rc\u2028d \n\n e\n")).isEqualTo("a b c d e");
        assertThat(LogText.oneLine("one line, as it was")).isEqualTo("one line, as it was");
        assertThat(LogText.oneLine(null)).isEqualTo("null");
    }
}
