package io.outbox.tck;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import org.junit.jupiter.api.RepeatedTest;

class KitThreadsTest {

    /**
     * A task that fails resets the barrier its peers wait on; their BrokenBarrierException completes
     * first here (the failing task waits for it), and the failure rethrown is still the one that names
     * the fault, as a bite expects its exact rule.
     */
    @RepeatedTest(20)
    void aBrokenBarrierYieldsToTheFailureThatBrokeIt() {
        CyclicBarrier barrier = new CyclicBarrier(2);
        CountDownLatch peerFailed = new CountDownLatch(1);
        Callable<Void> failing = () -> {
            while (barrier.getNumberWaiting() == 0) {
                Thread.onSpinWait();
            }
            barrier.reset();
            peerFailed.await();
            throw new AssertionError("the fault");
        };
        Callable<Void> waiting = () -> {
            try {
                barrier.await();
                return null;
            } finally {
                peerFailed.countDown();
            }
        };
        assertThatThrownBy(() -> KitThreads.runConcurrently(List.of(waiting, failing), Duration.ofSeconds(10)))
                .isInstanceOf(AssertionError.class).hasMessage("the fault");
    }
}
