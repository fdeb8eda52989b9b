package io.wheelbeat.loadtest;

import io.netty.util.concurrent.DefaultThreadFactory;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.ToLongFunction;
import java.util.stream.Collectors;

/**
 * A thread factory for event loops that remembers its threads, so that the CPU time and the heap
 * allocation of one side (server loops, client loops) can be told apart from the rest of the
 * process.
 */
final class LoopThreads extends DefaultThreadFactory {

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final com.sun.management.ThreadMXBean ALLOCATION =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private final List<Thread> threads = new ArrayList<>();

    LoopThreads(String prefix) {
        super(prefix, true);
    }

    @Override
    protected Thread newThread(Runnable r, String name) {
        Thread thread = super.newThread(r, name);
        synchronized (threads) {
            threads.add(thread);
        }
        return thread;
    }

    /** The names of the threads made so far. */
    Set<String> names() {
        synchronized (threads) {
            return threads.stream().map(Thread::getName).collect(Collectors.toUnmodifiableSet());
        }
    }

    /** CPU time used so far by the live threads of this factory, in nanoseconds. */
    long cpuNanos() {
        return sum(thread -> THREADS.getThreadCpuTime(thread.getId()));
    }

    /** Heap bytes allocated so far by the live threads of this factory. */
    long allocatedBytes() {
        return sum(thread -> ALLOCATION.getThreadAllocatedBytes(thread.getId()));
    }

    /** The sum of a per-thread reading over the threads, skipping the -1 of a thread that has ended. */
    private long sum(ToLongFunction<Thread> reading) {
        long total = 0;
        synchronized (threads) {
            for (Thread thread : threads) {
                long value = reading.applyAsLong(thread);
                if (value > 0) {
                    total += value;
                }
            }
        }
        return total;
    }
}
