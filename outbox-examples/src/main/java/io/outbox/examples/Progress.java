package io.outbox.examples;

import java.text.DecimalFormat;
import me.tongfei.progressbar.ConsoleProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;

/**
 * A progress bar on standard error, or nothing: it is shown only when asked for and the process
 * has a terminal, so captured output (tests, CI logs, pipes) stays free of it.
 */
final class Progress implements AutoCloseable {

    private final ProgressBar bar;

    private Progress(ProgressBar bar) {
        this.bar = bar;
    }

    /**
     * Starts a bar.
     *
     * @param wanted false for {@code --no-progress}
     * @param task the label
     * @param max the count at 100 %
     */
    static Progress start(boolean wanted, String task, long max) {
        if (!wanted || System.console() == null) {
            return new Progress(null);
        }
        return new Progress(new ProgressBarBuilder()
                .setTaskName(task)
                .setInitialMax(max)
                .setStyle(ProgressBarStyle.ASCII)
                .setUpdateIntervalMillis(200)
                .setConsumer(new ConsoleProgressBarConsumer(System.err))
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
