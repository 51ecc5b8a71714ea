package io.outbox.relay.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy on 127.0.0.1 that a test can freeze: {@link #freeze()} stops forwarding bytes in
 * both directions on every connection, old and new, without closing either socket, so neither
 * peer gets a FIN or an RST: what a peer sees of a NAT or firewall that dropped the flow, a hung
 * proxy or a pulled cable. (The proxy's own kernel still acknowledges at the TCP level, so only a
 * round trip of the application notices.) {@link #thaw()} forwards again, the bytes held
 * meanwhile included. New connections are accepted while frozen, their bytes held too.
 *
 * <p>Two daemon threads per connection; thread-safe. Closing closes every socket.
 */
public final class FreezingProxy implements AutoCloseable {

    private final InetSocketAddress target;
    private final ServerSocket server;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final AtomicInteger accepted = new AtomicInteger();
    private final Object gate = new Object();
    private boolean frozen;
    private volatile boolean closed;

    /**
     * Starts forwarding to the target.
     *
     * @param targetHost the server's host
     * @param targetPort the server's port
     * @throws IOException if no local port can be bound
     */
    public FreezingProxy(String targetHost, int targetPort) throws IOException {
        this.target = new InetSocketAddress(targetHost, targetPort);
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        daemon(this::accept, "freezing-proxy-accept-" + port()).start();
    }

    /** The local port clients connect to instead of the target's. */
    public int port() {
        return server.getLocalPort();
    }

    /** Connections accepted so far. */
    public int accepted() {
        return accepted.get();
    }

    /** Stops forwarding in both directions; no socket is closed. */
    public void freeze() {
        synchronized (gate) {
            frozen = true;
        }
    }

    /** Forwards again, starting with what was held. */
    public void thaw() {
        synchronized (gate) {
            frozen = false;
            gate.notifyAll();
        }
    }

    private void accept() {
        while (!closed) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                return; // closed
            }
            accepted.incrementAndGet();
            Socket upstream = new Socket();
            try {
                upstream.connect(target, 5_000);
            } catch (IOException e) {
                closeQuietly(client);
                closeQuietly(upstream);
                continue;
            }
            sockets.add(client);
            sockets.add(upstream);
            String name = "freezing-proxy-" + port() + "-" + accepted.get();
            daemon(() -> pump(client, upstream), name + "-up").start();
            daemon(() -> pump(upstream, client), name + "-down").start();
        }
    }

    private void pump(Socket from, Socket to) {
        byte[] buffer = new byte[8192];
        try {
            InputStream in = from.getInputStream(); // closing the stream would close the socket: left to close()
            OutputStream out = to.getOutputStream();
            int n;
            while ((n = in.read(buffer)) >= 0) {
                awaitThawed();
                out.write(buffer, 0, n);
                out.flush();
            }
            awaitThawed();
            to.shutdownOutput(); // pass the end of stream on, as the peer sent it
        } catch (IOException | InterruptedException e) {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    private void awaitThawed() throws InterruptedException {
        synchronized (gate) {
            while (frozen && !closed) {
                gate.wait();
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        thaw();
        closeQuietly(server);
        sockets.forEach(FreezingProxy::closeQuietly);
    }

    private static Thread daemon(Runnable body, String name) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        return t;
    }

    private static void closeQuietly(AutoCloseable closeable) {
        try {
            closeable.close();
        } catch (Exception e) {
            // already closed
        }
    }
}
