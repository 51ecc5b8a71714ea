package io.outbox.relay.internal;

import io.outbox.relay.RelayListener;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The relay's stop, reported once: the listener first, so it has run when {@link #future()}
 * completes. Reported by the loop thread as it ends, or by the closing thread for a relay that
 * never ran or whose loop did not stop in time; whichever comes first wins. Thread-safe.
 */
final class Termination {

    private final RelayListener listener;
    private final CompletableFuture<Void> future = new CompletableFuture<>();
    private final AtomicBoolean reported = new AtomicBoolean();

    Termination(RelayListener listener) {
        this.listener = listener;
    }

    /** Reports the stop, unless it was reported; {@code fatal} is null for an ordinary stop. */
    void report(Throwable fatal) {
        if (!reported.compareAndSet(false, true)) {
            return;
        }
        listener.onTerminated(fatal);
        if (fatal == null) {
            future.complete(null);
        } else {
            future.completeExceptionally(fatal);
        }
    }

    /** Completes after the report: normally, or exceptionally with the fatal error. */
    CompletableFuture<Void> future() {
        return future;
    }
}
