package io.outbox.tck;

import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * One deliberately broken implementation the kit must catch: what is broken, the kit test that
 * catches it, and exactly the rules a kit run over it fails. The bites' tests assert those, and the
 * kit's reference page lists them by rule.
 */
interface Bite {

    /**
     * What a bite declares.
     *
     * @param caughtBy the kit test that must fail on the fault
     * @param rules exactly the rules a kit run over the fault always fails
     * @param racy rules whose race detectors (stochastic tests) may also catch the fault in a run, as
     *     a consequence it has under contention; empty for most bites
     * @param fault what is broken, one sentence
     */
    record Declared(String caughtBy, Set<String> rules, Set<String> racy, String fault) {
        /**
         * A declaration with the rules as one string: ids separated by spaces, a racy one marked
         * with a trailing {@code ?} ({@code "C1 S5?"}).
         *
         * @param caughtBy the kit test that must fail on the fault
         * @param rules rule ids separated by spaces
         * @param fault what is broken
         */
        Declared(String caughtBy, String rules, String fault) {
            this(caughtBy, ids(rules, false), ids(rules, true), fault);
        }

        private static Set<String> ids(String rules, boolean racy) {
            return Arrays.stream(rules.split(" ")).filter(r -> r.endsWith("?") == racy)
                    .map(r -> racy ? r.substring(0, r.length() - 1) : r).collect(Collectors.toUnmodifiableSet());
        }
    }

    /**
     * The bite's name.
     *
     * @return an enum constant's name
     */
    String name();

    /**
     * What the bite declares.
     *
     * @return the declaration
     */
    Declared declared();

    /**
     * What is broken.
     *
     * @return one sentence
     */
    default String fault() {
        return declared().fault();
    }

    /**
     * The kit test that must fail on this fault.
     *
     * @return a kit test's method name
     */
    default String caughtBy() {
        return declared().caughtBy();
    }

    /**
     * Exactly the rules a kit run over this fault fails.
     *
     * @return rule ids
     */
    default Set<String> rules() {
        return declared().rules();
    }

    /**
     * Rules a race detector of the kit may also fail on this fault, in some runs.
     *
     * @return rule ids; usually empty
     */
    default Set<String> racyRules() {
        return declared().racy();
    }

    /**
     * Whether the kit catches the fault in a race, often rather than always.
     *
     * @return true for a race
     */
    default boolean stochastic() {
        return caughtBy().startsWith("stochastic_");
    }
}
