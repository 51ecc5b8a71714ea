package io.outbox.tck;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/** Thread and exception helpers of the kit's races. Stateless. */
final class KitThreads {

    private KitThreads() {
    }

    /**
     * Starts every task at once on its own thread and waits for all of them, failing on the first
     * error.
     *
     * @param tasks the tasks; not empty
     * @param timeout how long to wait for each task
     * @throws Exception the first task's failure, or a timeout
     */
    static void runConcurrently(List<? extends Callable<?>> tasks, Duration timeout) throws Exception {
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(tasks.size());
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (Callable<?> task : tasks) {
                futures.add(pool.submit(() -> {
                    go.await();
                    return task.call();
                }));
            }
            go.countDown();
            for (Future<?> f : futures) {
                f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
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
