package io.outbox.relay.testing;

import io.outbox.notify.NotificationTransport;

/**
 * A notification transport whose listening connection a test brings up and takes down (rule N6);
 * it carries no hints. Thread-safe.
 */
public final class SwitchedTransport implements NotificationTransport {

    /** Its name, as a provider's would be. */
    public static final String NAME = "switched";

    private final StateKeeper states = new StateKeeper(NAME);
    private volatile Listener listener;
    private volatile boolean everUp;

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public void publish(int[] buckets) {
    }

    @Override
    public AutoCloseable listen(Listener hints) {
        listener = hints;
        return () -> listener = null;
    }

    /** The connection is up; after a loss the listener is also told hints may have been missed. */
    public void up() {
        boolean recovered = everUp;
        everUp = true;
        if (states.change(true, listener) && recovered) {
            listener.onReconnected();
        }
    }

    /** The connection is lost. */
    public void down() {
        states.change(false, listener);
    }

    @Override
    public State state() {
        return states.state();
    }

    @Override
    public void close() {
        states.change(false, null);
    }
}
