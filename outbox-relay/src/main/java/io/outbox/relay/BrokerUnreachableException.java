package io.outbox.relay;

import org.apache.kafka.common.errors.RetriableException;

/**
 * No broker of the producer's {@code bootstrap.servers} answered: a metadata wait timed out and
 * the cluster did not answer an Admin request either. Retriable (rule R7);
 * the publisher logs it itself, one WARN line at a bounded rate naming the bootstrap servers and
 * the time since the last successful contact, so the relay logs its publish failures at DEBUG,
 * and reports the last one through {@link OutboxRelay#brokerUnreachable()} until a record is
 * acknowledged.
 */
public class BrokerUnreachableException extends RetriableException {

    private static final long serialVersionUID = 1L;

    /**
     * An unreachable cluster.
     *
     * @param message names the bootstrap servers and the time since the last successful contact
     * @param cause the producer's timeout
     */
    public BrokerUnreachableException(String message, Throwable cause) {
        super(message, cause);
    }
}
