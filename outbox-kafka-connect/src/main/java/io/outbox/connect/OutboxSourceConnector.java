package io.outbox.connect;

import com.google.auto.service.AutoService;
import io.outbox.spi.support.BucketRange;
import io.outbox.spi.support.FairShare;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.IntStream;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.source.ConnectorTransactionBoundaries;
import org.apache.kafka.connect.source.ExactlyOnceSupport;
import org.apache.kafka.connect.source.SourceConnector;

/**
 * The relay as a Kafka Connect source connector (rules X1-X3): its tasks publish a store's
 * pending outbox messages as the standalone relay would, and delete each one once Connect reports
 * it written. Configured with the standalone relay's keys ({@link OutboxConnectorConfig}): the
 * store and its settings, the relay options, the notification transport, and byte-array
 * converters.
 *
 * <p>X1: {@link #taskConfigs(int)} splits the buckets into {@code min(tasks.max, bucketCount)}
 * contiguous ranges, the same ranges the store's fair share
 * ({@link FairShare#rangeOfRank(int)}) gives as many relays; each task takes the store's leases
 * under a relay id that sorts in task order ({@link OutboxSourceTask}), so that its range is its
 * preferred range in the store's plan; the store gives each task a fair share and does not move a
 * fairly held bucket back to its range (rule S7). When a standalone relay or another connector
 * shares the store the leases split the buckets among them all: a bucket is never published by
 * two at once.
 *
 * <p>Exactly-once support (KIP-618): {@link #exactlyOnceSupport} and
 * {@link #canDefineTransactionBoundaries} say yes; with {@code transaction.boundary=connector}
 * each bucket batch is one transaction. Other transaction boundaries are refused, since they put
 * several buckets' batches into one transaction, and so is {@code exactly.once.support=required}
 * without {@code transaction.boundary=connector}.
 *
 * <p>Connect calls every method on one of its threads; the connector keeps only its configuration.
 */
@AutoService(SourceConnector.class)
public final class OutboxSourceConnector extends SourceConnector {

    /** This connector's version, the project's. */
    static final String VERSION = readVersion();

    /** Task configuration key: the task's number, from 0. */
    static final String TASK_INDEX = "outbox.task.index";
    /** Task configuration key: the first bucket of the task's range. */
    static final String TASK_RANGE_START = "outbox.task.range.start";
    /** Task configuration key: the bucket after the last of the task's range. */
    static final String TASK_RANGE_END = "outbox.task.range.end";
    /** Connect's key of the connector's transaction boundary. */
    static final String TRANSACTION_BOUNDARY = "transaction.boundary";
    /** Connect's key of the connector's exactly-once requirement. */
    static final String EXACTLY_ONCE_SUPPORT = "exactly.once.support";

    private Map<String, String> props;
    private OutboxConnectorConfig config;

    /** Creates the connector; Connect calls {@link #start}. */
    public OutboxSourceConnector() {
    }

    private static String readVersion() {
        Properties properties = new Properties();
        try (InputStream in = OutboxSourceConnector.class.getResourceAsStream("version.properties")) {
            if (in != null) {
                properties.load(in);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return properties.getProperty("version", "unknown");
    }

    @Override
    public String version() {
        return VERSION;
    }

    /**
     * Validates the configuration and keeps it for the tasks.
     *
     * @param props the connector's configuration
     * @throws ConnectException naming every setting with a problem
     */
    @Override
    public void start(Map<String, String> props) {
        try {
            this.config = OutboxConnectorConfig.parse(props);
        } catch (ConfigException e) {
            throw new ConnectException(e.getMessage(), e);
        }
        this.props = Map.copyOf(props);
    }

    @Override
    public Class<? extends Task> taskClass() {
        return OutboxSourceTask.class;
    }

    /**
     * One configuration per task, each with a contiguous range of buckets (X1): {@code min(maxTasks,
     * bucketCount)} tasks, the ranges of a {@link FairShare} among that many relays, disjoint and
     * covering every bucket.
     *
     * @param maxTasks Connect's {@code tasks.max}, {@code >= 1}
     * @return the task configurations, task 0 first
     */
    @Override
    public List<Map<String, String>> taskConfigs(int maxTasks) {
        List<BucketRange> ranges = ranges(config.bucketCount(), maxTasks);
        List<Map<String, String>> tasks = new ArrayList<>(ranges.size());
        for (int i = 0; i < ranges.size(); i++) {
            Map<String, String> task = new HashMap<>(props);
            task.put(TASK_INDEX, Integer.toString(i));
            task.put(TASK_RANGE_START, Integer.toString(ranges.get(i).start()));
            task.put(TASK_RANGE_END, Integer.toString(ranges.get(i).end()));
            tasks.add(Map.copyOf(task));
        }
        return List.copyOf(tasks);
    }

    /**
     * The contiguous bucket ranges of {@code min(maxTasks, bucketCount)} tasks (X1).
     *
     * @param bucketCount the number of buckets, {@code >= 1}
     * @param maxTasks the most tasks, {@code >= 1}
     * @return the ranges, task 0 first, disjoint, ascending, covering {@code [0, bucketCount)}
     * @throws IllegalArgumentException if either count is below 1
     */
    static List<BucketRange> ranges(int bucketCount, int maxTasks) {
        if (maxTasks < 1) {
            throw new IllegalArgumentException("tasks.max must be at least 1 but was " + maxTasks);
        }
        int tasks = Math.min(maxTasks, bucketCount);
        FairShare share = FairShare.of(bucketCount, IntStream.range(0, tasks)
                .mapToObj(i -> String.format("%05d", i)).toList());
        return IntStream.range(0, tasks).mapToObj(share::rangeOfRank).toList();
    }

    /** The task's number, from its configuration. */
    static int taskIndex(Map<String, String> taskProps) {
        return Integer.parseInt(taskProps.getOrDefault(TASK_INDEX, "0"));
    }

    /** The task's bucket range, from its configuration; [0, 0) when it has none. */
    static BucketRange taskRange(Map<String, String> taskProps) {
        return new BucketRange(Integer.parseInt(taskProps.getOrDefault(TASK_RANGE_START, "0")),
                Integer.parseInt(taskProps.getOrDefault(TASK_RANGE_END, "0")));
    }

    @Override
    public void stop() {
        config = null;
    }

    @Override
    public ConfigDef config() {
        return OutboxConnectorConfig.configDef();
    }

    /**
     * Checks every setting and puts each error on its setting ({@link OutboxConnectorConfig#validate}),
     * and refuses a {@code transaction.boundary} other than {@code connector}.
     *
     * @param connectorConfigs the configuration to check
     * @return the settings with their errors
     */
    @Override
    public Config validate(Map<String, String> connectorConfigs) {
        List<ConfigValue> values = new ArrayList<>(OutboxConnectorConfig.validate(connectorConfigs));
        String boundary = connectorConfigs.get(TRANSACTION_BOUNDARY);
        boolean required = "required".equalsIgnoreCase(String.valueOf(connectorConfigs.get(EXACTLY_ONCE_SUPPORT)).trim());
        if (boundary != null ? !boundary.trim().equalsIgnoreCase("connector") : required) {
            ConfigValue value = new ConfigValue(TRANSACTION_BOUNDARY, boundary, new ArrayList<>(), new ArrayList<>());
            value.addErrorMessage(TRANSACTION_BOUNDARY + " must be 'connector' (one transaction per bucket batch) "
                    + "but was " + (boundary == null ? "not set (Connect's default is 'poll')" : "'" + boundary + "'")
                    + ": 'poll' and 'interval' put several buckets' batches into one transaction");
            values.add(value);
        }
        return new Config(values);
    }

    /**
     * Exactly-once support: yes, with the records' transactions defined by the tasks.
     *
     * @param connectorConfig the configuration
     * @return {@link ExactlyOnceSupport#SUPPORTED}
     */
    @Override
    public ExactlyOnceSupport exactlyOnceSupport(Map<String, String> connectorConfig) {
        return ExactlyOnceSupport.SUPPORTED;
    }

    /**
     * The tasks define their transactions: one per bucket batch.
     *
     * @param connectorConfig the configuration
     * @return {@link ConnectorTransactionBoundaries#SUPPORTED}
     */
    @Override
    public ConnectorTransactionBoundaries canDefineTransactionBoundaries(Map<String, String> connectorConfig) {
        return ConnectorTransactionBoundaries.SUPPORTED;
    }
}
