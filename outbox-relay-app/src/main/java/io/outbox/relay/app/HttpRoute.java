package io.outbox.relay.app;

/**
 * The standalone relay's HTTP endpoints (rules H1, H2), one place for the server, its tests and
 * the endpoint table in {@code docs/standalone-relay.md}, which a test checks against this list.
 */
enum HttpRoute {
    /** Liveness. */
    LIVE("GET", "/health/live", false, "200 while the process runs; for a liveness probe"),
    /** Readiness. */
    READY("GET", "/health/ready", false, "200 after the first successful lease round; 503 before it, while the "
            + "store or the broker has been unreachable longer than http.ready.unreachable.threshold.ms, or after a "
            + "fatal error; a JSON body says why"),
    /** Prometheus metrics. */
    METRICS("GET", "/metrics", false, "the relay's meters in Prometheus text format"),
    /** Pending messages per bucket. */
    PENDING("GET", "/pending", false, "per bucket with pending messages: count (up to 10000), head message id and "
            + "age, head attempts and last error, as `outbox-relay pending --json`"),
    /** This relay's leases. */
    LEASES("GET", "/leases", false, "this relay's id, bucket count, owned buckets, readiness and whether it drains, and "
            + "under `fleet` every bucket's owner and expiry and every relay's last heartbeat (alive: younger than "
            + "relay.lease.duration.ms) as the store holds them (capability C6; as `outbox-relay leases --json`)"),
    /** Dead letters, paged. */
    DEAD_LETTERS("GET", "/dead-letters", false, "dead letters in message id order, `?after=<id>&limit=<1..1000>`, "
            + "as `outbox-relay dead-letters list --json`"),
    /** One dead letter. */
    DEAD_LETTER("GET", "/dead-letters/{id}", false, "one dead letter, as `outbox-relay dead-letters show --json`"),
    /** Replay one dead letter. */
    REPLAY("POST", "/dead-letters/{id}/replay", true, "put the dead letter back into its bucket"),
    /** Purge one dead letter. */
    PURGE("POST", "/dead-letters/{id}/purge", true, "delete the dead letter for good"),
    /** Drain the relay. */
    DRAIN("POST", "/drain", true, "give the leases back (once publishes in flight end) and take none until "
            + "resumed; peers take the buckets at their next lease round (H3)"),
    /** Resume after a drain. */
    RESUME("POST", "/resume", true, "take a fair share of the buckets again at the next lease round");

    private final String method;
    private final String path;
    private final boolean write;
    private final String meaning;

    HttpRoute(String method, String path, boolean write, String meaning) {
        this.method = method;
        this.path = path;
        this.write = write;
        this.meaning = meaning;
    }

    /** @return the HTTP method */
    String method() {
        return method;
    }

    /** @return the path; {@code {id}} stands for a message id */
    String path() {
        return path;
    }

    /** @return whether the route changes something and needs {@code http.admin.token} (H2) */
    boolean write() {
        return write;
    }

    /** @return what it answers, for the docs table */
    String meaning() {
        return meaning;
    }

    /**
     * The path with a message id in place of {@code {id}}.
     *
     * @param id the message id text
     * @return the path
     */
    String path(String id) {
        return path.replace("{id}", id);
    }

    /**
     * The endpoint table of {@code docs/standalone-relay.md}.
     *
     * @return Markdown rows with a header
     */
    static String table() {
        StringBuilder s = new StringBuilder("| method | path | token | answers |\n|---|---|---|---|\n");
        for (HttpRoute route : values()) {
            s.append("| ").append(route.method).append(" | `").append(route.path).append("` | ")
                    .append(route.write ? "yes" : "no").append(" | ").append(route.meaning).append(" |\n");
        }
        return s.toString();
    }
}
