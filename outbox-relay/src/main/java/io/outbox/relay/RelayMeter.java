package io.outbox.relay;

import java.util.List;
import java.util.Locale;

/**
 * Every meter {@link MicrometerRelayMetrics} registers (rule O3): its Micrometer name, type, base
 * unit, tag keys, meaning, and the name Prometheus shows. The one place these are declared: the
 * registration, the reference page {@code docs/reference/metrics.md}, and the checks of the alert
 * rules and the dashboard all read them from here.
 *
 * <p>Tags carry only the low-cardinality values listed in {@link #tagKeys()} plus the common tags
 * the application passes (such as {@code outbox=orders}); never keys, message ids, relay ids or
 * payloads (O3). Relays are told apart by the scrape's own labels ({@code instance}, {@code pod}).
 */
public enum RelayMeter {
    /** 1 while the relay runs; relays alive is {@code sum(outbox_relay_up)}. */
    UP("outbox.relay.up", Type.GAUGE, null, List.of(),
            "1 from the relay's start until it stops (closed or on a fatal error), then 0; relays alive is the "
            + "sum over the fleet"),
    /** The configured bucket count, for the fleet's unowned buckets. */
    BUCKETS("outbox.relay.buckets", Type.GAUGE, "buckets", List.of(),
            "the relay's configured bucket count; buckets no live relay owns are this (max over the fleet) minus the "
            + "fleet's sum of owned buckets"),
    /** Buckets this relay holds leases for. */
    OWNED_BUCKETS("outbox.relay.owned.buckets", Type.GAUGE, "buckets", List.of(),
            "buckets this relay holds leases for"),
    /** Messages acknowledged by the broker and deleted from the store. */
    PUBLISHED("outbox.relay.published", Type.COUNTER, "messages", List.of(),
            "messages acknowledged by the broker and deleted from the store (R2)"),
    /** Publishes that left messages unacknowledged, by error type. */
    PUBLISH_FAILURES("outbox.relay.publish.failures", Type.COUNTER, "batches", List.of("type"),
            "publishes that left messages unacknowledged (each is retried); tag `type`: `retriable`, `message` "
            + "(R12), `fatal` (R6) or `fenced` (K6)"),
    /** Message-specific failures by exception class. */
    MESSAGE_FAILURES("outbox.relay.message.failures", Type.COUNTER, "failures", List.of("cause"),
            "message-specific failures (too large, invalid topic or partition, a row that cannot be decoded), "
            + "never broker outages; tag `cause`: the exception's class name, a series from that cause's first "
            + "failure on"),
    /** Failed store calls. */
    STORE_ERRORS("outbox.relay.store.errors", Type.COUNTER, "errors", List.of(),
            "failed store calls (each is retried after a backoff, R3)"),
    /** Messages moved to the dead letters. */
    DEAD_LETTERED("outbox.relay.dead.lettered", Type.COUNTER, "messages", List.of(),
            "messages moved to the store's dead letters (R12, C4)"),
    /** Owned buckets waiting behind a failing head. */
    STALLED_BUCKETS("outbox.relay.stalled.buckets", Type.GAUGE, "buckets", List.of(),
            "owned buckets waiting behind a head with counted message-specific failures"),
    /** Attempts of the head failing longest. */
    FAILING_HEAD_ATTEMPTS("outbox.relay.failing.head.attempts", Type.GAUGE, "attempts", List.of(),
            "counted attempts of the head that has been failing longest; 0 when none"),
    /** Leases that aged out before the relay confirmed them again. */
    LEASE_EXPIRATIONS("outbox.relay.lease.expirations", Type.COUNTER, "buckets", List.of(),
            "held leases that ran out before a store call confirmed them again (R1: the relay stalled or the "
            + "store was slow), or that a renewal found taken (R5)"),
    /** Buckets gained. */
    LEASE_TAKEOVERS("outbox.relay.lease.takeovers", Type.COUNTER, "buckets", List.of(),
            "buckets this relay gained at an acquisition: at its start, by rebalancing, from a relay whose "
            + "leases expired (S6), or again after a store error dropped its lease state (R3)"),
    /** Buckets fenced off by a newer owner. */
    FENCED("outbox.relay.fenced", Type.COUNTER, "buckets", List.of(),
            "publishes refused because a newer owner's producer fenced the bucket (K6); nothing deleted"),
    /** How long each publish took. */
    PUBLISH_DURATION("outbox.relay.publish.duration", Type.TIMER, "seconds", List.of(),
            "from handing a batch to the publisher to its answer, successful or not; histogram"),
    /** How long each pass of the loop took. */
    CYCLE_DURATION("outbox.relay.cycle.duration", Type.TIMER, "seconds", List.of(),
            "one pass of the relay's loop (acquire when due, discover, start tasks), without its idle wait; "
            + "histogram"),
    /** From the message's creation to its acknowledgement. */
    TIME_IN_OUTBOX("outbox.relay.time.in.outbox", Type.TIMER, "seconds", List.of(),
            "from a message's createdAt (the writer's clock) to its deletion after the broker acknowledged it "
            + "(the relay's clock); histogram"),
    /** Pending messages in the whole store. */
    PENDING_MESSAGES("outbox.relay.pending.messages", Type.GAUGE, "messages", List.of(),
            "pending messages in the whole store (C2); NaN while `outbox.relay.pending.available` is 0"),
    /** Age of the oldest pending message. */
    PENDING_OLDEST_AGE("outbox.relay.pending.oldest.age", Type.GAUGE, "seconds", List.of(),
            "age of the oldest pending message (C2); 0 when none, NaN while `outbox.relay.pending.available` is 0"),
    /** Whether the backlog gauges hold a sample. */
    PENDING_AVAILABLE("outbox.relay.pending.available", Type.GAUGE, null, List.of(),
            "1 when the last backlog sample succeeded, 0 when it failed or this relay does not sample (it does not "
            + "own bucket 0 and samples as its owner only, O4): a missing sample never reads as 0"),
    /** Wake-ups received. */
    WAKE_UPS("outbox.relay.wakeups", Type.COUNTER, "wakeups", List.of(),
            "wake-ups received: calls of `wakeUp` after a commit, local or from a notification transport (R8)"),
    /** Discoveries, by whether they found work. */
    POLLS("outbox.relay.polls", Type.COUNTER, "polls", List.of("found"),
            "discoveries of the owned buckets with pending messages (at the poll interval or on a wake-up); tag "
            + "`found`: `true` when some had pending messages"),
    /** Whether the notification transport listens. */
    NOTIFY_CONNECTED("outbox.notify.connected", Type.GAUGE, null, List.of("transport"),
            "1 while the notification transport that wakes the relay listens, 0 while its connection is down or "
            + "not up yet (N6); registered at the transport's first report"),
    /** Listening connections lost. */
    NOTIFY_LOSSES("outbox.notify.connection.losses", Type.COUNTER, "losses", List.of("transport"),
            "times that listening connection was lost after being up (N6)");

    /** How a meter is registered and exposed. */
    public enum Type {
        /** A value that goes up and down. */
        GAUGE,
        /** A count that only goes up; Prometheus adds {@code _total}. */
        COUNTER,
        /** A duration histogram; Prometheus shows {@code _bucket}, {@code _count}, {@code _sum}, {@code _max}. */
        TIMER
    }

    private final String meterName;
    private final Type type;
    private final String baseUnit;
    private final List<String> tagKeys;
    private final String meaning;

    RelayMeter(String meterName, Type type, String baseUnit, List<String> tagKeys, String meaning) {
        this.meterName = meterName;
        this.type = type;
        this.baseUnit = baseUnit;
        this.tagKeys = tagKeys;
        this.meaning = meaning;
    }

    /**
     * The Micrometer name, dotted lower case.
     *
     * @return the name; never null
     */
    public String meterName() {
        return meterName;
    }

    /**
     * The meter's type.
     *
     * @return the type; never null
     */
    public Type type() {
        return type;
    }

    /**
     * The base unit Micrometer registers (timers: seconds, as Prometheus exposes them).
     *
     * @return the unit, or null for a dimensionless gauge (a flag)
     */
    public String baseUnit() {
        return baseUnit;
    }

    /**
     * The meter's own tag keys, besides the application's common tags.
     *
     * @return the keys; never null, immutable, empty when none
     */
    public List<String> tagKeys() {
        return tagKeys;
    }

    /**
     * What the meter means, for the reference page and the meter's description.
     *
     * @return the meaning; never null
     */
    public String meaning() {
        return meaning;
    }

    /**
     * The family name Prometheus shows, as Micrometer's Prometheus registry writes it: dots become
     * underscores, the base unit is appended unless the name ends with it, counters end in
     * {@code _total}; a timer's series add {@code _bucket}, {@code _count}, {@code _sum} and
     * {@code _max} to it.
     *
     * @return the name; never null
     */
    public String prometheusName() {
        String name = meterName.replace('.', '_');
        if (baseUnit != null) {
            String unit = "_" + baseUnit;
            if (!name.endsWith(unit)) {
                name += unit;
            }
        }
        return type == Type.COUNTER ? name + "_total" : name;
    }

    /**
     * The series names Prometheus stores for this meter: the family name, or for a timer its
     * {@code _bucket}, {@code _count}, {@code _sum} and {@code _max} series.
     *
     * @return the names; never null, immutable
     */
    public List<String> prometheusSeries() {
        String name = prometheusName();
        return type == Type.TIMER ? List.of(name + "_bucket", name + "_count", name + "_sum", name + "_max")
                : List.of(name);
    }

    /**
     * The type as the reference page writes it.
     *
     * @return {@code gauge}, {@code counter} or {@code timer}
     */
    String typeName() {
        return type.name().toLowerCase(Locale.ROOT);
    }
}
