package io.outbox.relay.app;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A PostgreSQL cluster of a test's own that checks passwords (the machine's server trusts local
 * connections): {@code initdb --auth=scram-sha-256} into a temporary directory, started with
 * {@code pg_ctl} on a free loopback port and a socket directory of its own, stopped and deleted by
 * {@link #close()}. The binaries are found in {@code OUTBOX_TEST_POSTGRES_BIN} (set by
 * {@code scripts/test.sh}), else in {@code /usr/lib/postgresql/<version>/bin}. PostgreSQL refuses
 * to run as root, so under root every command runs as the {@code postgres} user ({@code runuser}).
 */
final class PrivatePostgres implements AutoCloseable {

    /** The superuser's name. */
    static final String USER = "postgres";

    private static final Duration COMMAND_LIMIT = Duration.ofSeconds(120);

    private final Path bin;
    private final Path dir;
    private final Path data;
    private final int port;

    private PrivatePostgres(Path bin, Path dir, int port) {
        this.bin = bin;
        this.dir = dir;
        this.data = dir.resolve("data");
        this.port = port;
    }

    /** The directory of {@code initdb} and {@code pg_ctl}, if this machine has one. */
    static Optional<Path> binaries() {
        String configured = System.getenv("OUTBOX_TEST_POSTGRES_BIN");
        if (configured != null && !configured.isBlank()) {
            return Optional.of(Path.of(configured)).filter(p -> Files.isExecutable(p.resolve("initdb")));
        }
        Path versions = Path.of("/usr/lib/postgresql");
        if (!Files.isDirectory(versions)) {
            return Optional.empty();
        }
        try (Stream<Path> list = Files.list(versions)) {
            return list.map(v -> v.resolve("bin")).filter(p -> Files.isExecutable(p.resolve("initdb")))
                    .max(Comparator.naturalOrder());
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /**
     * Creates and starts a cluster whose superuser {@value #USER} logs in with {@code password} only.
     *
     * @throws IllegalStateException if a command fails, with its output
     */
    static PrivatePostgres start(Path bin, String password) throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("outbox-pg-");
        PrivatePostgres pg = new PrivatePostgres(bin, dir, freePort());
        try {
            Path pwfile = dir.resolve("pwfile");
            Files.writeString(pwfile, password + "\n", StandardCharsets.UTF_8);
            if (asRoot()) {
                UserPrincipalLookupService users = dir.getFileSystem().getUserPrincipalLookupService();
                Files.setOwner(dir, users.lookupPrincipalByName(USER));
                Files.setOwner(pwfile, users.lookupPrincipalByName(USER));
            }
            pg.run("initdb", "-D", pg.data.toString(), "-U", USER, "--auth=scram-sha-256", "--pwfile=" + pwfile,
                    "-E", "UTF8", "--no-sync", "--no-instructions");
            pg.run("pg_ctl", "-D", pg.data.toString(), "-l", dir.resolve("server.log").toString(), "-w", "-t", "60",
                    "-o", "-p " + pg.port + " -k " + dir + " -c listen_addresses=127.0.0.1 -c fsync=off", "start");
            return pg;
        } catch (IOException | InterruptedException | RuntimeException e) {
            pg.close();
            throw e;
        }
    }

    /** The JDBC URL of the cluster's {@code postgres} database. */
    String url() {
        return "jdbc:postgresql://127.0.0.1:" + port + "/postgres";
    }

    private static boolean asRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    private void run(String tool, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        if (asRoot()) {
            command.addAll(List.of("runuser", "-u", USER, "--"));
        }
        command.add(bin.resolve(tool).toString());
        command.addAll(List.of(args));
        Path out = Files.createTempFile("outbox-pg-" + tool, ".log");
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
            if (!p.waitFor(COMMAND_LIMIT.toSeconds(), TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(tool + " did not end within " + COMMAND_LIMIT + ": "
                        + Files.readString(out));
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException(tool + " failed with exit code " + p.exitValue() + ": "
                        + Files.readString(out));
            }
        } finally {
            Files.deleteIfExists(out);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    /** Stops the cluster at once and deletes its directory. */
    @Override
    public void close() {
        try {
            if (Files.exists(data.resolve("postmaster.pid"))) {
                run("pg_ctl", "-D", data.toString(), "-m", "immediate", "-w", "-t", "60", "stop");
            }
        } catch (IOException | RuntimeException e) {
            System.err.println("could not stop the private PostgreSQL cluster in " + dir + ": " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            } catch (IOException e) {
                System.err.println("could not delete " + dir + ": " + e);
            }
        }
    }
}
