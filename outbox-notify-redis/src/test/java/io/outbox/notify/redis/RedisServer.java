package io.outbox.notify.redis;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A redis-server of the test's own on a free port (never the shared one on 6379), which the test
 * may stop and start again on the same port. The binary is {@code OUTBOX_TEST_REDIS_SERVER} or
 * {@code redis-server} from the path.
 */
final class RedisServer implements AutoCloseable {

    private final int port;
    private final Path dir;
    private Process process;

    RedisServer() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        dir = Files.createTempDirectory("outbox-redis");
        start();
    }

    static String binary() {
        String configured = System.getenv("OUTBOX_TEST_REDIS_SERVER");
        return configured == null || configured.isBlank() ? "redis-server" : configured;
    }

    String uri() {
        return "redis://127.0.0.1:" + port;
    }

    int port() {
        return port;
    }

    synchronized void start() throws IOException {
        process = new ProcessBuilder(binary(), "--port", String.valueOf(port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no", "--dir", dir.toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("redis.log").toFile()).start();
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!accepts()) {
            if (System.nanoTime() > deadline || !process.isAlive()) {
                throw new IOException("redis-server did not open port " + port + "; see " + dir.resolve("redis.log"));
            }
            sleep(20);
        }
    }

    synchronized void stop() throws InterruptedException {
        if (process != null) {
            process.destroy();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor();
            }
            process = null;
        }
    }

    private boolean accepts() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 200);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        try {
            stop();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
