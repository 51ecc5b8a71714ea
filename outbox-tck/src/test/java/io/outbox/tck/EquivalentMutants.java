package io.outbox.tck;

import java.util.List;

/**
 * The mutants of the reference store that survive the kit under mutation testing, each with why it
 * is equivalent. The kit's reference page lists them ({@link KitRulesPageTest}); a surviving mutant
 * that is not here is a gap in the kit, closed by a sharper kit test.
 */
final class EquivalentMutants {

    /** One surviving mutant. */
    record Mutant(String className, String method, String mutant, String why) {
    }

    /** The surviving mutants, by class and method. */
    static final List<Mutant> LIST = List.of(
            new Mutant("InMemoryOutboxStore", "deadLetters()", "returns Optional.empty()",
                    "C4 is optional: a store without dead letters passes the kit with the C4 tests skipped, and the"
                    + " kit's summary names the skip and its reason."),
            new Mutant("InMemoryOutboxStore", "ownedBy(...)", "bucket < bucketCount becomes <=",
                    "LeaseAcquisition limits what readOwned returns to [0, bucketCount) before it answers, so a"
                    + " lease row at bucketCount never reaches the caller either way."),
            new Mutant("InMemoryOutboxStore", "renewBucketLeases(...)", "heartbeat max(stored + 1, now) becomes"
                    + " max(stored - 1, now)", "both change the stored heartbeat on every renewal (liveness is by"
                    + " observed change, S13); with the clock at or past the stored value both write now."),
            new Mutant("InMemoryOutboxStore$InMemoryLeases", "deleteStaleHeartbeats(...)", "deletes nothing",
                    "a heartbeat unchanged for a lease duration counts as expired whether its row is kept or"
                    + " deleted: the deletion only keeps the map small."),
            new Mutant("InMemoryOutboxStore$Transaction", "rollback()", "keeps the messages enqueued",
                    "a rolled-back transaction cannot commit (commit throws), so what it keeps is never written."),
            new Mutant("InMemoryDeadLetters", "replayDeadLetter(...)", "the new bucket map is null (not reached)",
                    "a dead letter's bucket always has a map already: it held the message, and the store never"
                    + " removes a bucket's map."),
            new Mutant("InMemoryDeadLetters", "moveToDeadLetters(...)", "reports true when the row was published"
                    + " between finding and removing it (not reached)", "not equivalent, and not reached by the"
                    + " kit: the window is a markPublished of the same row between two statements of one move;"
                    + " the kit races two moves (which the dead letters' lock serializes), not a move and a"
                    + " publish, and a race on so small a window would pass or fail by chance."));

    private EquivalentMutants() {
    }
}
