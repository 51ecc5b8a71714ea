package io.outbox.demo;

import java.io.PrintStream;
import java.text.DecimalFormat;
import me.tongfei.progressbar.ConsoleProgressBarConsumer;
import me.tongfei.progressbar.DelegatingProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarConsumer;
import me.tongfei.progressbar.ProgressBarStyle;

/**
 * Progress on standard error: a bar redrawn in place when the process has a terminal, otherwise
 * (CI logs, pipes, files) one line every {@value #LINE_INTERVAL_MILLIS} ms, so a long run in a log
 * still shows it is moving. {@code --no-progress} turns both off.
 */
final class Progress implements AutoCloseable {

    /** How often a progress line is written when there is no terminal, in milliseconds. */
    static final int LINE_INTERVAL_MILLIS = 5_000;
    private static final int BAR_INTERVAL_MILLIS = 200;
    private static final int LINE_LENGTH = 120;

    private final ProgressBar bar;

    private Progress(ProgressBar bar) {
        this.bar = bar;
    }

    /**
     * Starts progress output on standard error.
     *
     * @param wanted false for {@code --no-progress}
     * @param task the label
     * @param max the count at 100 %
     */
    static Progress start(boolean wanted, String task, long max) {
        return start(wanted, task, max, System.console() != null, System.err, LINE_INTERVAL_MILLIS);
    }

    /**
     * Starts progress output.
     *
     * @param wanted false for none at all
     * @param task the label
     * @param max the count at 100 %
     * @param terminal true for a bar redrawn in place, false for a line every {@code lineIntervalMillis}
     * @param out where it goes
     * @param lineIntervalMillis the interval between lines without a terminal, in milliseconds
     */
    static Progress start(boolean wanted, String task, long max, boolean terminal, PrintStream out,
                          int lineIntervalMillis) {
        if (!wanted) {
            return new Progress(null);
        }
        ProgressBarConsumer consumer = terminal
                ? new ConsoleProgressBarConsumer(out)
                : new DelegatingProgressBarConsumer(line -> {
                    out.println(line);
                    out.flush();
                }, LINE_LENGTH);
        ProgressBarBuilder builder = new ProgressBarBuilder();
        if (!terminal) {
            builder.continuousUpdate(); // a line at every interval, also while nothing moves
        }
        return new Progress(builder
                .setTaskName(task)
                .setInitialMax(max)
                .setStyle(ProgressBarStyle.ASCII)
                .setUpdateIntervalMillis(terminal ? BAR_INTERVAL_MILLIS : lineIntervalMillis)
                .setConsumer(consumer)
                .showSpeed(new DecimalFormat("#,##0"))
                .build());
    }

    /** Moves the bar to {@code current} with a note after it. */
    void update(long current, String note) {
        if (bar != null) {
            bar.stepTo(current);
            bar.setExtraMessage(note.isEmpty() ? "" : " " + note);
        }
    }

    @Override
    public void close() {
        if (bar != null) {
            bar.close();
        }
    }
}
