package io.outbox.connect;

import io.outbox.embedded.EmbeddedKafkaBroker;

/**
 * The broker JVM of {@link ConnectCluster}: starts an {@link EmbeddedKafkaBroker} on free ports,
 * prints {@code bootstrap.servers=<host:port>} on standard output and runs until the process is
 * stopped (SIGTERM), when a shutdown hook closes the broker and deletes its directory.
 */
final class BrokerProcess {

    private BrokerProcess() {
    }

    /**
     * Runs the broker until the JVM is stopped.
     *
     * @param args none
     * @throws InterruptedException never in practice: the JVM halts after the shutdown hook
     */
    public static void main(String[] args) throws InterruptedException {
        EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.builder().start();
        Runtime.getRuntime().addShutdownHook(new Thread(broker::close, "broker-shutdown"));
        System.out.println("bootstrap.servers=" + broker.bootstrapServers());
        System.out.flush();
        Thread.currentThread().join();
    }
}
