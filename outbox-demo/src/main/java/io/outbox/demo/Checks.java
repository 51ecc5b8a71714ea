package io.outbox.demo;

import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

/** Range checks of numeric options, with messages naming the option and the value. */
final class Checks {

    private Checks() {
    }

    static void atLeast(CommandLine commandLine, String option, long value, long min) {
        if (value < min) {
            throw new ParameterException(commandLine, option + " must be at least " + min + " but was " + value);
        }
    }

    static void between(CommandLine commandLine, String option, long value, long min, long max) {
        if (value < min || value > max) {
            throw new ParameterException(commandLine, option + " must be between " + min + " and " + max
                    + " but was " + value);
        }
    }
}
