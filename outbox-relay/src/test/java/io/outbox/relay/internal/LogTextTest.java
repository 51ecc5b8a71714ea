package io.outbox.relay.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Text for terminals and log lines: the ERROR line of a misconfiguration stays one line (rule R6),
 * and what a terminal would obey is shown as an escape.
 */
class LogTextTest {

    @Test
    void r6_everyKindOfLineBreakAndTheWhiteSpaceAroundItBecomeOneSpace() {
        assertThat(LogText.oneLine("relation \"m\" does not exist\n  Position: 23; recreate"))
                .isEqualTo("relation \"m\" does not exist Position: 23; recreate");
        assertThat(LogText.oneLine("a\r\nb\rc\u2028d \n\n e\n")).isEqualTo("a b c d e");
        assertThat(LogText.oneLine("a \t\u000b\f\u0085\u2029 b")).isEqualTo("a b");
        assertThat(LogText.oneLine("one line, as it was")).isEqualTo("one line, as it was");
        assertThat(LogText.oneLine(null)).isEqualTo("null");
    }

    @Test
    void controlCharactersBidiControlsAndSeparatorsAreShownAsEscapes() {
        assertThat(LogText.visible("a\u0000b\u0007c\u001b[31md\u001b]0;title\u0007e\u007ff\u0080g\u009bh"))
                .isEqualTo("a\\u0000b\\u0007c\\u001b[31md\\u001b]0;title\\u0007e\\u007ff\\u0080g\\u009bh");
        assertThat(LogText.visible("x\u202ay\u202ez\u2066w\u2069v\u2028u\u2029t\n\r\t"))
                .isEqualTo("x\\u202ay\\u202ez\\u2066w\\u2069v\\u2028u\\u2029t\\u000a\\u000d\\u0009");
        String printable = "ordinary text: ü, 日本, \u00a0, \\ and \u200b stay";
        assertThat(LogText.visible(printable)).isSameAs(printable);
        assertThat(LogText.visible(null)).isEqualTo("null");
    }

    @Test
    void oneLineEscapesWhatItDoesNotJoin() {
        assertThat(LogText.oneLine("Invalid topics: [orders\n2026-12-02 INFO forged \u001b[2J\u0007]"))
                .isEqualTo("Invalid topics: [orders 2026-12-02 INFO forged \\u001b[2J\\u0007]");
    }

    @Test
    void longRunsOfBlanksAndBreaksTakeLinearTime() {
        // A backtracking pattern would take minutes on these; no timing assertion.
        String blanks = " ".repeat(1 << 20) + "x";
        assertThat(LogText.oneLine("a" + blanks)).isEqualTo("a" + blanks);
        assertThat(LogText.oneLine("a" + " \n".repeat(1 << 19) + "b")).isEqualTo("a b");
    }
}
