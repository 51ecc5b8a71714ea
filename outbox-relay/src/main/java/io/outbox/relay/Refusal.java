package io.outbox.relay;

import java.time.Instant;
import java.util.Objects;

/**
 * A refusal no retry heals that a running relay met after a good start (rule R13): the broker or
 * the store turned down a login, a grant, an ACL or a version it had accepted before. The relay
 * logs it at ERROR, keeps retrying, and reports it through {@link OutboxRelay#refusal()} until a
 * call to the same side succeeds again; health checks show it as DOWN.
 *
 * @param side {@code Kafka} or {@code store}
 * @param row the row of {@link ErrorTable} the error matched; a fatal row with
 *     {@link ErrorTable.Row#atStartOnly()}
 * @param error the error's class and message on one line, as logged
 * @param since when the side first refused since its last success
 */
public record Refusal(String side, ErrorTable.Row row, String error, Instant since) {

    /**
     * Validates the components.
     *
     * @param side {@code Kafka} or {@code store}
     * @param row the row the error matched
     * @param error the error on one line
     * @param since when the side first refused since its last success
     * @throws NullPointerException if one is null
     */
    public Refusal {
        Objects.requireNonNull(side, "side");
        Objects.requireNonNull(row, "row");
        Objects.requireNonNull(error, "error");
        Objects.requireNonNull(since, "since");
    }
}
