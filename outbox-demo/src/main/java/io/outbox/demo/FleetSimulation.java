package io.outbox.demo;

import io.outbox.OutboxBucket;
import io.outbox.spi.LeaseRelease;
import io.outbox.spi.LeaseRequest;
import io.outbox.spi.OutboxStore;
import io.outbox.spi.support.BucketLease;
import io.outbox.spi.support.FairShare;
import io.outbox.tck.InMemoryOutboxStore;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * A fleet of simulated relays on one shared store, in simulated time: the scale (100 relays,
 * 65,536 buckets) no single test machine can run as real processes (rules S4, S4b, S6, S7, S13),
 * and churn that would take hours of real relays crashing and restarting ({@link #churn}, R14).
 *
 * <p>What runs is the shipped lease code: every acquisition is the store's own
 * {@link OutboxStore#acquireBucketLeases} (for the {@link InMemoryOutboxStore}, the shared
 * {@code LeaseAcquisition} recipe and {@code LeasePlan}); a graceful stop is the store's
 * {@link LeaseRelease#releaseBucketLeases}. What is simulated is the relay engine's schedule, as
 * {@code RelayLoop} and {@code LeaseTable} of outbox-relay run it for an idle relay: an
 * acquisition at start, then one every renew interval counted from the clock reading taken before
 * the previous one, with {@link LeaseRequest#heldBuckets()} set to what the previous call
 * returned and no busy buckets; and, while it holds buckets, one {@link OutboxStore#bucketsWithPending}
 * over them every poll interval (the engine's discovery). The engine itself is not run: its
 * threads wait on {@link System#nanoTime()}, which simulated time cannot drive.
 *
 * <p>Time: one simulated timeline; each relay has its own clock, the timeline plus a fixed offset
 * drawn from {@code [-maxClockOffset, +maxClockOffset]} (S13: offsets are irrelevant, rates
 * equal). The store is built over a clock that reads the calling relay's clock, so every lease
 * time a relay writes comes from its own clock. Store latency: within one call, every clock
 * reading after the first is {@code storeLatency} later than the first (the answer of a read
 * arrives that much later, so a value counts as first seen no earlier than the reply). Calls run
 * one after another, in simulated-time order, each atomically; concurrent calls whose reads and
 * writes interleave are the business of the kit's race tests, not of this simulation.
 *
 * <p>A <em>round</em> is one renew interval: every live relay acquires once per round. The
 * fleet is <em>converged</em> when every bucket is held by exactly one live relay, as the
 * relays' last acquisitions returned, and every live relay holds exactly its {@link FairShare}.
 * A bucket <em>moves</em> when an acquisition returns it to a relay that did not hold it before.
 * A bucket is <em>unowned</em> while no live relay's last acquisition returned it.
 *
 * <p>Not thread-safe: one thread drives a simulation. Memory: the store's lease table plus, in the
 * store's {@code LeaseAcquisition}, what each relay observed (one entry per bucket and per peer).
 */
final class FleetSimulation {

    private static final long START_MILLIS = Instant.parse("2030-01-01T00:00:00Z").toEpochMilli();

    private final int bucketCount;
    private final Duration leaseDuration;
    private final long leaseMillis;
    private final long renewMillis;
    private final long pollMillis;
    private final long maxClockOffsetMillis;
    private final Random random;
    private final FleetClock clock;
    private final OutboxStore store;
    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    private final Map<String, SimulatedRelay> relays = new TreeMap<>();
    private final PriorityQueue<Due> schedule = new PriorityQueue<>(
            Comparator.comparingLong(Due::at).thenComparingLong(Due::sequence));
    /** How many live relays' last answers hold each bucket. */
    private final int[] holders;
    /** Buckets with exactly one holder. */
    private int heldOnce;
    private long dueSequence;
    private long moves;
    /** Buckets an acquisition returned to a relay that did not hold them, first grants included. */
    private long gains;
    private final Counters counters = new Counters();
    /** Simulated time during which at least one relay lived, milliseconds. */
    private long liveMillis;
    /** Per bucket: {@link #liveMillis} when it last lost its only holder; valid while it has none. */
    private final long[] unownedSince;
    /** Start of the churn run being measured, in {@link #liveMillis}. */
    private long measuredFrom;
    private long longestUnownedMillis;
    private int longestUnownedBucket = -1;
    /** Pending churn events (crashes, restarts) of an older run are ignored. */
    private int churnGeneration;
    private int churnIds;
    private int starts;
    private int crashes;

    private FleetSimulation(Builder builder) {
        this.bucketCount = builder.bucketCount;
        this.leaseDuration = builder.leaseDuration;
        this.leaseMillis = builder.leaseDuration.toMillis();
        this.renewMillis = builder.renewInterval.toMillis();
        this.pollMillis = builder.pollInterval.toMillis();
        this.maxClockOffsetMillis = builder.maxClockOffset.toMillis();
        this.random = new Random(builder.seed);
        this.clock = new FleetClock(START_MILLIS, builder.storeLatency.toMillis());
        this.store = Objects.requireNonNull(builder.storeFactory.apply(clock), "the store factory returned null");
        this.holders = new int[bucketCount];
        this.unownedSince = new long[bucketCount];
    }

    /**
     * Starts building a simulation.
     *
     * @return a builder with 65,536 buckets, a 30 s lease, a 10 s renew interval, a 1 s poll
     *     interval, 5 ms of store latency, clock offsets up to 5 s, seed 1 and the in-memory store
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The relay ids this simulation starts with: {@code relay-000}, {@code relay-001}, ...
     *
     * @param count how many, {@code >= 0}
     * @return the ids, in rank order
     */
    public static List<String> relayIds(int count) {
        List<String> ids = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            ids.add(String.format("relay-%03d", i));
        }
        return ids;
    }

    /**
     * The bucket count shared.
     *
     * @return the bucket count
     */
    public int bucketCount() {
        return bucketCount;
    }

    /**
     * The store all relays share.
     *
     * @return the store
     */
    public OutboxStore store() {
        return store;
    }

    /**
     * The live relays.
     *
     * @return their ids, in rank order; a copy
     */
    public List<String> liveRelays() {
        return List.copyOf(relays.keySet());
    }

    /**
     * The current simulated time, on the timeline (relay clocks add their offsets).
     *
     * @return epoch milliseconds
     */
    public long nowMillis() {
        return clock.timeline;
    }

    /**
     * The buckets a live relay's last acquisition returned.
     *
     * @param relayId a live relay
     * @return its buckets, ascending; a copy
     * @throws IllegalArgumentException if the relay is not live
     */
    public List<Integer> held(String relayId) {
        return live(relayId).held.stream().boxed().toList();
    }

    /**
     * Whether the fleet is converged: every bucket held by exactly one live relay, each live
     * relay holding its fair share.
     *
     * @return true when converged; false when no relay is live
     */
    public boolean converged() {
        if (relays.isEmpty() || heldOnce != bucketCount) {
            return false;
        }
        FairShare share = FairShare.of(bucketCount, relays.keySet());
        for (SimulatedRelay relay : relays.values()) {
            if (relay.held.cardinality() != share.share(relay.id)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Cold start: the given relays start at random instants within the first renew interval, the
     * store being empty; runs until the fleet is converged.
     *
     * @param relayIds the relays; not empty, distinct, none live yet
     * @param maxRounds the most rounds to run
     * @return the episode
     * @throws IllegalArgumentException if an id is already live, or the list is empty
     */
    public Episode coldStart(List<String> relayIds, int maxRounds) {
        if (relayIds.isEmpty()) {
            throw new IllegalArgumentException("relayIds must not be empty");
        }
        Map<String, Integer> before = owners();
        long start = clock.timeline;
        for (String id : relayIds) {
            add(id, start + (long) (random.nextDouble() * renewMillis));
        }
        return runUntilConverged("cold start", relayIds.size() + " relays", start, before, maxRounds);
    }

    /**
     * One relay joins now (its first acquisition runs at once); runs until converged.
     *
     * @param relayId the new relay; not live yet
     * @param maxRounds the most rounds to run
     * @return the episode
     */
    public Episode join(String relayId, int maxRounds) {
        Map<String, Integer> before = owners();
        long start = clock.timeline;
        add(relayId, start);
        return runUntilConverged("join", relayId, start, before, maxRounds);
    }

    /**
     * One relay stops gracefully now, giving its leases back (C3, as {@code OutboxRelay.close()}
     * does); runs until converged.
     *
     * @param relayId a live relay
     * @param maxRounds the most rounds to run
     * @return the episode
     * @throws IllegalStateException if the store has no {@link LeaseRelease}
     */
    public Episode leave(String relayId, int maxRounds) {
        LeaseRelease release = store.leaseRelease().orElseThrow(() -> new IllegalStateException(
                "the store offers no LeaseRelease (C3): its leaseRelease() is empty; use crash()"));
        Map<String, Integer> before = owners();
        long start = clock.timeline;
        SimulatedRelay relay = remove(relayId);
        clock.enter(relay);
        release.releaseBucketLeases(relayId);
        counters.releaseCalls++;
        return runUntilConverged("leave", relayId, start, before, maxRounds);
    }

    /**
     * One relay stops calling now, without giving anything back; its peers take over once they
     * have seen its heartbeat and leases unchanged for a lease duration (S6, S13). Runs until
     * converged.
     *
     * @param relayId a live relay
     * @param maxRounds the most rounds to run
     * @return the episode
     */
    public Episode crash(String relayId, int maxRounds) {
        Map<String, Integer> before = owners();
        long start = clock.timeline;
        remove(relayId);
        return runUntilConverged("crash", relayId, start, before, maxRounds);
    }

    /**
     * Churn (rule R14): relays that crash young, crash loops and slow starters, for a span of
     * simulated time, on an empty fleet. The {@link Churn#veterans()} live throughout; each of the
     * {@link Churn#churningSlots()} runs one relay at a time, which crashes (stops calling, gives
     * nothing back) after a life drawn from {@link Churn#minLife()}..{@link Churn#maxLife()} and
     * is replaced by a relay with a new id after a restart drawn from
     * {@link Churn#minRestart()}..{@link Churn#maxRestart()} (one start in
     * {@link Churn#slowStartEvery()} later by {@link Churn#slowStart()} more: a slow starter);
     * each of the {@link Churn#crashLoops()} is a relay id that lives and restarts the same way
     * under the same id. Every relay first acquires at a random instant of the first renew
     * interval. Ids are drawn at random, so the ranks of veterans and newcomers mix.
     *
     * <p>A bucket is <em>owned</em> while a live relay's last acquisition returned it (that relay's
     * lease runs, rule R1); the run reports the longest span any bucket stayed unowned, counting only
     * time during which at least one relay lived, and the ownership changes per minute. When the
     * span ends, the relays alive stay in the fleet (their crashes and restarts are cancelled), so
     * {@link #runRounds} and {@link #converged()} show how the fleet settles.
     *
     * <p>A crash-looping relay id restarts on the same shared store, so what the store's
     * {@code LeaseAcquisition} observed under that id is kept across its restarts, where a new
     * process would start with nothing observed; its own leases are kept either way while its
     * restart takes less than a lease duration.
     *
     * @param settings the churn; not null
     * @param duration how long the churn runs, simulated time; positive
     * @return what the run measured
     * @throws IllegalStateException if a relay is live already
     * @throws IllegalArgumentException if the duration is not positive
     */
    public ChurnRun churn(Churn settings, Duration duration) {
        Objects.requireNonNull(settings, "settings must not be null");
        Objects.requireNonNull(duration, "duration must not be null");
        if (duration.toMillis() < 1) {
            throw new IllegalArgumentException("duration must be at least 1 ms but was " + duration);
        }
        if (!relays.isEmpty()) {
            throw new IllegalStateException("churn starts on an empty fleet, but these relays are live: "
                    + relays.keySet());
        }
        churnGeneration++;
        long start = clock.timeline;
        measuredFrom = liveMillis;
        longestUnownedMillis = 0;
        longestUnownedBucket = -1;
        long gainsBefore = gains;
        int startsBefore = starts;
        int crashesBefore = crashes;
        for (int i = 0; i < settings.veterans(); i++) {
            String id;
            do {
                id = String.format("relay-%03d-v", random.nextInt(1000));
            } while (relays.containsKey(id));
            add(id, start + (long) (random.nextDouble() * renewMillis));
            starts++;
        }
        for (int i = 0; i < settings.churningSlots() + settings.crashLoops(); i++) {
            boolean loop = i >= settings.churningSlots();
            SimulatedRelay relay = new SimulatedRelay(churnId(loop), clockOffset(), false);
            relay.loop = loop;
            relay.generation = churnGeneration;
            relay.churn = settings;
            schedule.add(new Due(start + (long) (random.nextDouble() * renewMillis), dueSequence++, relay,
                    Kind.START));
        }
        runUntil(start + duration.toMillis());
        churnGeneration++; // the churn ends: pending crashes and restarts are dropped
        for (int b = 0; b < bucketCount; b++) {
            if (holders[b] == 0) {
                noteUnowned(b);
            }
        }
        return new ChurnRun(duration.toMillis(), starts - startsBefore, crashes - crashesBefore,
                longestUnownedMillis, longestUnownedBucket,
                (gains - gainsBefore) / (duration.toMillis() / 60_000.0), liveRelays().size());
    }

    /**
     * Runs whole rounds with the same membership.
     *
     * @param rounds how many, {@code >= 0}
     * @return the buckets moved meanwhile (0 in a stable fleet, S7)
     */
    public long runRounds(int rounds) {
        long movesBefore = moves;
        runUntil(clock.timeline + rounds * renewMillis);
        return moves - movesBefore;
    }

    /**
     * Runs whole rounds with the same membership and measures what the relays cost: store calls
     * per relay per second of simulated time, and the CPU time of the calling thread per
     * acquisition (the store's {@code acquireBucketLeases}: the lease recipe, its plan and the
     * store's primitives) and per discovery call.
     *
     * @param rounds how many, {@code >= 1}
     * @return the figures
     */
    public SteadyState measure(int rounds) {
        if (rounds < 1) {
            throw new IllegalArgumentException("rounds must be >= 1 but was " + rounds);
        }
        Counters start = counters.copy();
        long from = clock.timeline;
        long movesBefore = moves;
        runUntil(from + rounds * renewMillis);
        Counters delta = counters.minus(start);
        double relaySeconds = relays.size() * ((clock.timeline - from) / 1000.0);
        return new SteadyState(relays.size(), bucketCount, rounds, moves - movesBefore,
                delta.acquireCalls / relaySeconds, delta.pendingCalls / relaySeconds,
                delta.acquireCalls == 0 ? 0 : delta.acquireCpuNanos / delta.acquireCalls,
                delta.acquireCalls == 0 ? 0 : delta.acquireWallNanos / delta.acquireCalls,
                delta.pendingCalls == 0 ? 0 : delta.pendingCpuNanos / delta.pendingCalls);
    }

    /**
     * The rows of the store's lease table written per relay per second over some rounds with the
     * same membership, found by comparing the table before and after each acquisition (the keep,
     * release and claim writes that landed). Only for {@link InMemoryOutboxStore}.
     *
     * @param rounds how many, {@code >= 1}
     * @return lease rows changed per relay per second
     * @throws IllegalStateException if the store is not an {@link InMemoryOutboxStore}
     */
    public double leaseRowWritesPerRelaySecond(int rounds) {
        if (!(store instanceof InMemoryOutboxStore memory)) {
            throw new IllegalStateException("lease rows can be compared only on the in-memory store");
        }
        long from = clock.timeline;
        long end = from + rounds * renewMillis;
        long changed = 0;
        Map<Integer, BucketLease> table = memory.leases();
        while (!schedule.isEmpty() && schedule.peek().at() <= end) {
            boolean acquire = schedule.peek().kind() == Kind.ACQUIRE;
            step();
            if (acquire) {
                Map<Integer, BucketLease> after = memory.leases();
                for (Map.Entry<Integer, BucketLease> row : after.entrySet()) {
                    if (!row.getValue().equals(table.get(row.getKey()))) {
                        changed++;
                    }
                }
                table = after;
            }
        }
        advanceTo(end);
        return changed / (relays.size() * ((end - from) / 1000.0));
    }

    private Episode runUntilConverged(String event, String subject, long start, Map<String, Integer> before,
                                      int maxRounds) {
        long movesBefore = moves;
        long end = start + maxRounds * renewMillis;
        long convergedAt = -1;
        while (!schedule.isEmpty() && schedule.peek().at() <= end) {
            if (step() && converged()) {
                convergedAt = clock.timeline;
                break;
            }
        }
        if (convergedAt < 0) {
            advanceTo(end);
        }
        int rounds = convergedAt < 0 ? -1 : (int) ((convergedAt - start) / renewMillis) + 1;
        FairShare after = FairShare.of(bucketCount, relays.keySet());
        int difference = 0;
        for (Map.Entry<String, Integer> entry : before.entrySet()) {
            difference += Math.max(0, entry.getValue() - after.share(entry.getKey()));
        }
        return new Episode(event, subject, relays.size(), rounds, moves - movesBefore, difference,
                (int) Math.min(Integer.MAX_VALUE, Math.max(0, convergedAt - start)));
    }

    /** Bucket counts per live relay, as their last answers say. */
    private Map<String, Integer> owners() {
        Map<String, Integer> counts = new LinkedHashMap<>();
        relays.values().forEach(r -> counts.put(r.id, r.held.cardinality()));
        return counts;
    }

    private void add(String relayId, long firstAcquireAt) {
        Objects.requireNonNull(relayId, "relayId must not be null");
        if (relays.containsKey(relayId)) {
            throw new IllegalArgumentException("relay " + relayId + " is already live");
        }
        SimulatedRelay relay = new SimulatedRelay(relayId, clockOffset(), true);
        relays.put(relayId, relay);
        plan(relay, Kind.ACQUIRE, firstAcquireAt);
    }

    private long clockOffset() {
        return maxClockOffsetMillis == 0 ? 0 : (long) ((random.nextDouble() * 2 - 1) * maxClockOffsetMillis);
    }

    private String churnId(boolean loop) {
        String id;
        do {
            id = String.format("relay-%03d-%s%d", random.nextInt(1000), loop ? "loop" : "", ++churnIds);
        } while (relays.containsKey(id));
        return id;
    }

    /** A churn event: a relay starts (and acquires at once) or crashes (and is restarted later). */
    private void churnEvent(Due due) {
        SimulatedRelay relay = due.relay();
        if (relay.generation != churnGeneration) {
            return;
        }
        Churn churn = relay.churn;
        long now = clock.timeline;
        if (due.kind() == Kind.START) {
            if (relays.containsKey(relay.id)) {
                return;
            }
            relays.put(relay.id, relay);
            relay.alive = true;
            starts++;
            acquire(relay);
            plan(relay, Kind.ACQUIRE, now + renewMillis);
            schedule.add(new Due(now + between(churn.minLife(), churn.maxLife()), dueSequence++, relay, Kind.CRASH));
            return;
        }
        if (!relay.alive) {
            return;
        }
        remove(relay.id);
        crashes++;
        SimulatedRelay next = relay.loop ? new SimulatedRelay(relay.id, relay.clockOffsetMillis, false)
                : new SimulatedRelay(churnId(false), clockOffset(), false);
        next.loop = relay.loop;
        next.generation = relay.generation;
        next.churn = churn;
        long restart = between(churn.minRestart(), churn.maxRestart());
        if (churn.slowStartEvery() > 0 && random.nextInt(churn.slowStartEvery()) == 0) {
            restart += churn.slowStart().toMillis();
        }
        schedule.add(new Due(now + restart, dueSequence++, next, Kind.START));
    }

    private long between(Duration min, Duration max) {
        long span = max.toMillis() - min.toMillis();
        return min.toMillis() + (span == 0 ? 0 : (long) (random.nextDouble() * (span + 1)));
    }

    /** Moves simulated time forward, counting the time during which at least one relay lived. */
    private void advanceTo(long at) {
        if (at > clock.timeline) {
            if (!relays.isEmpty()) {
                liveMillis += at - clock.timeline;
            }
            clock.timeline = at;
        }
    }

    /** Ends (or, at the end of a run, cuts) a bucket's unowned span and keeps the longest. */
    private void noteUnowned(int bucket) {
        long span = liveMillis - Math.max(unownedSince[bucket], measuredFrom);
        if (span > longestUnownedMillis) {
            longestUnownedMillis = span;
            longestUnownedBucket = bucket;
        }
    }

    private SimulatedRelay remove(String relayId) {
        SimulatedRelay relay = live(relayId);
        relays.remove(relayId);
        relay.alive = false;
        setHeld(relay, new BitSet());
        return relay;
    }

    private SimulatedRelay live(String relayId) {
        SimulatedRelay relay = relays.get(Objects.requireNonNull(relayId, "relayId must not be null"));
        if (relay == null) {
            throw new IllegalArgumentException("relay " + relayId + " is not live; live: " + relays.keySet());
        }
        return relay;
    }

    private void plan(SimulatedRelay relay, Kind kind, long at) {
        schedule.add(new Due(at, dueSequence++, relay, kind));
    }

    private void runUntil(long end) {
        while (!schedule.isEmpty() && schedule.peek().at() <= end) {
            step();
        }
        advanceTo(end);
    }

    /** Runs the next due call; returns whether it was an acquisition of a live relay. */
    private boolean step() {
        Due due = schedule.poll();
        advanceTo(due.at());
        SimulatedRelay relay = due.relay();
        if (due.kind() == Kind.START || due.kind() == Kind.CRASH) {
            churnEvent(due);
            return false;
        }
        if (!relay.alive) {
            return false;
        }
        if (due.kind() == Kind.ACQUIRE) {
            acquire(relay);
            plan(relay, Kind.ACQUIRE, due.at() + renewMillis);
            return true;
        }
        discover(relay);
        return false;
    }

    /** The engine's acquire: held buckets from the last answer, none busy (an idle relay). */
    private void acquire(SimulatedRelay relay) {
        LeaseRequest request = new LeaseRequest(relay.id, bucketCount, leaseDuration,
                relay.held.stream().boxed().toList(), List.of());
        clock.enter(relay);
        long cpu = threads.getCurrentThreadCpuTime();
        long wall = System.nanoTime();
        List<Integer> owned = store.acquireBucketLeases(request);
        counters.acquireWallNanos += System.nanoTime() - wall;
        counters.acquireCpuNanos += threads.getCurrentThreadCpuTime() - cpu;
        counters.acquireCalls++;
        BitSet next = new BitSet(bucketCount);
        for (int bucket : owned) {
            Objects.checkIndex(bucket, bucketCount);
            next.set(bucket);
        }
        boolean hadNone = relay.held.isEmpty();
        setHeld(relay, next);
        if (hadNone && !next.isEmpty()) {
            plan(relay, Kind.DISCOVER, clock.timeline);
        }
    }

    /** The engine's discovery while it holds buckets, every poll interval. */
    private void discover(SimulatedRelay relay) {
        if (relay.held.isEmpty()) {
            return; // the engine waits for its next acquisition instead
        }
        clock.enter(relay);
        long cpu = threads.getCurrentThreadCpuTime();
        store.bucketsWithPending(relay.held.stream().boxed().toList());
        counters.pendingCpuNanos += threads.getCurrentThreadCpuTime() - cpu;
        counters.pendingCalls++;
        plan(relay, Kind.DISCOVER, clock.timeline + pollMillis);
    }

    private void setHeld(SimulatedRelay relay, BitSet next) {
        BitSet gained = (BitSet) next.clone();
        gained.andNot(relay.held);
        BitSet lost = (BitSet) relay.held.clone();
        lost.andNot(next);
        for (int b = lost.nextSetBit(0); b >= 0; b = lost.nextSetBit(b + 1)) {
            if (holders[b] == 1) {
                heldOnce--;
            }
            holders[b]--;
            if (holders[b] == 1) {
                heldOnce++;
            } else if (holders[b] == 0) {
                unownedSince[b] = liveMillis;
            }
        }
        for (int b = gained.nextSetBit(0); b >= 0; b = gained.nextSetBit(b + 1)) {
            if (holders[b] == 1) {
                heldOnce--;
            } else if (holders[b] == 0) {
                noteUnowned(b);
            }
            holders[b]++;
            if (holders[b] == 1) {
                heldOnce++;
            }
        }
        if (relay.alive && relay.started) {
            moves += gained.cardinality();
        }
        if (relay.alive) {
            gains += gained.cardinality();
        }
        relay.started = true;
        relay.held = next;
    }

    /**
     * What one change of membership took.
     *
     * @param event "cold start", "join", "leave" or "crash"
     * @param relayId the relay that joined or left (for a cold start, how many started)
     * @param relays the live relays afterwards
     * @param rounds rounds from the event until converged, the event's own round counting as the
     *     first; -1 when not converged within the rounds allowed
     * @param moved buckets moved meanwhile (a cold start's first grants are not moves)
     * @param shareDifference the least that had to move: the sum, over the relays live before, of
     *     what each held beyond its new fair share
     * @param millisToConverge simulated milliseconds from the event until converged; 0 when not
     */
    public record Episode(String event, String relayId, int relays, int rounds, long moved, int shareDifference,
                          int millisToConverge) {

        /**
         * Whether it converged.
         *
         * @return {@code rounds >= 1}
         */
        public boolean converged() {
            return rounds >= 1;
        }
    }

    /**
     * What a fleet with stable membership costs, per relay.
     *
     * @param relays the live relays
     * @param bucketCount the buckets
     * @param rounds the rounds measured
     * @param moved buckets moved meanwhile
     * @param acquireCallsPerSecond acquisitions per relay per second of simulated time
     * @param pendingCallsPerSecond discovery calls ({@code bucketsWithPending}) per relay per second
     * @param acquireCpuNanos CPU time of the calling thread per acquisition, nanoseconds
     * @param acquireWallNanos elapsed time per acquisition, nanoseconds
     * @param pendingCpuNanos CPU time per discovery call, nanoseconds
     */
    public record SteadyState(int relays, int bucketCount, int rounds, long moved, double acquireCallsPerSecond,
                              double pendingCallsPerSecond, long acquireCpuNanos, long acquireWallNanos,
                              long pendingCpuNanos) {

        /**
         * All store calls per relay per second.
         *
         * @return acquisitions plus discovery calls per relay per second
         */
        public double storeCallsPerSecond() {
            return acquireCallsPerSecond + pendingCallsPerSecond;
        }
    }

    /**
     * What a churn run measured (rule R14).
     *
     * @param millis the simulated time the churn ran
     * @param starts relays started, veterans and restarts included
     * @param crashes relays that crashed
     * @param longestUnownedMillis the longest span, in simulated milliseconds during which at least
     *     one relay lived, that any bucket had no live holder; spans still open at the end count up
     *     to the end
     * @param longestUnownedBucket the bucket of that span; -1 when every bucket was owned throughout
     * @param ownershipChangesPerMinute buckets returned to a relay that did not hold them (first
     *     grants included), per minute of simulated time
     * @param relaysAtEnd the relays live when the churn ended
     */
    public record ChurnRun(long millis, int starts, int crashes, long longestUnownedMillis, int longestUnownedBucket,
                           double ownershipChangesPerMinute, int relaysAtEnd) {

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "churn %.0f s: %d starts, %d crashes, longest unowned %.1f s "
                            + "(bucket %d), %.1f ownership changes/min", millis / 1000.0, starts, crashes,
                    longestUnownedMillis / 1000.0, longestUnownedBucket, ownershipChangesPerMinute);
        }
    }

    /**
     * The churn of {@link #churn}: how many relays live throughout, how many slots run relays that
     * crash young and are replaced under new ids, how many relay ids crash-loop, and how long lives
     * and restarts take. Immutable; build with {@link #builder()}.
     *
     * @param veterans relays that live throughout, {@code >= 0}
     * @param churningSlots slots whose relay crashes after its life and is replaced under a new id,
     *     {@code >= 0}
     * @param crashLoops relay ids that crash after their life and restart under the same id,
     *     {@code >= 0}
     * @param minLife the shortest life, from a start to its crash; at least 1 ms
     * @param maxLife the longest life; not shorter than {@code minLife}
     * @param minRestart the shortest time from a crash to the replacement's first acquisition; zero
     *     or more
     * @param maxRestart the longest such time; not shorter than {@code minRestart}
     * @param slowStartEvery one restart in this many (drawn at random) is slow; 0 for none
     * @param slowStart what a slow restart takes on top; zero or more
     */
    public record Churn(int veterans, int churningSlots, int crashLoops, Duration minLife, Duration maxLife,
                        Duration minRestart, Duration maxRestart, int slowStartEvery, Duration slowStart) {

        /**
         * Validates the settings.
         *
         * @param veterans relays live throughout
         * @param churningSlots slots of relays that crash young
         * @param crashLoops crash-looping relay ids
         * @param minLife the shortest life
         * @param maxLife the longest life
         * @param minRestart the shortest restart
         * @param maxRestart the longest restart
         * @param slowStartEvery one restart in this many is slow; 0 for none
         * @param slowStart the extra time of a slow restart
         * @throws IllegalArgumentException if a value is out of range, naming it and the value
         * @throws NullPointerException if a duration is null
         */
        public Churn {
            requireNotNegative("veterans", veterans);
            requireNotNegative("churningSlots", churningSlots);
            requireNotNegative("crashLoops", crashLoops);
            requireNotNegative("slowStartEvery", slowStartEvery);
            if (veterans + churningSlots + crashLoops == 0) {
                throw new IllegalArgumentException("a churn needs at least one relay but veterans, churningSlots and "
                        + "crashLoops are all 0");
            }
            Builder.requirePositive("minLife", minLife);
            Builder.requireNotNegative("minRestart", minRestart);
            Builder.requireNotNegative("slowStart", slowStart);
            requireOrdered("life", minLife, maxLife);
            requireOrdered("restart", minRestart, maxRestart);
        }

        /**
         * Starts building churn settings.
         *
         * @return a builder with 2 veterans, 1 churning slot, 1 crash loop, lives of 1 to 10 s,
         *     restarts of 0.5 to 2 s and one restart in 4 slow by 5 s more
         */
        public static ChurnBuilder builder() {
            return new ChurnBuilder();
        }

        private static void requireNotNegative(String name, int value) {
            if (value < 0) {
                throw new IllegalArgumentException(name + " must be >= 0 but was " + value);
            }
        }

        private static void requireOrdered(String name, Duration min, Duration max) {
            Objects.requireNonNull(max, "max " + name + " must not be null");
            if (max.compareTo(min) < 0) {
                throw new IllegalArgumentException("max " + name + " must not be shorter than min " + name + " but was "
                        + max + " < " + min);
            }
        }
    }

    /** Builds {@link Churn} settings; {@link #build()} validates. Not thread-safe. */
    public static final class ChurnBuilder {
        private int veterans = 2;
        private int churningSlots = 1;
        private int crashLoops = 1;
        private Duration minLife = Duration.ofSeconds(1);
        private Duration maxLife = Duration.ofSeconds(10);
        private Duration minRestart = Duration.ofMillis(500);
        private Duration maxRestart = Duration.ofSeconds(2);
        private int slowStartEvery = 4;
        private Duration slowStart = Duration.ofSeconds(5);

        private ChurnBuilder() {
        }

        /**
         * Sets the relays that live throughout.
         *
         * @param veterans {@code >= 0}; default 2
         * @return this builder
         */
        public ChurnBuilder veterans(int veterans) {
            this.veterans = veterans;
            return this;
        }

        /**
         * Sets the slots whose relay crashes young and is replaced under a new id.
         *
         * @param churningSlots {@code >= 0}; default 1
         * @return this builder
         */
        public ChurnBuilder churningSlots(int churningSlots) {
            this.churningSlots = churningSlots;
            return this;
        }

        /**
         * Sets the crash-looping relay ids.
         *
         * @param crashLoops {@code >= 0}; default 1
         * @return this builder
         */
        public ChurnBuilder crashLoops(int crashLoops) {
            this.crashLoops = crashLoops;
            return this;
        }

        /**
         * Sets the range of lives, from a start to its crash.
         *
         * @param min at least 1 ms; default 1 s
         * @param max not shorter than {@code min}; default 10 s
         * @return this builder
         */
        public ChurnBuilder life(Duration min, Duration max) {
            this.minLife = min;
            this.maxLife = max;
            return this;
        }

        /**
         * Sets the range of restarts, from a crash to the replacement's first acquisition.
         *
         * @param min zero or more; default 0.5 s
         * @param max not shorter than {@code min}; default 2 s
         * @return this builder
         */
        public ChurnBuilder restart(Duration min, Duration max) {
            this.minRestart = min;
            this.maxRestart = max;
            return this;
        }

        /**
         * Sets the slow starters: one restart in {@code every}, drawn at random, takes {@code extra}
         * more.
         *
         * @param every {@code >= 0}, 0 for none; default 4
         * @param extra zero or more; default 5 s
         * @return this builder
         */
        public ChurnBuilder slowStarts(int every, Duration extra) {
            this.slowStartEvery = every;
            this.slowStart = extra;
            return this;
        }

        /**
         * Builds the settings.
         *
         * @return the settings
         * @throws IllegalArgumentException if a value is out of range, naming it
         */
        public Churn build() {
            return new Churn(veterans, churningSlots, crashLoops, minLife, maxLife, minRestart, maxRestart,
                    slowStartEvery, slowStart);
        }
    }

    /** Builds a {@link FleetSimulation}; setters validate at once. Not thread-safe. */
    public static final class Builder {

        private int bucketCount = 65_536;
        private Duration leaseDuration = Duration.ofSeconds(30);
        private Duration renewInterval = Duration.ofSeconds(10);
        private Duration pollInterval = Duration.ofSeconds(1);
        private Duration storeLatency = Duration.ofMillis(5);
        private Duration maxClockOffset = Duration.ofSeconds(5);
        private long seed = 1;
        private Function<Clock, ? extends OutboxStore> storeFactory =
                clock -> InMemoryOutboxStore.builder().clock(clock).build();

        private Builder() {
        }

        /**
         * Sets the bucket count.
         *
         * @param bucketCount {@code 1..65536}; default 65,536
         * @return this builder
         * @throws IllegalArgumentException if out of range, naming the value
         */
        public Builder bucketCount(int bucketCount) {
            this.bucketCount = OutboxBucket.requireBucketCount(bucketCount);
            return this;
        }

        /**
         * Sets the lease duration and renew interval, as the relay options of the same names.
         *
         * @param leaseDuration the lease duration; positive; default 30 s
         * @param renewInterval the renew (and rebalance) interval; positive, shorter than the lease;
         *     default 10 s
         * @return this builder
         * @throws IllegalArgumentException if a value is out of range, naming it
         */
        public Builder leases(Duration leaseDuration, Duration renewInterval) {
            requirePositive("leaseDuration", leaseDuration);
            requirePositive("renewInterval", renewInterval);
            if (renewInterval.compareTo(leaseDuration) >= 0) {
                throw new IllegalArgumentException("renewInterval must be shorter than leaseDuration but was "
                        + renewInterval + " >= " + leaseDuration);
            }
            this.leaseDuration = leaseDuration;
            this.renewInterval = renewInterval;
            return this;
        }

        /**
         * Sets the poll interval: how often a relay holding buckets asks which have pending rows.
         *
         * @param pollInterval positive; default 1 s
         * @return this builder
         * @throws IllegalArgumentException if not positive
         */
        public Builder pollInterval(Duration pollInterval) {
            this.pollInterval = requirePositive("pollInterval", pollInterval);
            return this;
        }

        /**
         * Sets the store latency: within one call, clock readings after the first are this much
         * later.
         *
         * @param storeLatency zero or positive; default 5 ms
         * @return this builder
         * @throws IllegalArgumentException if negative
         */
        public Builder storeLatency(Duration storeLatency) {
            this.storeLatency = requireNotNegative("storeLatency", storeLatency);
            return this;
        }

        /**
         * Sets the largest clock offset: each relay's clock is the timeline plus a fixed offset
         * drawn uniformly from {@code [-maxClockOffset, +maxClockOffset]}.
         *
         * @param maxClockOffset zero or positive; default 5 s
         * @return this builder
         * @throws IllegalArgumentException if negative
         */
        public Builder maxClockOffset(Duration maxClockOffset) {
            this.maxClockOffset = requireNotNegative("maxClockOffset", maxClockOffset);
            return this;
        }

        /**
         * Sets the seed of the start instants and clock offsets; a seed gives the same run.
         *
         * @param seed any value; default 1
         * @return this builder
         */
        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        /**
         * Sets how the shared store is made: given the clock that reads the calling relay's
         * clock, it returns one store that every relay calls. A database store must take all
         * lease time from that clock (S11).
         *
         * @param storeFactory not null; default a new {@link InMemoryOutboxStore}
         * @return this builder
         */
        public Builder store(Function<Clock, ? extends OutboxStore> storeFactory) {
            this.storeFactory = Objects.requireNonNull(storeFactory, "storeFactory must not be null");
            return this;
        }

        /**
         * Builds the simulation, with no relay live yet.
         *
         * @return the simulation
         */
        public FleetSimulation build() {
            return new FleetSimulation(this);
        }

        private static Duration requirePositive(String name, Duration value) {
            Objects.requireNonNull(value, name + " must not be null");
            if (value.isNegative() || value.isZero() || value.toMillis() < 1) {
                throw new IllegalArgumentException(name + " must be at least 1 ms but was " + value);
            }
            return value;
        }

        private static Duration requireNotNegative(String name, Duration value) {
            Objects.requireNonNull(value, name + " must not be null");
            if (value.isNegative()) {
                throw new IllegalArgumentException(name + " must not be negative but was " + value);
            }
            return value;
        }
    }

    private enum Kind { ACQUIRE, DISCOVER, START, CRASH }

    private record Due(long at, long sequence, SimulatedRelay relay, Kind kind) {
    }

    private static final class SimulatedRelay {
        final String id;
        final long clockOffsetMillis;
        BitSet held = new BitSet();
        boolean alive;
        boolean started;
        /** For churn: a crash-looping id (restarts under the same id), the run it belongs to, its settings. */
        boolean loop;
        int generation;
        Churn churn;

        SimulatedRelay(String id, long clockOffsetMillis, boolean alive) {
            this.id = id;
            this.clockOffsetMillis = clockOffsetMillis;
            this.alive = alive;
        }
    }

    private static final class Counters {
        long acquireCalls;
        long acquireCpuNanos;
        long acquireWallNanos;
        long pendingCalls;
        long pendingCpuNanos;
        long releaseCalls;

        Counters copy() {
            return minus(new Counters());
        }

        Counters minus(Counters other) {
            Counters d = new Counters();
            d.acquireCalls = acquireCalls - other.acquireCalls;
            d.acquireCpuNanos = acquireCpuNanos - other.acquireCpuNanos;
            d.acquireWallNanos = acquireWallNanos - other.acquireWallNanos;
            d.pendingCalls = pendingCalls - other.pendingCalls;
            d.pendingCpuNanos = pendingCpuNanos - other.pendingCpuNanos;
            d.releaseCalls = releaseCalls - other.releaseCalls;
            return d;
        }
    }

    /**
     * The store's clock: the calling relay's clock (the timeline plus its offset); readings after
     * the first of a call are later by the store latency.
     */
    private static final class FleetClock extends Clock {
        long timeline;
        private final long latencyMillis;
        private SimulatedRelay current;
        private int reads;

        FleetClock(long timeline, long latencyMillis) {
            this.timeline = timeline;
            this.latencyMillis = latencyMillis;
        }

        void enter(SimulatedRelay relay) {
            current = relay;
            reads = 0;
        }

        @Override
        public long millis() {
            long base = timeline + (current == null ? 0 : current.clockOffsetMillis);
            return reads++ == 0 ? base : base + latencyMillis;
        }

        @Override
        public Instant instant() {
            return Instant.ofEpochMilli(millis());
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }
    }
}
