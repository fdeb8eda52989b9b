package io.wheelbeat.core;

import java.lang.management.ManagementFactory;

/** Measures what the current thread allocates, for allocation-free hot-path tests. */
public final class Allocations {

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private Allocations() {}

    /**
     * Bytes the current thread allocates running {@code work}, at the least of five runs: the
     * first runs also pay for class loading, VarHandle linkage and JIT tier changes, once.
     */
    public static long steadyBytesAllocatedBy(Runnable work) {
        long least = Long.MAX_VALUE;
        for (int run = 0; run < 5; run++) {
            long baseline = THREADS.getCurrentThreadAllocatedBytes();
            long overhead = THREADS.getCurrentThreadAllocatedBytes() - baseline;
            long before = THREADS.getCurrentThreadAllocatedBytes();
            work.run();
            least = Math.min(least, THREADS.getCurrentThreadAllocatedBytes() - before - overhead);
        }
        return least;
    }
}
