package io.outbox.tck;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The one source of what a kit test guards: its rule id, how binding it is, what it checks and where
 * to look when it fails. The kit's failure messages, its end-of-run summary and the reference page
 * {@code docs/reference/kit-rules.md} are made from these annotations; Javadoc shows them on each
 * test. A test's name repeats its binding and rule ({@code required_S2_...}), so that a report
 * names the broken rule even without the kit's extensions.
 *
 * <p>Rule ids are the contract's: S1-S13 and S4b for the store, E4 and E5 for the enqueue path,
 * R11, R12 and R14 for the relay rules a store's answers uphold, C1-C6 for the optional
 * capabilities, I1 and I2 for the inbox, and {@code discovery} for the provider.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface KitRule {

    /**
     * The contract rule the test guards.
     *
     * @return a rule id such as {@code "S2"}, {@code "C1"}, {@code "E5"} or {@code "discovery"}
     */
    String id();

    /**
     * How binding the test is; the test name starts with it in lower case.
     *
     * @return the binding
     */
    Binding binding();

    /**
     * What the test checks, in one or two sentences.
     *
     * @return the description
     */
    String checks();

    /**
     * The likely mistakes in a store that fails the test: the "if this fails, check" list.
     *
     * @return the hint, as prose
     */
    String ifThisFails();

    /** How binding a kit test is. */
    enum Binding {
        /** Must pass; deterministic. */
        REQUIRED,
        /** Must pass; a race, so a broken store fails it often rather than always. */
        STOCHASTIC,
        /** Runs only when the store offers the optional capability; skipped otherwise, with the reason. */
        OPTIONAL
    }
}
