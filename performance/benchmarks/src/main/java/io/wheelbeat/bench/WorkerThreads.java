package io.wheelbeat.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Names the threads that timers run of their own, so that {@link ThreadCpuProfiler} can find them
 * and charge their CPU time to the contender. Every such thread's name contains {@link #PREFIX}.
 *
 * <p>JMH tears a trial down before the profiler reads the last iteration, so a contender records
 * its threads' CPU time ({@link #retire()}) just before it stops them; the profiler reads live
 * threads from the JVM and stopped ones from that record.
 */
final class WorkerThreads {

    /** Part of the name of every timer-owned thread in the benchmarks. */
    static final String PREFIX = "bench-worker-";

    private static final AtomicInteger NUMBER = new AtomicInteger();
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    /** Final CPU time (ns) of worker threads that were stopped, by thread id. */
    private static final Map<Long, Long> RETIRED = new ConcurrentHashMap<>();

    private WorkerThreads() {}

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

    /** Records the CPU time of every live worker thread: call it just before stopping them. */
    static void retire() {
        RETIRED.putAll(cpuTimes(true));
    }

    /**
     * CPU time (ns) by thread id of the worker threads ({@code workers}) or of JMH's benchmark
     * threads: live ones as the JVM reports them, plus, for workers, those recorded by
     * {@link #retire()} and since stopped.
     */
    static Map<Long, Long> cpuTimes(boolean workers) {
        Map<Long, Long> times = new HashMap<>();
        if (workers) {
            times.putAll(RETIRED);
        }
        for (ThreadInfo info : THREADS.getThreadInfo(THREADS.getAllThreadIds())) {
            if (info == null) {
                continue;
            }
            String name = info.getThreadName();
            if (workers ? isWorker(name) : name.contains("jmh-worker")) {
                long cpu = THREADS.getThreadCpuTime(info.getThreadId());
                if (cpu >= 0) {
                    times.put(info.getThreadId(), cpu);
                }
            }
        }
        return times;
    }
}
