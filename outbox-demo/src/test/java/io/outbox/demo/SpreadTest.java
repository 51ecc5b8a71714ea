package io.outbox.demo;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Medians with the lowest and highest value, of the bench's counted runs. */
class SpreadTest {

    @Test
    void anOddCountHasTheMiddleValueAsMedian() {
        assertThat(Spread.of(5, 1, 4, 2, 3)).isEqualTo(new Spread(3, 1, 5, 5));
    }

    @Test
    void anEvenCountHasTheMeanOfTheTwoMiddleValues() {
        assertThat(Spread.of(10, 1, 4, 2)).isEqualTo(new Spread(3, 1, 10, 4));
    }

    @Test
    void oneValueIsItsOwnMedianMinimumAndMaximum() {
        assertThat(Spread.of(0.59)).isEqualTo(new Spread(0.59, 0.59, 0.59, 1));
    }

    @Test
    void unmeasuredValuesAreLeftOutAndNoneLeftIsNaN() {
        assertThat(Spread.of(Double.NaN, 2, 8)).isEqualTo(new Spread(5, 2, 8, 2));
        Spread none = Spread.of(Double.NaN);
        assertThat(none.count()).isZero();
        assertThat(none.median()).isNaN();
        assertThat(none.format("%.2f")).isEqualTo("-");
        assertThat(Spread.of().count()).isZero();
    }

    @Test
    void theInputIsNotReordered() {
        double[] values = {3, 1, 2};
        Spread.of(values);
        assertThat(values).containsExactly(3, 1, 2);
    }

    @Test
    void formatShowsMedianThenLowestToHighest() {
        assertThat(Spread.of(31_000, 64_000, 52_000, 40_000, 60_000).format("%,.0f"))
                .isEqualTo("52,000 (31,000-64,000)");
        assertThat(Spread.of(0.46, 0.73, 0.59).format("%.2f")).isEqualTo("0.59 (0.46-0.73)");
    }
}
