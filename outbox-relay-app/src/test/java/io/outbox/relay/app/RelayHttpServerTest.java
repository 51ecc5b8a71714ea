package io.outbox.relay.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.outbox.OutboxMessage;
import io.outbox.relay.internal.Redactor;
import io.outbox.spi.CorruptMessageException;
import io.outbox.spi.DeadLetterFailure;
import io.outbox.spi.DeadLetters;
import io.outbox.spi.LeaseRequest;
import io.outbox.spi.LeaseView;
import io.outbox.spi.OutboxMisconfigurationException;
import io.outbox.spi.OutboxStore;
import io.outbox.tck.InMemoryOutboxStore;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.common.config.types.Password;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The HTTP endpoint in process (rules H1, H2) over the in-memory store: every route, readiness,
 * the token checks, hostile input, and secrets of every form hidden in stored and error text. The process test is {@code StandaloneRelayJarIT}'s.
 */
class RelayHttpServerTest {

    private static final int BUCKETS = 4;
    private static final String TOKEN = "adm1n-t0ken-value";
    private static final String SECRET = "s3cret-db-pass";

    /**
     * A secret in one of the forms the redaction hides, in a stored or error text, and that text
     * as a response must show it.
     *
     * @param form the form's name
     * @param secret the value that must never be served
     * @param text the text holding it
     * @param shown the text with the secret hidden
     */
    private record Secret(String form, String secret, String text, String shown) {
    }

    /**
     * One secret per form: a configured secret value (known to the endpoint's redactor), a URL's
     * password, a credential-named assignment, and the values of two credential-bearing settings
     * by name; each value distinct, so a leak names its form.
     */
    private static final List<Secret> SECRETS = List.of(
            new Secret("configured value", SECRET, "login refused for app with " + SECRET + " at db:5432",
                    "login refused for app with [hidden] at db:5432"),
            new Secret("URL credentials", "url-pw-7731", "cannot reach mongodb://app:url-pw-7731@db:27017/orders",
                    "cannot reach mongodb://app:[hidden]@db:27017/orders"),
            new Secret("password=", "kv-pw-4410", "login failed; password=kv-pw-4410",
                    "login failed; password=[hidden]"),
            new Secret("basic.auth.user.info", "ui-pw-9902", "registry refused basic.auth.user.info=svc:ui-pw-9902",
                    "registry refused basic.auth.user.info=[hidden]"),
            new Secret("bearer.auth.token", "tok-pw-6618", "registry refused bearer.auth.token=tok-pw-6618",
                    "registry refused bearer.auth.token=[hidden]"));

    private final HttpClient client = HttpClient.newHttpClient();
    private final AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-12-02T08:00:00Z"));
    private final Clock clock = new Clock() {
        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now.get();
        }
    };
    private final RelayHealth health = new RelayHealth(clock, Duration.ofSeconds(30));
    private final List<OutboxMessage> messages = new ArrayList<>();
    private final AtomicReference<Boolean> draining = new AtomicReference<>(false);
    private final RelayHttpServer.Drain drain = new RelayHttpServer.Drain() {
        @Override
        public boolean set(boolean on) {
            draining.set(on);
            return true;
        }

        @Override
        public boolean draining() {
            return draining.get();
        }
    };
    private InMemoryOutboxStore store;
    /** What the endpoint calls instead of {@link #store} when set. */
    private volatile OutboxStore served;
    /** Closed while a flood test holds the pool's threads. */
    private volatile java.util.concurrent.CountDownLatch gate = new java.util.concurrent.CountDownLatch(0);

    private OutboxStore store() {
        try {
            gate.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return served != null ? served : store;
    }
    private RelayHttpServer server;

    @BeforeEach
    void setUp() {
        store = InMemoryOutboxStore.builder().build();
        StringSerializer s = new StringSerializer();
        for (int i = 0; i < 4; i++) {
            messages.add(OutboxMessage.create("orders", "key-" + i, "value-" + i, s, s, BUCKETS));
        }
        store.enqueue(messages);
    }

    @AfterEach
    void tearDown() {
        if (server != null) {
            server.close();
        }
    }

    private void start(String token) throws IOException {
        server = new RelayHttpServer(new HttpSettings(0, "127.0.0.1", Duration.ofSeconds(30),
                token == null ? null : new Password(token)), health,
                new RelayHttpServer.Sources(this::store, () -> List.of(0, 1), () -> "# TYPE up gauge\nup 1.0\n",
                        drain),
                Redactor.of(List.of(SECRET)), "relay-a", BUCKETS, Duration.ofSeconds(30));
    }

    private HttpResponse<String> get(String path) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> post(String path, String authorization, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Sends a request line as written, so no client normalises the path. */
    private String raw(String method, String target) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", server.port())) {
            OutputStream out = socket.getOutputStream();
            out.write((method + " " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            InputStream in = socket.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
        }
    }

    private OutboxMessage deadLetter(int index, String reason) {
        OutboxMessage m = messages.get(index);
        Instant at = Instant.now();
        assertThat(store.deadLetters().orElseThrow().moveToDeadLetters(m.bucket(), m.messageId(),
                new DeadLetterFailure(reason, "org.apache.kafka.common.errors.RecordTooLargeException", 3,
                        at.minusSeconds(9), at, "relay-a"))).isTrue();
        return m;
    }

    private static DeadLetterFailure failure(String reason, String relayId) {
        Instant at = Instant.now();
        return new DeadLetterFailure(reason, "java.sql.SQLException", 3, at.minusSeconds(9), at, relayId);
    }

    /** The body holds no secret of any form, and shows each of these texts with its secret hidden. */
    private static void assertHidden(String body, List<Secret> shown) {
        for (Secret s : SECRETS) {
            assertThat(body).as("the %s secret", s.form()).doesNotContain(s.secret());
        }
        for (Secret s : shown) {
            assertThat(body).as("the %s text", s.form()).contains(s.shown());
        }
    }

    /** What a proxy answers: a method call, or the exception it throws. */
    private interface Answer {
        Object call(Method method, Object[] args) throws Exception;
    }

    @SuppressWarnings("unchecked")
    private static <T> T proxy(Class<T> type, Answer answer) {
        return (T) Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (self, method, args) -> {
            if (method.getDeclaringClass() == Object.class) {
                return method.invoke(answer, args);
            }
            try {
                return answer.call(method, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        });
    }

    /** A store whose every call, its dead letters and lease view included, throws this error. */
    private static OutboxStore failingStore(RuntimeException error) {
        return proxy(OutboxStore.class, (method, args) -> switch (method.getName()) {
            case "deadLetters" -> Optional.of(proxy(DeadLetters.class, (m, a) -> {
                throw error;
            }));
            case "leaseView" -> Optional.of(proxy(LeaseView.class, (m, a) -> {
                throw error;
            }));
            default -> throw error;
        });
    }

    @Test
    void h1_liveAnswersAndReadyFollowsLeaseRoundsOutagesAndFatalErrors() throws Exception {
        start(null);
        assertThat(get(HttpRoute.LIVE.path()).statusCode()).isEqualTo(200);
        HttpResponse<String> before = get(HttpRoute.READY.path());
        assertThat(before.statusCode()).isEqualTo(503);
        assertThat(before.body()).contains("no successful lease round yet");

        health.onLeaseRound(List.of(0, 1));
        assertThat(get(HttpRoute.READY.path()).statusCode()).isEqualTo(200);

        health.onStoreError(new IllegalStateException("connection refused"));
        now.set(now.get().plusSeconds(29));
        assertThat(get(HttpRoute.READY.path()).statusCode()).as("within the threshold").isEqualTo(200);
        now.set(now.get().plusSeconds(1));
        HttpResponse<String> storeDown = get(HttpRoute.READY.path());
        assertThat(storeDown.statusCode()).isEqualTo(503);
        assertThat(storeDown.body()).contains("store unreachable for 30000 ms");
        health.onLeaseRound(List.of(0, 1));
        assertThat(get(HttpRoute.READY.path()).statusCode()).isEqualTo(200);

        health.onPublishFailed(0, 0, new TimeoutException("broker"));
        now.set(now.get().plusSeconds(31));
        assertThat(get(HttpRoute.READY.path()).body()).contains("broker unreachable");
        health.onPublished(0, 1);
        assertThat(get(HttpRoute.READY.path()).statusCode()).isEqualTo(200);

        health.onTerminated(new io.outbox.spi.OutboxMisconfigurationException("rows outside the buckets"));
        HttpResponse<String> fatal = get(HttpRoute.READY.path());
        assertThat(fatal.statusCode()).isEqualTo(503);
        assertThat(fatal.body()).contains("fatal error");
    }

    @Test
    void h1_anIdleRelayTurnsNotReadyWhenThePeriodicCheckFindsNoBrokerPastTheThreshold() throws Exception {
        start(null);
        health.onLeaseRound(List.of(0, 1));
        health.brokerAnswered();
        health.brokerSilent("org.apache.kafka.common.errors.TimeoutException");
        now.set(now.get().plusSeconds(29));
        assertThat(get(HttpRoute.READY.path()).statusCode()).as("silent, within the threshold").isEqualTo(200);
        now.set(now.get().plusSeconds(1));
        HttpResponse<String> silent = get(HttpRoute.READY.path());
        assertThat(silent.statusCode()).as("silent for the threshold since the last contact").isEqualTo(503);
        assertThat(silent.body()).contains("broker unreachable for 30000 ms", "periodic check",
                "org.apache.kafka.common.errors.TimeoutException");
        health.brokerAnswered();
        assertThat(get(HttpRoute.READY.path()).statusCode()).as("a broker answered again").isEqualTo(200);
        health.brokerSilent("again");
        now.set(now.get().plusSeconds(40));
        assertThat(get(HttpRoute.READY.path()).statusCode()).isEqualTo(503);
        health.onPublished(0, 1);
        assertThat(get(HttpRoute.READY.path()).statusCode()).as("an acknowledged record is a contact").isEqualTo(200);
    }

    @Test
    void c6_leasesShowEveryBucketsOwnerAndExpiryAndTheRelaysAlive() throws Exception {
        start(null);
        List<Integer> a = store.acquireBucketLeases(new io.outbox.spi.LeaseRequest("relay-a", BUCKETS,
                Duration.ofSeconds(30), List.of()));
        List<Integer> b = store.acquireBucketLeases(new io.outbox.spi.LeaseRequest("relay-b", BUCKETS,
                Duration.ofSeconds(30), List.of()));
        assertThat(a).as("relay-a alone at its first call").hasSize(BUCKETS);
        assertThat(b).as("relay-b waits for relay-a's leases").isEmpty();
        String body = get(HttpRoute.LEASES.path()).body();
        assertThat(body).contains("\"relaysAlive\": 2", "\"relayId\": \"relay-b\", \"lastHeartbeat\": ",
                "\"alive\": true");
        for (int bucket = 0; bucket < BUCKETS; bucket++) {
            assertThat(body).contains("{\"bucket\": " + bucket + ", \"owner\": \"relay-a\", \"expiresAt\": \"");
        }
        assertThat(body).contains("\"held\": true").doesNotContain("\"held\": false", "fleetUnavailable");
    }

    @Test
    void c6_leasesSayWhyTheFleetIsMissingWithoutTheCapability() throws Exception {
        store = null;
        start(null);
        assertThat(get(HttpRoute.LEASES.path()).body()).contains("\"fleet\": null",
                "\"fleetUnavailable\": \"the store is not open yet\"");
    }

    @Test
    void h1_metricsPendingLeasesAndDeadLettersAnswerJson() throws Exception {
        start(null);
        HttpResponse<String> metrics = get(HttpRoute.METRICS.path());
        assertThat(metrics.statusCode()).isEqualTo(200);
        assertThat(metrics.headers().firstValue("Content-Type").orElseThrow()).startsWith("text/plain");
        assertThat(metrics.body()).contains("up 1.0");

        HttpResponse<String> pending = get(HttpRoute.PENDING.path());
        assertThat(pending.statusCode()).isEqualTo(200);
        assertThat(pending.headers().firstValue("Content-Type").orElseThrow()).startsWith("application/json");
        for (OutboxMessage m : messages) {
            assertThat(pending.body()).contains("\"bucket\": " + m.bucket());
        }

        assertThat(get(HttpRoute.LEASES.path()).body()).contains("\"relayId\": \"relay-a\"")
                .contains("\"ownedBuckets\": [0, 1]").contains("\"bucketCount\": 4");

        OutboxMessage dead = deadLetter(0, "too large; jdbc password=" + SECRET);
        HttpResponse<String> list = get(HttpRoute.DEAD_LETTERS.path());
        assertThat(list.statusCode()).isEqualTo(200);
        assertThat(list.body()).contains(dead.messageId().toString()).doesNotContain(SECRET);
        assertThat(get(HttpRoute.DEAD_LETTERS.path() + "?after=" + dead.messageId()).body()).isEqualTo("[]\n");
        assertThat(get(HttpRoute.DEAD_LETTERS.path() + "?limit=0").statusCode()).isEqualTo(400);
        assertThat(get(HttpRoute.DEAD_LETTERS.path() + "?after=nope").statusCode()).isEqualTo(400);

        HttpResponse<String> show = get(HttpRoute.DEAD_LETTER.path(dead.messageId().toString()));
        assertThat(show.statusCode()).isEqualTo(200);
        assertThat(show.body()).contains("\"topic\": \"orders\"").doesNotContain(SECRET);
        assertThat(get(HttpRoute.DEAD_LETTER.path(UUID.randomUUID().toString())).statusCode()).isEqualTo(404);
        assertThat(get(HttpRoute.DEAD_LETTER.path("not-an-id")).statusCode()).isEqualTo(400);
        assertThat(get(HttpRoute.DEAD_LETTER.path(dead.messageId().toString().toUpperCase())).statusCode())
                .as("either case, as the command line").isEqualTo(200);
        assertThat(get(HttpRoute.DEAD_LETTER.path("1-1-1-1-1")).statusCode())
                .as("ids are parsed strictly (MessageIds), not read as another id").isEqualTo(400);
    }

    @Test
    void h1_deadLettersHideASecretOfEveryFormInReasonsAndRelayIds() throws Exception {
        start(null);
        StringSerializer s = new StringSerializer();
        List<OutboxMessage> dead = new ArrayList<>();
        for (int i = 0; i < SECRETS.size(); i++) {
            dead.add(OutboxMessage.create("orders", "dead-" + i, "value", s, s, BUCKETS));
        }
        store.enqueue(dead);
        for (int i = 0; i < SECRETS.size(); i++) {
            String text = SECRETS.get(i).text();
            assertThat(store.deadLetters().orElseThrow().moveToDeadLetters(dead.get(i).bucket(),
                    dead.get(i).messageId(), failure(text, text))).isTrue();
        }

        HttpResponse<String> list = get(HttpRoute.DEAD_LETTERS.path());
        assertThat(list.statusCode()).isEqualTo(200);
        assertHidden(list.body(), SECRETS);
        for (int i = 0; i < SECRETS.size(); i++) {
            Secret secret = SECRETS.get(i);
            HttpResponse<String> show = get(HttpRoute.DEAD_LETTER.path(dead.get(i).messageId().toString()));
            assertThat(show.statusCode()).isEqualTo(200);
            assertHidden(show.body(), List.of(secret));
            assertThat(show.body()).as(secret.form()).contains("\"reason\": \"" + secret.shown() + "\"",
                    "\"relayId\": \"" + secret.shown() + "\"");
        }
    }

    @Test
    void h1_pendingHidesASecretOfEveryFormInTheHeadsLastErrorAndUndecodableHead() throws Exception {
        start(null);
        OutboxMessage head = messages.get(0);
        for (Secret secret : SECRETS) {
            assertThat(store.deadLetters().orElseThrow().recordHeadFailure(head.bucket(), head.messageId(),
                    failure(secret.text(), secret.text()))).isTrue();
            served = proxy(OutboxStore.class, (method, args) -> {
                if (method.getName().equals("nextBatch") && (int) args[0] == head.bucket()) {
                    throw new CorruptMessageException(head.bucket(), head.messageId(), List.of(), secret.text(), null);
                }
                return method.invoke(store, args);
            });
            HttpResponse<String> pending = get(HttpRoute.PENDING.path());
            assertThat(pending.statusCode()).isEqualTo(200);
            assertHidden(pending.body(), List.of(secret));
            assertThat(pending.body()).as(secret.form()).contains(
                    "\"headError\": \"CorruptMessageException: " + secret.shown() + "\"",
                    "\"lastError\": \"java.sql.SQLException: " + secret.shown() + "\"",
                    "\"countedBy\": \"" + secret.shown() + "\"");
        }
    }

    @Test
    void h1_aFailingStoreCallAnswers500NamingTheExceptionClassOnlyOnEveryStoreRoute() throws Exception {
        start(TOKEN);
        String id = messages.get(0).messageId().toString();
        List<String[]> calls = List.of(new String[] {"GET", HttpRoute.PENDING.path()},
                new String[] {"GET", HttpRoute.LEASES.path()}, new String[] {"GET", HttpRoute.DEAD_LETTERS.path()},
                new String[] {"GET", HttpRoute.DEAD_LETTER.path(id)}, new String[] {"POST", HttpRoute.REPLAY.path(id)},
                new String[] {"POST", HttpRoute.PURGE.path(id)});
        for (Secret secret : SECRETS) {
            served = failingStore(new IllegalStateException(secret.text(),
                    new java.sql.SQLException("caused by: " + secret.text())));
            for (String[] call : calls) {
                HttpResponse<String> response = call[0].equals("GET") ? get(call[1])
                        : post(call[1], "Bearer " + TOKEN, "");
                assertThat(response.statusCode()).as("%s %s, %s", call[0], call[1], secret.form()).isEqualTo(500);
                assertHidden(response.body(), List.of());
                assertThat(response.body()).as("the error's text is not served, redacted or not")
                        .isEqualTo("{\"error\": \"store call failed: java.lang.IllegalStateException\"}\n");
            }
        }
    }

    @Test
    void h1_readinessNamesTheKindOfAStoreBrokerOrFatalErrorNeverItsText() throws Exception {
        start(null);
        String text = String.join("; ", SECRETS.stream().map(Secret::text).toList());
        health.onLeaseRound(List.of(0, 1));
        health.onStoreError(new IllegalStateException(text));
        now.set(now.get().plusSeconds(30));
        HttpResponse<String> storeDown = get(HttpRoute.READY.path());
        assertThat(storeDown.statusCode()).isEqualTo(503);
        assertHidden(storeDown.body(), List.of());
        assertThat(storeDown.body()).contains("store unreachable", "java.lang.IllegalStateException");

        health.onLeaseRound(List.of(0, 1));
        health.onPublishFailed(0, 0, new TimeoutException(text));
        now.set(now.get().plusSeconds(30));
        HttpResponse<String> broker = get(HttpRoute.READY.path());
        assertThat(broker.statusCode()).isEqualTo(503);
        assertHidden(broker.body(), List.of());
        assertThat(broker.body()).contains("broker unreachable", TimeoutException.class.getName());

        health.onTerminated(new OutboxMisconfigurationException(text));
        HttpResponse<String> fatal = get(HttpRoute.READY.path());
        assertThat(fatal.statusCode()).isEqualTo(503);
        assertHidden(fatal.body(), List.of());
        assertThat(fatal.body()).contains("fatal error", OutboxMisconfigurationException.class.getName());
    }

    @Test
    void c6_leasesHideASecretOfEveryFormInStoredRelayIds() throws Exception {
        start(null);
        for (Secret secret : SECRETS) {
            store.acquireBucketLeases(new LeaseRequest(secret.text(), BUCKETS, Duration.ofSeconds(30), List.of()));
        }
        HttpResponse<String> leases = get(HttpRoute.LEASES.path());
        assertThat(leases.statusCode()).isEqualTo(200);
        assertHidden(leases.body(), SECRETS);
        assertThat(leases.body()).contains("\"owner\": \"" + SECRETS.get(0).shown() + "\"");
    }

    @Test
    void h2_writeOperationsAreOffWithoutAToken() throws Exception {
        start(null);
        OutboxMessage dead = deadLetter(1, "too large");
        HttpResponse<String> replay = post(HttpRoute.REPLAY.path(dead.messageId().toString()), "Bearer x", "");
        assertThat(replay.statusCode()).isEqualTo(404);
        assertThat(replay.body()).contains("http.admin.token is not set");
        assertThat(store.deadLetters().orElseThrow().deadLetter(dead.messageId())).isPresent();
    }

    @Test
    void h2_writeOperationsNeedTheRightTokenAndChangeNothingOtherwise() throws Exception {
        start(TOKEN);
        OutboxMessage dead = deadLetter(1, "too large");
        String replay = HttpRoute.REPLAY.path(dead.messageId().toString());
        assertThat(post(replay, null, "").statusCode()).isEqualTo(401);
        assertThat(post(replay, "Basic " + TOKEN, "").statusCode()).isEqualTo(401);
        assertThat(post(replay, "Bearer wrong", "").statusCode()).isEqualTo(403);
        assertThat(post(replay, "Bearer " + TOKEN + "x", "").statusCode()).isEqualTo(403);
        assertThat(post(replay, "Bearer " + TOKEN, "x".repeat(RelayHttpServer.MAX_BODY_BYTES + 1)).statusCode())
                .isEqualTo(413);
        assertThat(post(HttpRoute.REPLAY.path("../../x"), "Bearer " + TOKEN, "").statusCode()).isIn(400, 404);
        assertThat(post(HttpRoute.REPLAY.path("1234"), "Bearer " + TOKEN, "").statusCode()).isEqualTo(400);
        assertThat(post(HttpRoute.REPLAY.path(UUID.randomUUID().toString()), "Bearer " + TOKEN, "").statusCode())
                .isEqualTo(404);
        assertThat(get(replay).statusCode()).isEqualTo(405);
        assertThat(store.deadLetters().orElseThrow().deadLetter(dead.messageId())).as("nothing changed").isPresent();

        HttpResponse<String> ok = post(replay, "Bearer " + TOKEN, "");
        assertThat(ok.statusCode()).isEqualTo(200);
        assertThat(ok.body()).contains("replayed");
        assertThat(store.deadLetters().orElseThrow().deadLetter(dead.messageId())).isEmpty();
        assertThat(store.pendingBuckets()).contains(dead.bucket());

        assertThat(post(HttpRoute.DRAIN.path(), "Bearer wrong", "").statusCode()).isEqualTo(403);
        assertThat(draining.get()).isFalse();
        assertThat(post(HttpRoute.DRAIN.path(), "Bearer " + TOKEN, "").statusCode()).isEqualTo(202);
        assertThat(draining.get()).isTrue();
        assertThat(get(HttpRoute.LEASES.path()).body()).contains("\"draining\": true");
        assertThat(post(HttpRoute.RESUME.path(), "Bearer " + TOKEN, "").statusCode()).isEqualTo(202);
        assertThat(draining.get()).isFalse();

        OutboxMessage other = deadLetter(2, "too large");
        assertThat(post(HttpRoute.PURGE.path(other.messageId().toString()), "Bearer " + TOKEN, "").statusCode())
                .isEqualTo(200);
        assertThat(store.deadLetters().orElseThrow().deadLetter(other.messageId())).isEmpty();
    }

    @Test
    void h2_pathTricksUnknownPathsAndMethodsGetAClear4xx() throws Exception {
        start(TOKEN);
        OutboxMessage dead = deadLetter(3, "too large");
        for (String target : List.of("/dead-letters/../x", "/dead-letters/%2e%2e/x", "/health%2Flive",
                "/dead-letters/" + dead.messageId() + "%2Fpurge", "/health//live", "/health/./live")) {
            assertThat(raw("GET", target)).as(target).startsWith("HTTP/1.1 400");
        }
        assertThat(raw("POST", "/dead-letters/" + dead.messageId() + "%2Fpurge")).startsWith("HTTP/1.1 400");
        assertThat(raw("GET", "/nothing")).startsWith("HTTP/1.1 404");
        assertThat(raw("GET", "//health/live")).as("read as an authority, path /live").startsWith("HTTP/1.1 404");
        assertThat(raw("GET", "//leases")).as("read as an authority, empty path").startsWith("HTTP/1.1 404");
        assertThat(raw("GET", "//")).as("an empty authority: not a URI").startsWith("HTTP/1.1 400");
        assertThat(raw("GET", "/health/live/")).startsWith("HTTP/1.1 404");
        assertThat(raw("DELETE", "/dead-letters/" + dead.messageId())).startsWith("HTTP/1.1 405");
        assertThat(raw("BREW", "/health/live")).startsWith("HTTP/1.1 405");
        assertThat(store.deadLetters().orElseThrow().deadLetter(dead.messageId())).isPresent();
    }

    @Test
    void h2_aFloodGets503AtOnceBeyondTheBoundAndTheAdmittedRequestsAreAnswered() throws Exception {
        start(null);
        gate = new java.util.concurrent.CountDownLatch(1);
        List<java.util.concurrent.CompletableFuture<HttpResponse<String>>> admitted = new ArrayList<>();
        for (int i = 0; i < RelayHttpServer.MAX_IN_FLIGHT; i++) {
            admitted.add(client.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port()
                    + HttpRoute.PENDING.path())).build(), HttpResponse.BodyHandlers.ofString()));
        }
        // The pool's threads wait on the gate with the queue full: the next requests are refused at once.
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> raw("GET",
                HttpRoute.METRICS.path()).startsWith("HTTP/1.1 503"));
        long start = System.nanoTime();
        int refused = 0;
        for (int i = 0; i < 50; i++) {
            if (raw("GET", HttpRoute.DEAD_LETTERS.path()).startsWith("HTTP/1.1 503")) {
                refused++;
            }
        }
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertThat(refused).isEqualTo(50);
        assertThat(millis).as("50 refusals take %d ms", millis).isLessThan(5_000);
        assertThat(raw("GET", HttpRoute.LIVE.path())).as("the probes are answered beside the pool")
                .startsWith("HTTP/1.1 200");
        health.onLeaseRound(List.of());
        assertThat(raw("GET", HttpRoute.READY.path())).startsWith("HTTP/1.1 200");
        gate.countDown();
        for (var response : admitted) {
            assertThat(response.get(10, java.util.concurrent.TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        }
        assertThat(get(HttpRoute.LIVE.path()).statusCode()).isEqualTo(200);
    }

    @Test
    void h1_theDocsTableIsTheRouteList() throws IOException {
        String page = java.nio.file.Files.readString(java.nio.file.Path.of("..", "docs", "standalone-relay.md"));
        assertThat(page).as("docs/standalone-relay.md shows HttpRoute.table()").contains(HttpRoute.table());
        for (HttpRoute route : HttpRoute.values()) {
            assertThat(page).contains("`" + route.path() + "`");
        }
    }
}
