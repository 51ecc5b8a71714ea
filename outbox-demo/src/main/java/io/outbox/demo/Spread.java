package io.outbox.demo;

import java.util.Arrays;
import java.util.Locale;

/**
 * The median, lowest and highest of a few measurements (the benchmark's counted runs). NaN values
 * (a figure a run could not measure) are left out; with none left every field is NaN.
 *
 * @param median the middle value, or the mean of the two middle ones for an even count
 * @param min the lowest
 * @param max the highest
 * @param count how many values were not NaN
 */
record Spread(double median, double min, double max, int count) {

    /** The spread of {@code values}; the array is not changed. */
    static Spread of(double... values) {
        double[] sorted = Arrays.stream(values).filter(v -> !Double.isNaN(v)).sorted().toArray();
        int n = sorted.length;
        if (n == 0) {
            return new Spread(Double.NaN, Double.NaN, Double.NaN, 0);
        }
        double median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        return new Spread(median, sorted[0], sorted[n - 1], n);
    }

    /**
     * "median (min-max)" with {@code format} for each number, e.g. {@code "%,.0f"}; "-" when nothing
     * was measured.
     */
    String format(String format) {
        if (count == 0) {
            return "-";
        }
        return String.format(Locale.ROOT, format + " (" + format + "-" + format + ")", median, min, max);
    }
}
