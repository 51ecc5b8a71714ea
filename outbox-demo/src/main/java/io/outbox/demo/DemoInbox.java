package io.outbox.demo;

import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The demo consumer's business side with an inbox (rules I1, I2): one counter row per customer,
 * incremented by each order delivered, in the same transaction as the store's inbox marker, so
 * repeats never count twice. Made by {@link DemoDatabase#openInbox()}; shares the database's
 * pool or client. Thread-safe.
 */
interface DemoInbox {

    /** The consumer name the demo's markers carry. */
    String CONSUMER = "demo-order-counter";

    /** Creates the inbox table or collection (through the store's inbox) and the counters. */
    void createSchema() throws Exception;

    /**
     * Applies one delivered order: in one transaction, the inbox's first-delivery check and, when
     * it says first, the customer's counter plus one. Transient conflicts are retried.
     *
     * @return true if it was the first delivery (the counter moved), false for a repeat
     */
    boolean apply(UUID messageId, Order order) throws Exception;

    /** Every customer's counter, as committed. */
    Map<Integer, Long> counters() throws Exception;

    /** The names of the inbox's tables or collections, for {@code --keep}. */
    List<String> objectNames();

    /** Drops (or empties) them. */
    void dropSchema() throws Exception;
}
