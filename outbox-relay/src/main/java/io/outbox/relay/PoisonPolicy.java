package io.outbox.relay;

import io.outbox.spi.OutboxMisconfigurationException;
import java.util.Locale;

/**
 * What a relay does with a message that failed for a reason of its own ({@link FailureKind#MESSAGE},
 * rule R12): option {@value RelayOptions#POISON_POLICY_CONFIG}.
 *
 * <p>Either way, after a message-specific failure at position k of a batch, the bucket's next
 * attempts send message k alone until it succeeds or is given up on, so the messages behind it
 * are sent at most once more; and retriable failures (a broker outage) are never counted.
 */
public enum PoisonPolicy {

    /**
     * Order first (the default): the bucket waits behind the message, retrying with backoff; its
     * attempts are counted and a WARN at most once a minute per bucket names the message id, the
     * attempts and the cause. An operator repairs or removes the message (or switches the policy).
     */
    BLOCK("block"),

    /**
     * After {@value RelayOptions#DEFAULT_POISON_MAX_ATTEMPTS} (option
     * {@value RelayOptions#POISON_MAX_ATTEMPTS_CONFIG}) message-specific failures in a row the
     * message is moved to the store's dead letters (capability C4) and the bucket goes on with the
     * messages behind it: the key's later messages are then delivered before it (if it is ever
     * replayed, it comes after everything pending at that time). Needs a store that has
     * {@link io.outbox.spi.DeadLetters} ({@code OutboxStore.deadLetters()} not empty).
     */
    DEAD_LETTER("dead-letter");

    private final String configName;

    PoisonPolicy(String configName) {
        this.configName = configName;
    }

    /**
     * The option value.
     *
     * @return {@code block} or {@code dead-letter}
     */
    public String configName() {
        return configName;
    }

    /**
     * The policy for an option value, case-insensitive.
     *
     * @param name {@code block} or {@code dead-letter}
     * @return the policy
     * @throws OutboxMisconfigurationException naming the option and the bad value
     */
    public static PoisonPolicy forName(String name) {
        for (PoisonPolicy p : values()) {
            if (name != null && p.configName.equals(name.strip().toLowerCase(Locale.ROOT))) {
                return p;
            }
        }
        throw new OutboxMisconfigurationException("relay option " + RelayOptions.POISON_POLICY_CONFIG
                + " must be block or dead-letter but was " + (name == null ? null : "'" + name + "'"));
    }
}
