package io.outbox.tck;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionService;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorCompletionService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/** Thread and exception helpers of the kit's races. Stateless. */
final class KitThreads {

    /** How long a task whose barrier broke waits for the failure of the task that broke it. */
    private static final Duration BROKEN_BARRIER_GRACE = Duration.ofSeconds(2);

    private KitThreads() {
    }

    /**
     * Starts every task at once on its own thread and waits for all of them, all within one
     * deadline; the first failure is rethrown as it was and stops the others. A broken barrier is not
     * a failure of its own: the failure of the task that broke it is rethrown instead.
     *
     * @param tasks the tasks; not empty
     * @param timeout how long all of them may take together
     * @param <T> the tasks' result type
     * @return the tasks' results, in task order
     * @throws Exception the first task's failure
     * @throws AssertionError when the tasks did not all finish within {@code timeout}
     */
    static <T> List<T> runConcurrently(List<? extends Callable<? extends T>> tasks, Duration timeout) throws Exception {
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(tasks.size());
        try {
            CompletionService<T> done = new ExecutorCompletionService<>(pool);
            List<Future<T>> futures = new ArrayList<>();
            for (Callable<? extends T> task : tasks) {
                futures.add(done.submit(() -> {
                    go.await();
                    return task.call();
                }));
            }
            go.countDown();
            long deadline = System.nanoTime() + timeout.toNanos();
            for (int finished = 0; finished < tasks.size(); finished++) {
                Future<T> next = done.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (next == null) {
                    throw new AssertionError(tasks.size() - finished + " of " + tasks.size() + " concurrent tasks did "
                            + "not finish within " + timeout.toMillis() + " ms (the kit's concurrency timeout): a call "
                            + "blocks, or loops");
                }
                try {
                    next.get(); // the first failure ends the wait
                } catch (ExecutionException e) {
                    Throwable cause = e.getCause();
                    if (cause instanceof BrokenBarrierException) {
                        cause = causeOfBrokenBarrier(done, tasks.size() - finished - 1, cause);
                    }
                    if (cause instanceof Error error) {
                        throw error;
                    }
                    throw (Exception) cause;
                }
            }
            List<T> results = new ArrayList<>();
            for (Future<T> f : futures) {
                results.add(f.get());
            }
            return results;
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * A task whose barrier broke failed because another task broke it (a task resets its barriers
     * when it fails): that task's failure, which completes at about the same time, names the fault.
     * Waits at most {@link #BROKEN_BARRIER_GRACE} for it.
     */
    private static <T> Throwable causeOfBrokenBarrier(CompletionService<T> done, int running, Throwable barrier)
            throws InterruptedException {
        long deadline = System.nanoTime() + BROKEN_BARRIER_GRACE.toNanos();
        for (int i = 0; i < running; i++) {
            Future<T> next = done.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (next == null) {
                return barrier;
            }
            try {
                next.get();
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof BrokenBarrierException)) {
                    return e.getCause();
                }
            }
        }
        return barrier;
    }

    /**
     * The first throwable of a type in a cause chain.
     *
     * @param t the outermost throwable
     * @param type the type looked for
     * @return the throwable, or null
     */
    static Throwable rootCauseOfType(Throwable t, Class<? extends Throwable> type) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (type.isInstance(c)) {
                return c;
            }
        }
        return null;
    }
}
