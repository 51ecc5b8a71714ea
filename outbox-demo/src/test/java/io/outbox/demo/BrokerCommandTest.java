package io.outbox.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.Test;

/**
 * {@code ./demo broker}: a broker process on the asked port, until stopped, that cleans up after
 * itself; and its place in the demo's help.
 */
class BrokerCommandTest {

    @Test
    void brokerCommandServesOnTheGivenPortUntilStoppedThenDeletesItsDirectory() throws Exception {
        int port = freePort();
        Process process = java(ProcessBuilder.Redirect.DISCARD, "--port", String.valueOf(port));
        try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            String first = out.readLine();
            assertThat(first).isEqualTo("bootstrap.servers=127.0.0.1:" + port);

            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port))) {
                assertThat(admin.describeCluster().nodes().get(30, TimeUnit.SECONDS)).hasSize(1);
            }

            // SIGTERM, like Ctrl-C's SIGINT, runs the shutdown hook (Process.destroy() would also close our pipes)
            process.toHandle().destroy();
            String last = null;
            for (String line = out.readLine(); line != null; line = out.readLine()) {
                last = line;
            }
            assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(last).startsWith("stopped; deleted ");
            Path dir = Path.of(last.substring("stopped; deleted ".length()));
            assertThat(dir.getFileName().toString()).startsWith("embedded-kafka-");
            assertThat(Files.exists(dir)).isFalse();
        } finally {
            process.destroyForcibly();
        }
    }

    @Test
    void brokerCommandRefusesAPortOutOfRangeNamingIt() throws Exception {
        Process process = java(ProcessBuilder.Redirect.PIPE, "--port", "70000");
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String err = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.exitValue()).isEqualTo(2);
        assertThat(err).contains("--port must be a port in [0, 65535] but was 70000");
    }

    @Test
    void brokerCommandRefusesAPortInUseInOneLineNamingIt() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            Process process = java(ProcessBuilder.Redirect.PIPE, "--port", String.valueOf(taken.getLocalPort()));
            String err = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(process.exitValue()).isEqualTo(3);
            assertThat(err).contains("port " + taken.getLocalPort() + " on 127.0.0.1 is in use");
            assertThat(err.lines().count()).as("stderr: %s", err).isLessThanOrEqualTo(2);
        }
    }

    @Test
    void demoBrokerHelpNamesThePortOptionAndItsDefault() {
        StringWriter out = new StringWriter();
        int status = new OutboxDemo().execute(new PrintWriter(out), new PrintWriter(new StringWriter()),
                "broker", "--help");
        assertThat(status).isZero();
        assertThat(out.toString()).contains("Usage: demo broker").contains("--port=PORT").contains("Default: 9092");
    }

    @Test
    void demoHelpListsTheBrokerCommand() {
        StringWriter out = new StringWriter();
        new OutboxDemo().execute(new PrintWriter(out), new PrintWriter(new StringWriter()), "--help");
        assertThat(out.toString()).contains("broker");
    }

    private static Process java(ProcessBuilder.Redirect stderr, String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx512m", "-cp", System.getProperty("java.class.path"), BrokerCommand.class.getName()));
        command.addAll(List.of(args));
        return new ProcessBuilder(command).redirectError(stderr).start();
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            return socket.getLocalPort();
        }
    }
}
