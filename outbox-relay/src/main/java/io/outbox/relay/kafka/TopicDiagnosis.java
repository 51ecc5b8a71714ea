package io.outbox.relay.kafka;

import io.outbox.relay.FailureKind;
import io.outbox.relay.internal.LogText;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells why the producer got no metadata for a topic. A metadata wait ends the same way, in a
 * {@link TimeoutException}, whether the brokers are down (retriable) or the topic can never exist
 * (its name collides with an existing one, such as {@code a_b} beside {@code a.b}, or breaks a
 * broker rule): the producer keeps asking for the auto-creation that the broker keeps refusing.
 * After such a wait this asks the cluster, with an Admin client of the producer's connection
 * settings, to validate creating the topic (nothing is created); a refusal becomes an
 * {@link InvalidTopicException} naming the topic and the broker's reason, a message-permanent
 * failure of that message ({@link FailureKind#MESSAGE}, rule R12). No answer either means no
 * broker is reachable: a {@link io.outbox.relay.BrokerUnreachableException} from the
 * {@link BrokerContact}, which logs it at a bounded rate. Any other answer leaves the original
 * error. Answers are kept per failure, so a topic repeated by many batches
 * costs one question per metadata failure. Thread-safe: store threads ask it during their
 * publishes (waiting up to 5 s for the Admin client's answer); the publisher's close closes it.
 */
final class TopicDiagnosis implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(KafkaOutboxPublisher.class);
    private static final long ASK_TIMEOUT_MS = 5_000;

    private final Map<String, Object> adminConfig = new HashMap<>();
    private final BrokerContact contact;
    private final Map<String, Explained> explained = new ConcurrentHashMap<>();
    private final Object lock = new Object();
    private Admin admin;
    private boolean closed;

    /** A diagnosis with the connection settings (bootstrap, security) among {@code producerConfig}. */
    TopicDiagnosis(Map<String, Object> producerConfig, BrokerContact contact) {
        this.contact = contact;
        producerConfig.forEach((k, v) -> {
            if (AdminClientConfig.configNames().contains(k) && v != null) {
                adminConfig.put(k, v);
            }
        });
        adminConfig.remove(AdminClientConfig.CLIENT_ID_CONFIG);
        adminConfig.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) ASK_TIMEOUT_MS);
        adminConfig.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) ASK_TIMEOUT_MS);
    }

    /**
     * The error to report for a failed metadata wait of {@code topic}.
     *
     * @param topic the topic
     * @param error the producer's error
     * @return an {@link InvalidTopicException} when the cluster refuses the topic, else {@code error}
     */
    RuntimeException explain(String topic, RuntimeException error) {
        if (!(error instanceof TimeoutException)) {
            return error;
        }
        Explained known = explained.get(topic);
        if (known != null && known.original() == error) {
            return known.reported();
        }
        Answer answer = ask(topic);
        RuntimeException reported = answer == null ? contact.unreachable(error)
                : answer.refusal() == null ? error
                : new InvalidTopicException("topic '" + topic + "' cannot be created: " + answer.refusal(), error);
        explained.put(topic, new Explained(error, reported));
        return reported;
    }

    /**
     * The topic's partition count as the cluster answers now: a metadata refresh that does not
     * depend on the producer's cache (rule R12, for a partition the cached metadata lacks).
     *
     * @param topic the topic
     * @return the partition count
     * @throws TimeoutException when the cluster does not answer within 5 s or no Admin client can
     *     be made (retriable)
     * @throws RuntimeException the cluster's error (for example an unknown topic)
     */
    int partitionCount(String topic) {
        Admin client = admin();
        if (client == null) {
            throw new TimeoutException("no Admin client to refresh the metadata of topic '" + topic + "'");
        }
        try {
            return client.describeTopics(List.of(topic)).allTopicNames().get(ASK_TIMEOUT_MS, TimeUnit.MILLISECONDS)
                    .get(topic).partitions().size();
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new KafkaException(
                    e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptException(e);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new TimeoutException("the cluster did not describe topic '" + topic + "' within " + ASK_TIMEOUT_MS
                    + " ms");
        }
    }

    /** The cluster's answer: its reason for refusing the topic, or null when it accepts it. */
    private record Answer(String refusal) {
    }

    /**
     * The cluster's answer about creating the topic; null when it did not answer (a timeout, no
     * connection) or could not be asked. An interrupt counts as an answer that
     * explains nothing.
     */
    private Answer ask(String topic) {
        Admin client = admin();
        if (client == null) {
            return new Answer(null);
        }
        try {
            client.createTopics(List.of(new NewTopic(topic, Optional.empty(), Optional.empty())),
                    new CreateTopicsOptions().validateOnly(true)).all().get(ASK_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            contact.succeeded();
            return new Answer(null);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof TimeoutException) {
                return null;
            }
            contact.succeeded();
            return new Answer(e.getCause() instanceof InvalidTopicException ? e.getCause().getMessage() : null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Answer(null);
        } catch (java.util.concurrent.TimeoutException | RuntimeException e) {
            LOG.debug("could not ask the cluster about topic='{}': {}", LogText.visible(topic),
                    LogText.oneLine(e.toString()));
            return null;
        }
    }

    private Admin admin() {
        synchronized (lock) {
            if (closed) {
                return null;
            }
            if (admin == null) {
                try {
                    admin = Admin.create(adminConfig);
                } catch (RuntimeException e) {
                    LOG.debug("no Admin client for topic diagnosis: {}", LogText.oneLine(e.toString()));
                    return null;
                }
            }
            return admin;
        }
    }

    @Override
    public void close() {
        Admin toClose;
        synchronized (lock) {
            closed = true;
            toClose = admin;
            admin = null;
        }
        if (toClose != null) {
            toClose.close(Duration.ofSeconds(5));
        }
    }

    private record Explained(RuntimeException original, RuntimeException reported) {
    }
}
