package io.wheelbeat.bench;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/** Worker threads stay charged after they stop, as JMH reads the profiler after tear-down. */
class WorkerThreadsTest {

    @Test
    void aRetiredWorkerThreadKeepsItsCpuTimeAfterItEnds() throws InterruptedException {
        CountDownLatch stop = new CountDownLatch(1);
        Thread worker = WorkerThreads.factory("test").newThread(() -> {
            long x = 0;
            while (stop.getCount() > 0) {
                x++;
            }
            if (x == 42) {
                System.out.print("");
            }
        });
        worker.start();
        Thread.sleep(20);

        WorkerThreads.retire();
        stop.countDown();
        worker.join();

        assertFalse(worker.isAlive());
        assertTrue(
                WorkerThreads.cpuTimes(true).getOrDefault(worker.getId(), 0L) > 0,
                "the stopped worker's CPU time is lost");
    }

    @Test
    void onlyThreadsNamedByTheFactoryAreWorkers() {
        assertTrue(WorkerThreads.isWorker(
                WorkerThreads.factory("x").newThread(() -> {}).getName()));
        assertTrue(WorkerThreads.isWorker("executor-" + WorkerThreads.PREFIX + "kafka"));
        assertFalse(WorkerThreads.isWorker("io.wheelbeat.bench.RearmBenchmark.rearm-jmh-worker-1"));
    }
}
