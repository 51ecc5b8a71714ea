package io.outbox.relay;

/**
 * What a failure says about retrying, in the manner of Kafka's {@code RetriableException}
 * (rules R12, R13). Which error is which kind is stated once, in {@link ErrorTable#ROWS};
 * {@link #classify(Throwable)} reads it for a publish error or a store error of one row.
 *
 * <ul>
 *   <li>{@link #RETRIABLE}: the broker or the network, and every publish error the table does not
 *       list. Never counted against a message; the bucket backs off and retries.</li>
 *   <li>{@link #MESSAGE}: the message itself can never be published as it is (a record too large,
 *       an illegal topic, a partition the topic does not have, a row the store cannot decode).
 *       Counted per message; {@link PoisonPolicy} decides what happens after.</li>
 *   <li>{@link #STORE}: a store call failed (the store is down): the whole loop backs off (R3).
 *       {@link #classify} never returns it; it is the kind of every exception from a store call
 *       the table does not class as a row's data error or as fatal.</li>
 *   <li>{@link #FATAL}: {@link io.outbox.spi.OutboxMisconfigurationException} or an
 *       {@link Error}, which stop the relay (R6), and the refusals no retry heals (a login, a
 *       grant, an ACL, a version, a transaction timeout), which stop it only before the first
 *       good contact with their side ({@link ErrorTable.Row#atStartOnly()}, R13).</li>
 * </ul>
 * The cause chain is searched, so a Kafka exception wrapped by another counts as itself.
 */
public enum FailureKind {
    /** Retrying can help; never counted against a message. */
    RETRIABLE,
    /** The message cannot be published as it is; counted against it. */
    MESSAGE,
    /** A store call failed; the whole loop backs off. */
    STORE,
    /** A misconfiguration, a refusal no retry heals, or an Error; see {@link ErrorTable}. */
    FATAL;

    /**
     * Classifies a publish failure or a store's report of one bad row by {@link ErrorTable#find}.
     *
     * @param error the failure; null is {@link #RETRIABLE}
     * @return {@link #FATAL}, {@link #MESSAGE} or {@link #RETRIABLE}; never {@link #STORE}
     */
    public static FailureKind classify(Throwable error) {
        FailureKind kind = ErrorTable.find(error).map(ErrorTable.Row::kind).orElse(RETRIABLE);
        return kind == STORE ? RETRIABLE : kind;
    }
}
