package io.outbox.relay.kafka;

import java.util.Map;
import java.util.function.Function;
import org.apache.kafka.clients.producer.Producer;

/** For tests of other packages: transactional publishers on producers a test wraps (to pause a send, say). */
public final class TestPublishers {

    private TestPublishers() {
    }

    /**
     * A transactional publisher whose per-bucket producers come from {@code producers}.
     *
     * @param producerConfig producer settings
     * @param transactions the mode's settings
     * @param producers makes each bucket's producer from its settings
     * @return the publisher, with the default message-id header
     */
    public static KafkaOutboxPublisher transactional(Map<String, ?> producerConfig, KafkaTransactions transactions,
                                                     Function<Map<String, Object>, Producer<byte[], byte[]>> producers) {
        return KafkaOutboxPublisher.builder(producerConfig).transactions(transactions).producers(producers).build();
    }
}
