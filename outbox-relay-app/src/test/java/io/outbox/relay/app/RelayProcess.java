package io.outbox.relay.app;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The executable jar run as a separate JVM, its standard output and error captured in files. The
 * jar is the one {@code mvn package} built (system property {@code relay.jar}, set by failsafe).
 */
final class RelayProcess implements AutoCloseable {

    private static final Duration EXIT_WAIT = Duration.ofSeconds(90);

    private final Process process;
    private final Path out;
    private final Path err;

    private RelayProcess(Process process, Path out, Path err) {
        this.process = process;
        this.out = out;
        this.err = err;
    }

    /** The executable jar under test. */
    static Path jar() {
        String jar = System.getProperty("relay.jar");
        if (jar == null || !Files.isRegularFile(Paths.get(jar))) {
            throw new IllegalStateException("the executable jar " + jar + " does not exist; run the tests with "
                    + "'mvn verify' (failsafe runs them after the package phase built it)");
        }
        return Paths.get(jar);
    }

    /**
     * Starts {@code java -jar} with these arguments; the environment is this JVM's plus the given
     * variables.
     */
    static RelayProcess start(Path workDir, Map<String, String> environment, String... args) {
        return start(workDir, List.of(), environment, args);
    }

    /**
     * Starts {@code java -jar} with extra JVM options (after the defaults, so {@code -Xmx64m}
     * replaces the default heap) and these arguments.
     */
    static RelayProcess start(Path workDir, List<String> jvmOptions, Map<String, String> environment,
                              String... args) {
        List<String> command = new ArrayList<>(List.of(
                Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"));
        command.addAll(jvmOptions);
        command.addAll(List.of("-jar", jar().toString()));
        command.addAll(List.of(args));
        try {
            Path out = Files.createTempFile(workDir, "relay", ".out");
            Path err = Files.createTempFile(workDir, "relay", ".err");
            ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(out.toFile())
                    .redirectError(err.toFile());
            builder.environment().putAll(environment);
            return new RelayProcess(builder.start(), out, err);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Sends SIGTERM (what {@link Process#destroy()} does on Linux). */
    void terminate() {
        process.destroy();
    }

    /** Sends SIGKILL (what {@link Process#destroyForcibly()} does on Linux): no shutdown hook runs. */
    void kill() {
        process.destroyForcibly();
    }

    /** Waits for the exit; fails if the process is still running after a generous bound. */
    int exitCode() throws InterruptedException {
        if (!process.waitFor(EXIT_WAIT.toSeconds(), TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("the relay did not exit within " + EXIT_WAIT + "; stderr:\n" + err());
        }
        return process.exitValue();
    }

    boolean isAlive() {
        return process.isAlive();
    }

    String out() {
        return read(out);
    }

    String err() {
        return read(err);
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
        }
    }
}
