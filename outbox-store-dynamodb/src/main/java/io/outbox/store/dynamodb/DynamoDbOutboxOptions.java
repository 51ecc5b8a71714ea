package io.outbox.store.dynamodb;

import java.time.Clock;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Immutable settings of a {@link DynamoDbOutboxStore} and its {@link DynamoDbOutboxWriter}: the two
 * table names, the clock all lease time comes from (rule S11), and how many bucket probes of
 * {@link DynamoDbOutboxStore#bucketsWithPending} run at once. Set them on
 * {@link DynamoDbOutboxStore#builder(software.amazon.awssdk.services.dynamodb.DynamoDbClient)} and
 * read them back with {@link DynamoDbOutboxStore#options()}. Instances are immutable and
 * thread-safe.
 *
 * <p>Writers and relays sharing an outbox must use the same table names.
 */
public final class DynamoDbOutboxOptions {

    /** Default name of the messages table. */
    public static final String DEFAULT_MESSAGES_TABLE = "outbox_messages";

    /** Default name of the coordination table (leases, relay heartbeats, sequence counters). */
    public static final String DEFAULT_COORDINATION_TABLE = "outbox_coordination";

    /** Default number of concurrent bucket probes in {@link DynamoDbOutboxStore#bucketsWithPending}. */
    public static final int DEFAULT_PROBE_PARALLELISM = 8;

    /** DynamoDB's table name rule: 3 to 255 characters of {@code [a-zA-Z0-9_.-]}. */
    private static final Pattern TABLE_NAME = Pattern.compile("[a-zA-Z0-9_.-]{3,255}");

    private final String messagesTable;
    private final String coordinationTable;
    private final Clock clock;
    private final int probeParallelism;

    private DynamoDbOutboxOptions(Builder builder) {
        this.messagesTable = builder.messagesTable;
        this.coordinationTable = builder.coordinationTable;
        this.clock = builder.clock;
        this.probeParallelism = builder.probeParallelism;
    }

    /**
     * A builder starting from the defaults, for {@link DynamoDbOutboxStore.Builder}.
     *
     * @return a new builder; not thread-safe
     */
    static Builder builder() {
        return new Builder();
    }

    /**
     * The messages table: partition key {@code bucket} (N), sort key {@code seq} (N).
     *
     * @return the table name
     */
    public String messagesTable() {
        return messagesTable;
    }

    /**
     * The coordination table: partition key {@code pk} (S), sort key {@code sk} (S).
     *
     * @return the table name
     */
    public String coordinationTable() {
        return coordinationTable;
    }

    /**
     * The clock every lease expiry and heartbeat is computed from (S11).
     *
     * @return the clock
     */
    public Clock clock() {
        return clock;
    }

    /**
     * How many single-bucket probes {@link DynamoDbOutboxStore#bucketsWithPending} runs at once.
     *
     * @return the parallelism, {@code >= 1}; 1 probes one bucket after another on the caller's thread
     */
    public int probeParallelism() {
        return probeParallelism;
    }

    @Override
    public String toString() {
        return "DynamoDbOutboxOptions[messagesTable=" + messagesTable + ", coordinationTable=" + coordinationTable
                + ", clock=" + clock + ", probeParallelism=" + probeParallelism + "]";
    }

    /** Builds {@link DynamoDbOutboxOptions}; validates in {@link #build()}. Not thread-safe. */
    static final class Builder {

        private String messagesTable = DEFAULT_MESSAGES_TABLE;
        private String coordinationTable = DEFAULT_COORDINATION_TABLE;
        private Clock clock = Clock.systemUTC();
        private int probeParallelism = DEFAULT_PROBE_PARALLELISM;

        private Builder() {
        }

        /**
         * Sets the messages table name.
         *
         * @param name 3 to 255 characters of {@code [a-zA-Z0-9_.-]}; checked in {@link #build()}
         * @return this builder
         */
        public Builder messagesTable(String name) {
            this.messagesTable = name;
            return this;
        }

        /**
         * Sets the coordination table name.
         *
         * @param name 3 to 255 characters of {@code [a-zA-Z0-9_.-]}, different from the messages
         *     table; checked in {@link #build()}
         * @return this builder
         */
        public Builder coordinationTable(String name) {
            this.coordinationTable = name;
            return this;
        }

        /**
         * Sets the clock for all lease time (S11).
         *
         * @param clock the clock; not null (checked in {@link #build()})
         * @return this builder
         */
        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        /**
         * Sets how many bucket probes run at once.
         *
         * @param parallelism {@code >= 1}; checked in {@link #build()}
         * @return this builder
         */
        public Builder probeParallelism(int parallelism) {
            this.probeParallelism = parallelism;
            return this;
        }

        /**
         * Validates and builds the options.
         *
         * @return the options
         * @throws NullPointerException if a table name or the clock is null
         * @throws IllegalArgumentException naming the setting and the value when a table name breaks
         *     DynamoDB's naming rule, both names are equal, or the parallelism is below 1
         */
        public DynamoDbOutboxOptions build() {
            requireTableName("messagesTable", messagesTable);
            requireTableName("coordinationTable", coordinationTable);
            if (messagesTable.equals(coordinationTable)) {
                throw new IllegalArgumentException("messagesTable and coordinationTable must differ but both are '"
                        + messagesTable + "'");
            }
            Objects.requireNonNull(clock, "clock must not be null");
            if (probeParallelism < 1) {
                throw new IllegalArgumentException("probeParallelism must be >= 1 but was " + probeParallelism);
            }
            return new DynamoDbOutboxOptions(this);
        }

    }

    /**
     * Checks a table name against DynamoDB's rule, for the builder and the provider's settings.
     *
     * @param setting the option or setting that holds it, for the message
     * @param name the table name
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException naming the setting and the value if it is not 3 to 255
     *     characters of {@code [a-zA-Z0-9_.-]}
     */
    static void requireTableName(String setting, String name) {
        Objects.requireNonNull(name, setting + " must not be null");
        if (!TABLE_NAME.matcher(name).matches()) {
            throw new IllegalArgumentException(setting + " must be 3 to 255 characters of [a-zA-Z0-9_.-] but was '"
                    + name + "'");
        }
    }
}
