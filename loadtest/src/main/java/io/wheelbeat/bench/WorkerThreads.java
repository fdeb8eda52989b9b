package io.wheelbeat.bench;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Names the threads that timers run of their own, so that {@link ThreadCpuProfiler} can find them
 * and charge their CPU time to the contender. Every such thread's name contains {@link #PREFIX}.
 */
final class WorkerThreads {

    /** Part of the name of every timer-owned thread in the benchmarks. */
    static final String PREFIX = "bench-worker-";

    private static final AtomicInteger NUMBER = new AtomicInteger();

    private WorkerThreads() {
    }

    /** A factory of daemon threads named {@code bench-worker-<contender>-<n>}. */
    static ThreadFactory factory(String contender) {
        return task -> {
            Thread thread = new Thread(task, PREFIX + contender + "-" + NUMBER.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    /** Whether {@code threadName} is one of the timers' own threads. */
    static boolean isWorker(String threadName) {
        return threadName.contains(PREFIX);
    }
}
