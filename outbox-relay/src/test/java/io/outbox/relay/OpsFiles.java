package io.outbox.relay;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;

/**
 * The repository's Prometheus rules and Grafana dashboard ({@code ops/}), and the Prometheus tools
 * that check them: {@code promtool} and {@code prometheus} from Debian's {@code prometheus}
 * package, which {@code scripts/test.sh} installs (pinned) and names in
 * {@code OUTBOX_TEST_PROMTOOL} and {@code OUTBOX_TEST_PROMETHEUS}. A test that needs one skips,
 * with the reason, when it is absent.
 */
final class OpsFiles {

    static final Path RULES = Path.of("..", "ops", "prometheus", "outbox-alerts.yml");
    static final Path RULE_TESTS = Path.of("..", "ops", "prometheus", "outbox-alerts.test.yml");
    static final Path DASHBOARD = Path.of("..", "ops", "grafana", "outbox-dashboard.json");

    private static final Pattern METRIC = Pattern.compile("\\boutbox_[a-z0-9_]+|\\boutbox:[a-z0-9_:]+");

    private OpsFiles() {
    }

    static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The metric names (series and recorded rules) that the text names, outside YAML comments. */
    static Set<String> metricNames(String text) {
        Set<String> names = new LinkedHashSet<>();
        for (String line : text.split("\n")) {
            if (line.strip().startsWith("#")) {
                continue;
            }
            Matcher m = METRIC.matcher(line);
            while (m.find()) {
                names.add(m.group());
            }
        }
        return names;
    }

    /** Every series name a relay registers (RelayMeter's Prometheus series). */
    static Set<String> registeredSeries() {
        Set<String> series = new LinkedHashSet<>();
        Stream.of(RelayMeter.values()).forEach(m -> series.addAll(m.prometheusSeries()));
        return series;
    }

    /** The tool's path from the environment variable, else from the PATH; skips the test when absent. */
    static Path tool(String variable, String name) {
        String configured = System.getenv(variable);
        if (configured != null && !configured.isBlank() && Files.isExecutable(Path.of(configured))) {
            return Path.of(configured);
        }
        for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
            Path candidate = Path.of(dir, name);
            if (!dir.isEmpty() && Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        Assumptions.abort(name + " is not installed (Debian package prometheus 2.42.0+ds-5+deb12u1; scripts/test.sh "
                + "installs it) and " + variable + " is not set");
        throw new AssertionError("unreachable");
    }

    /** Runs a command in a folder; returns its exit status and its output (stdout and stderr). */
    static Result run(Path dir, List<String> command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError(command + " did not end within 60 s; output: " + output);
        }
        return new Result(process.exitValue(), output);
    }

    record Result(int status, String output) {
    }
}
