package io.outbox.relay.app;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.outbox.MessageIds;
import io.outbox.relay.internal.Redactor;
import io.outbox.spi.DeadLetter;
import io.outbox.spi.DeadLetters;
import io.outbox.spi.LeaseView;
import io.outbox.spi.OutboxStore;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The standalone relay's HTTP endpoint (rules H1, H2) on the JDK's {@link HttpServer}: health,
 * readiness, Prometheus metrics, read-only JSON on pending messages, leases and dead letters, and,
 * with {@code http.admin.token} set, replay and purge of dead letters, drain and resume. The
 * server's dispatcher thread answers the probes and admits other requests: beyond
 * {@value #MAX_IN_FLIGHT} running or
 * queued it answers 503 at once; otherwise the request runs on a small bounded pool
 * ({@value #THREADS} threads, {@value #QUEUE} queued), so a flood costs the relay at most
 * {@value #THREADS} threads. Paths are matched as sent, not decoded:
 * an encoded character or a dot segment is refused with 400. Stored text goes through the
 * {@link Redactor} the operator commands use.
 */
final class RelayHttpServer implements AutoCloseable {

    /** Threads serving requests. */
    static final int THREADS = 2;
    /** Requests waiting for a thread. */
    static final int QUEUE = 32;
    /** Requests in flight (running or queued) beyond which a request gets 503 at once. */
    static final int MAX_IN_FLIGHT = THREADS + QUEUE;
    /** The largest request body read, in bytes; a larger one gets 413. */
    static final int MAX_BODY_BYTES = 1024;
    /** The most messages {@code /pending} counts per bucket. */
    static final int PENDING_MAX_COUNT = 10_000;

    private static final Logger LOG = LoggerFactory.getLogger(RelayHttpServer.class);
    private static final String JSON = "application/json; charset=utf-8";

    /**
     * What the endpoint reads from the running relay.
     *
     * @param store the store once opened, else null
     * @param ownedBuckets this relay's owned buckets, ascending
     * @param metrics the Prometheus text of the relay's meters
     * @param drain drains or resumes the relay
     */
    record Sources(Supplier<OutboxStore> store, Supplier<List<Integer>> ownedBuckets, Supplier<String> metrics,
                   Drain drain) {
    }

    /** Drains and resumes the relay (H3). */
    interface Drain {
        /**
         * Starts or ends a drain.
         *
         * @param on true to drain, false to resume
         * @return false when there is no relay yet (the store is not open)
         */
        boolean set(boolean on);

        /** @return whether the relay drains */
        boolean draining();
    }

    private final HttpServer server;
    private final ThreadPoolExecutor executor;
    private final HttpSettings settings;
    private final RelayHealth health;
    private final Sources sources;
    private final Redactor redactor;
    private final String relayId;
    private final int bucketCount;
    private final Duration leaseDuration;
    private final AtomicInteger inFlight = new AtomicInteger();

    /**
     * Binds the endpoint and starts serving.
     *
     * @param settings the HTTP settings, enabled; not null
     * @param health the relay's readiness; not null
     * @param sources what the endpoints read; not null
     * @param redactor hides the configuration's secrets in stored text; not null
     * @param relayId the relay's id
     * @param bucketCount the relay's bucket count
     * @param leaseDuration the relay's lease duration: a relay of {@code /leases} is alive while its
     *     heartbeat is younger
     * @throws IOException if the address cannot be bound
     */
    RelayHttpServer(HttpSettings settings, RelayHealth health, Sources sources, Redactor redactor, String relayId,
                    int bucketCount, Duration leaseDuration) throws IOException {
        this.settings = settings;
        this.health = health;
        this.sources = sources;
        this.redactor = redactor;
        this.relayId = relayId;
        this.bucketCount = bucketCount;
        this.leaseDuration = leaseDuration;
        this.executor = new ThreadPoolExecutor(THREADS, THREADS, 0, TimeUnit.MILLISECONDS,
                new ArrayBlockingQueue<>(QUEUE), r -> {
                    Thread t = new Thread(r, "outbox-relay-http");
                    t.setDaemon(true);
                    return t;
                }, new ThreadPoolExecutor.AbortPolicy());
        this.server = HttpServer.create(new InetSocketAddress(settings.bindAddress(), settings.port()), 64);
        server.createContext("/", this::admit);
        // No executor: admit runs on the dispatcher thread and hands the request to the pool.
        server.start();
        LOG.info("HTTP endpoint listening address={} port={} writeOperations={}", settings.bindAddress(), port(),
                settings.adminToken() != null);
    }

    /** @return the port bound, useful with {@code http.port=0} */
    int port() {
        return server.getAddress().getPort();
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }

    /**
     * Dispatcher thread: the probes are answered here (cheap, no store call), so a flood never
     * fails them; other requests get 503 at once when the pool is full, else are queued on it.
     */
    private void admit(HttpExchange exchange) throws IOException {
        String path = exchange.getRequestURI().getRawPath();
        if (HttpRoute.LIVE.path().equals(path) || HttpRoute.READY.path().equals(path)) {
            handle(exchange);
            return;
        }
        if (inFlight.incrementAndGet() > MAX_IN_FLIGHT) {
            inFlight.decrementAndGet();
            try (exchange) {
                send(exchange, 503, error("too many requests in flight; retry later"));
            }
            return;
        }
        try {
            executor.execute(() -> {
                try {
                    handle(exchange);
                } finally {
                    inFlight.decrementAndGet();
                }
            });
        } catch (RejectedExecutionException e) {
            inFlight.decrementAndGet();
            try (exchange) {
                send(exchange, 503, error("the endpoint is stopping"));
            }
        }
    }

    /**
     * A pool thread (or the dispatcher for the probes): answers one request, then closes the
     * exchange. A failing call answers 500 naming the exception's class only, never its message
     * (H1); the message goes to the log through the {@link Redactor}.
     */
    private void handle(HttpExchange exchange) {
        try (exchange) {
            try {
                route(exchange);
            } catch (RuntimeException e) {
                LOG.warn("HTTP request failed method={} error={}", exchange.getRequestMethod(),
                        redactor.oneLine(RelayRunner.causes(e)));
                // Answered inside the try: once the exchange is closed, nothing can be sent.
                send(exchange, 500, error("store call failed: " + e.getClass().getName()));
            }
        } catch (IOException | RuntimeException e) {
            // the client went away, or the headers were sent already; the connection closes
            LOG.debug("HTTP response not sent: {}", redactor.oneLine(e.toString()));
        }
    }

    private void route(HttpExchange exchange) throws IOException {
        String path = exchange.getRequestURI().getRawPath();
        String method = exchange.getRequestMethod();
        if (path == null || path.contains("%") || path.contains("//") || path.contains("/./")
                || path.contains("/../") || path.endsWith("/.") || path.endsWith("/..")) {
            send(exchange, 400, error("the path must be plain: no encoded characters, no empty or dot segments"));
            return;
        }
        String[] segments = path.substring(1).split("/", -1);
        HttpRoute route = match(segments);
        if (route == null) {
            send(exchange, 404, error("no such endpoint"));
            return;
        }
        if (!route.method().equals(method)) {
            exchange.getResponseHeaders().set("Allow", route.method());
            send(exchange, 405, error("method " + method + " is not allowed here; use " + route.method()));
            return;
        }
        if (route.write()) {
            write(exchange, route, segments.length > 1 ? segments[1] : null);
            return;
        }
        switch (route) {
            case LIVE -> send(exchange, 200, "{\"status\": \"UP\"}");
            case READY -> {
                RelayHealth.Readiness readiness = health.readiness();
                send(exchange, readiness.ready() ? 200 : 503, "{\"status\": " + (readiness.ready() ? "\"UP\"" : "\"DOWN\"")
                        + ", \"reason\": " + OperatorCommand.quote(readiness.reason()) + "}");
            }
            case METRICS -> send(exchange, 200, sources.metrics().get(), "text/plain; version=0.0.4; charset=utf-8");
            case PENDING -> withStore(exchange, store -> PendingCommand.json(PendingCommand.rows(store, bucketCount,
                    PENDING_MAX_COUNT, Instant.now()), redactor));
            case LEASES -> send(exchange, 200, leases());
            case DEAD_LETTERS -> deadLetters(exchange);
            case DEAD_LETTER -> deadLetter(exchange, segments[1]);
            default -> send(exchange, 404, error("no such endpoint"));
        }
    }

    /** The route of a path's segments, or null. */
    private static HttpRoute match(String[] segments) {
        String joined = "/" + String.join("/", segments);
        for (HttpRoute route : HttpRoute.values()) {
            if (!route.path().contains("{id}") && route.path().equals(joined)) {
                return route;
            }
        }
        if (segments.length >= 2 && segments[0].equals("dead-letters") && !segments[1].isEmpty()) {
            if (segments.length == 2) {
                return HttpRoute.DEAD_LETTER;
            }
            if (segments.length == 3 && segments[2].equals("replay")) {
                return HttpRoute.REPLAY;
            }
            if (segments.length == 3 && segments[2].equals("purge")) {
                return HttpRoute.PURGE;
            }
        }
        return null;
    }

    private String leases() {
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put("relayId", OperatorCommand.jsonText(redactor, relayId));
        fields.put("bucketCount", Integer.toString(bucketCount));
        fields.put("ownedBuckets", sources.ownedBuckets().get().toString());
        fields.put("ready", Boolean.toString(health.readiness().ready()));
        fields.put("draining", Boolean.toString(sources.drain().draining()));
        OutboxStore store = sources.store().get();
        Optional<LeaseView> view = store == null ? Optional.empty() : store.leaseView();
        fields.put("fleet", view.isEmpty() ? "null"
                : LeasesCommand.fleetJson(view.get().leaseTable(bucketCount), leaseDuration, redactor));
        if (view.isEmpty()) {
            fields.put("fleetUnavailable", OperatorCommand.quote(store == null ? "the store is not open yet"
                    : "the store offers no LeaseView (capability C6)"));
        }
        return OperatorCommand.object(fields);
    }

    private void deadLetters(HttpExchange exchange) throws IOException {
        Map<String, String> query = query(exchange.getRequestURI().getRawQuery());
        if (query == null) {
            send(exchange, 400, error("malformed query; use after=<message id>&limit=<1..1000>"));
            return;
        }
        UUID after = null;
        if (query.containsKey("after")) {
            after = MessageIds.parseOrNull(query.get("after"));
            if (after == null) {
                send(exchange, 400, error("after is not a message id: " + shownId(query.get("after"))));
                return;
            }
        }
        int limit = 100;
        if (query.containsKey("limit")) {
            String text = query.get("limit");
            limit = text.matches("[0-9]{1,4}") ? Integer.parseInt(text) : -1;
            if (limit < 1 || limit > 1000) {
                send(exchange, 400, error("limit must be in [1, 1000] but was " + shownId(text)));
                return;
            }
        }
        UUID start = after;
        int count = limit;
        withDeadLetters(exchange, dead -> DeadLettersCommand.listJson(dead.deadLetters(start, count), redactor));
    }

    private void deadLetter(HttpExchange exchange, String idText) throws IOException {
        UUID id = MessageIds.parseOrNull(idText);
        if (id == null) {
            send(exchange, 400, error("not a message id: " + shownId(idText)));
            return;
        }
        DeadLetters dead = deadLettersOrAnswer(exchange);
        if (dead == null) {
            return;
        }
        Optional<DeadLetter> found = dead.deadLetter(id);
        if (found.isEmpty()) {
            send(exchange, 404, error("no dead letter with message id " + id));
            return;
        }
        send(exchange, 200, DeadLettersCommand.showJson(found.get(), redactor));
    }

    /** H2: token first (404 when none is configured, 401 without, 403 wrong), then body, id, action. */
    private void write(HttpExchange exchange, HttpRoute route, String idText) throws IOException {
        if (settings.adminToken() == null) {
            send(exchange, 404, error("write operations are off: http.admin.token is not set"));
            return;
        }
        String authorization = exchange.getRequestHeaders().getFirst("Authorization");
        if (authorization == null || !authorization.startsWith("Bearer ")) {
            exchange.getResponseHeaders().set("WWW-Authenticate", "Bearer");
            send(exchange, 401, error("send the admin token as 'Authorization: Bearer <token>'"));
            return;
        }
        byte[] given = authorization.substring("Bearer ".length()).getBytes(StandardCharsets.UTF_8);
        if (!MessageDigest.isEqual(given, settings.adminToken().value().getBytes(StandardCharsets.UTF_8))) {
            send(exchange, 403, error("wrong admin token"));
            return;
        }
        if (!bodyWithin(exchange)) {
            send(exchange, 413, error("request body larger than " + MAX_BODY_BYTES + " bytes"));
            return;
        }
        if (route == HttpRoute.DRAIN || route == HttpRoute.RESUME) {
            boolean on = route == HttpRoute.DRAIN;
            if (!sources.drain().set(on)) {
                send(exchange, 503, error("the relay is not running yet"));
                return;
            }
            LOG.info("HTTP {} relayId={}", on ? "drain: no lease taken until resumed" : "resume", relayId);
            send(exchange, 202, OperatorCommand.object(Map.of("draining", Boolean.toString(on))));
            return;
        }
        UUID id = MessageIds.parseOrNull(idText);
        if (id == null) {
            send(exchange, 400, error("not a message id: " + shownId(idText)));
            return;
        }
        DeadLetters dead = deadLettersOrAnswer(exchange);
        if (dead == null) {
            return;
        }
        boolean done = route == HttpRoute.REPLAY ? dead.replayDeadLetter(id) : dead.purgeDeadLetter(id);
        String result = route == HttpRoute.REPLAY ? "replayed" : "purged";
        if (!done) {
            send(exchange, 404, error("no dead letter with message id " + id));
            return;
        }
        LOG.info("HTTP {} dead letter messageId={}", result, id);
        send(exchange, 200, OperatorCommand.object(Map.of("messageId", OperatorCommand.quote(id.toString()),
                "result", OperatorCommand.quote(result))));
    }

    /** Reads at most {@link #MAX_BODY_BYTES} + 1 bytes; false when the body is larger. */
    private static boolean bodyWithin(HttpExchange exchange) throws IOException {
        try (InputStream body = exchange.getRequestBody()) {
            return body.readNBytes(MAX_BODY_BYTES + 1).length <= MAX_BODY_BYTES;
        }
    }

    private interface StoreCall {
        String json(OutboxStore store);
    }

    private interface DeadLettersCall {
        String json(DeadLetters deadLetters);
    }

    private void withStore(HttpExchange exchange, StoreCall call) throws IOException {
        OutboxStore store = sources.store().get();
        if (store == null) {
            send(exchange, 503, error("the store is not open yet"));
            return;
        }
        send(exchange, 200, call.json(store));
    }

    private void withDeadLetters(HttpExchange exchange, DeadLettersCall call) throws IOException {
        DeadLetters dead = deadLettersOrAnswer(exchange);
        if (dead == null) {
            return;
        }
        send(exchange, 200, call.json(dead));
    }

    /** The store's dead letters, or null after answering 503 (store not open) or 501 (no C4). */
    private DeadLetters deadLettersOrAnswer(HttpExchange exchange) throws IOException {
        OutboxStore store = sources.store().get();
        if (store == null) {
            send(exchange, 503, error("the store is not open yet"));
            return null;
        }
        Optional<DeadLetters> dead = store.deadLetters();
        if (dead.isEmpty()) {
            send(exchange, 501, error("the store has no dead letters (capability C4)"));
            return null;
        }
        return dead.get();
    }

    /** Query parameters, or null when malformed (a parameter twice, no '=', an encoded character). */
    private static Map<String, String> query(String raw) {
        Map<String, String> params = new LinkedHashMap<>();
        if (raw == null || raw.isEmpty()) {
            return params;
        }
        for (String pair : raw.split("&", -1)) {
            int eq = pair.indexOf('=');
            if (eq <= 0 || pair.contains("%") || params.put(pair.substring(0, eq), pair.substring(eq + 1)) != null) {
                return null;
            }
        }
        return params;
    }

    /** A client's text for an error: cut, quoted and escaped. */
    private static String shownId(String text) {
        return OperatorCommand.quote(text.length() > 40 ? text.substring(0, 40) + "..." : text);
    }

    private static String error(String message) {
        return "{\"error\": " + OperatorCommand.quote(message) + "}";
    }

    private static void send(HttpExchange exchange, int status, String body) throws IOException {
        send(exchange, status, body, JSON);
    }

    private static void send(HttpExchange exchange, int status, String body, String contentType) throws IOException {
        byte[] bytes = (body + (body.endsWith("\n") ? "" : "\n")).getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", contentType);
        exchange.getResponseHeaders().set("Cache-Control", "no-store");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }
}
