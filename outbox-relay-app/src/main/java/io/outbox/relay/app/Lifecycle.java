package io.outbox.relay.app;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * How a run is asked to stop and how the process ends.
 *
 * <p>In a process ({@link #process()}), {@link #running(Duration)} installs a JVM shutdown hook:
 * on SIGTERM or SIGINT the hook asks the run to stop and waits for it, up to the bound, then
 * ends the JVM with the run's exit code ({@link Runtime#halt}, since a JVM ending on a signal
 * would otherwise report 128 plus the signal number); if the run has not finished by then, with
 * {@link StandaloneRelay#EXIT_STOP_TIMEOUT}. In a test ({@link #inProcess()}) nothing is
 * installed and {@link #requestStop()} stands for the signal. Thread-safe.
 */
final class Lifecycle {

    private final boolean process;
    private final CompletableFuture<Void> stopRequested = new CompletableFuture<>();
    private final CountDownLatch finished = new CountDownLatch(1);
    private volatile boolean signalled;
    private volatile int exitCode = StandaloneRelay.EXIT_ERROR;
    private boolean hookInstalled;

    private Lifecycle(boolean process) {
        this.process = process;
    }

    /**
     * For the relay's own process: stops on SIGTERM and SIGINT.
     *
     * @return a new lifecycle
     */
    static Lifecycle process() {
        return new Lifecycle(true);
    }

    /**
     * For a run inside another program, such as a test: stops on {@link #requestStop()} only.
     *
     * @return a new lifecycle
     */
    static Lifecycle inProcess() {
        return new Lifecycle(false);
    }

    /**
     * Completes when the run should stop.
     *
     * @return the future; never completes exceptionally
     */
    CompletableFuture<Void> stopRequested() {
        return stopRequested;
    }

    /** Asks the run to stop, as a signal does. */
    void requestStop() {
        stopRequested.complete(null);
    }

    /**
     * Called when the relay is about to start: from now on a signal stops it gracefully.
     *
     * @param stopBound how long a signal waits for the run to finish before the process ends
     *     anyway
     */
    synchronized void running(Duration stopBound) {
        if (!process || hookInstalled) {
            return;
        }
        hookInstalled = true;
        Runtime.getRuntime().addShutdownHook(new Thread(() -> onSignal(stopBound), "outbox-relay-shutdown"));
    }

    private void onSignal(Duration stopBound) {
        signalled = true;
        requestStop();
        boolean done;
        try {
            done = finished.await(stopBound.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            done = false;
        }
        if (!done) {
            System.err.println("outbox-relay: did not stop within " + stopBound.toSeconds() + " s of the signal; "
                    + "exiting with code " + StandaloneRelay.EXIT_STOP_TIMEOUT);
            exitCode = StandaloneRelay.EXIT_STOP_TIMEOUT;
        }
        halt(exitCode);
    }

    /**
     * Ends the process with an exit code; in a process only. During a signal's shutdown the JVM
     * halts (shutdown hooks are already running and {@link System#exit} would block), otherwise
     * it exits normally.
     *
     * @param code the exit code
     */
    void exit(int code) {
        exitCode = code;
        finished.countDown();
        if (signalled) {
            halt(code);
        }
        System.out.flush();
        System.err.flush();
        System.exit(code);
    }

    private static void halt(int code) {
        System.out.flush();
        System.err.flush();
        Runtime.getRuntime().halt(code);
    }
}
