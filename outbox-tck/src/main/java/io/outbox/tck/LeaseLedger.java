package io.outbox.tck;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Records, for simulated relays, the time intervals during which each believed it held a bucket,
 * and finds any instant where two relays believed so at once (rule S5).
 *
 * <p>A relay that called {@code acquireBucketLeases} at {@code start} and got bucket {@code b}
 * back at {@code end} may use {@code b} during {@code [end, start + leaseDuration)} (R1), cut short
 * by its next lease call, which may give {@code b} back. Thread-safe: each relay records from its
 * own thread.
 */
final class LeaseLedger {

    /** One relay's belief that it held one bucket during {@code [from, to)}, simulated epoch ms. */
    record Belief(String relay, int bucket, long from, long to) {
        boolean overlaps(Belief other) {
            return Math.max(from, other.from) < Math.min(to, other.to);
        }
    }

    private final List<Belief> closed = Collections.synchronizedList(new ArrayList<>());
    private final Map<String, Map<Integer, Belief>> open = new ConcurrentHashMap<>();

    /** Ends every open belief of a relay at {@code at}, because it is about to make a lease call. */
    void endBeliefs(String relay, long at) {
        Map<Integer, Belief> beliefs = open.remove(relay);
        if (beliefs != null) {
            beliefs.values().forEach(b -> close(new Belief(relay, b.bucket(), b.from(), Math.min(b.to(), at))));
        }
    }

    /** Opens beliefs for the buckets a lease call returned. */
    void believe(String relay, Collection<Integer> buckets, long from, long until) {
        Map<Integer, Belief> beliefs = open.computeIfAbsent(relay, r -> new HashMap<>());
        for (int bucket : buckets) {
            beliefs.put(bucket, new Belief(relay, bucket, from, until));
        }
    }

    /** Ends every open belief at {@code at}. */
    void endAll(long at) {
        List.copyOf(open.keySet()).forEach(relay -> endBeliefs(relay, at));
    }

    private void close(Belief belief) {
        if (belief.from() < belief.to()) {
            closed.add(belief);
        }
    }

    /** Every pair of beliefs of different relays that overlap in time on one bucket. */
    List<String> violations() {
        List<String> violations = new ArrayList<>();
        for (List<Belief> beliefs : byBucket().values()) {
            for (int i = 0; i < beliefs.size(); i++) {
                Belief a = beliefs.get(i);
                for (int j = i + 1; j < beliefs.size() && beliefs.get(j).from() < a.to(); j++) {
                    Belief b = beliefs.get(j);
                    if (!a.relay().equals(b.relay()) && a.overlaps(b)) {
                        violations.add("bucket " + a.bucket() + " held by " + a.relay() + " during [" + a.from()
                                + ", " + a.to() + ") and by " + b.relay() + " during [" + b.from() + ", " + b.to()
                                + ")");
                    }
                }
            }
        }
        return violations;
    }

    /** How often a bucket passed from one relay to another: shows the test exercised takeovers. */
    int handovers() {
        int handovers = 0;
        for (List<Belief> beliefs : byBucket().values()) {
            for (int i = 1; i < beliefs.size(); i++) {
                if (!beliefs.get(i).relay().equals(beliefs.get(i - 1).relay())) {
                    handovers++;
                }
            }
        }
        return handovers;
    }

    private Map<Integer, List<Belief>> byBucket() {
        Map<Integer, List<Belief>> byBucket = new TreeMap<>();
        synchronized (closed) {
            for (Belief belief : closed) {
                byBucket.computeIfAbsent(belief.bucket(), b -> new ArrayList<>()).add(belief);
            }
        }
        byBucket.values().forEach(list -> list.sort(Comparator.comparingLong(Belief::from)));
        return byBucket;
    }
}
