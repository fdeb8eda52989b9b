package io.wheelbeat.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.List;
import java.util.Map;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.profile.InternalProfiler;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;

/**
 * A JMH profiler that charges thread CPU time per operation, read from {@link ThreadMXBean}
 * around every iteration:
 * <ul>
 *   <li>{@value #WORKER_CPU}: the timers' own threads (named through {@link WorkerThreads}),
 *       the cost a threaded timer adds beside the caller's time;</li>
 *   <li>{@value #CALLER_CPU}: JMH's benchmark threads, the caller's CPU, which unlike the score
 *       leaves out time spent waiting (for a threaded timer to fire) or descheduled;</li>
 *   <li>{@value #PROCESS_CPU}: the whole JVM, which adds what neither of those sees, above all the
 *       garbage collector's threads (the cost of what a contender allocates), and some noise
 *       (JIT compiler, JMH's own threads).</li>
 * </ul>
 * A thread that starts during an iteration is charged from zero; one that a contender stops is
 * charged up to the moment it recorded itself ({@link WorkerThreads#retire()}).
 */
public final class ThreadCpuProfiler implements InternalProfiler {

    /** Label of the timers' own threads' CPU per operation. */
    public static final String WORKER_CPU = "worker.cpu";
    /** Label of the benchmark threads' CPU per operation. */
    public static final String CALLER_CPU = "caller.cpu";
    /** Label of the whole JVM's CPU per operation. */
    public static final String PROCESS_CPU = "process.cpu";

    private final com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    private long processStart;
    private Map<Long, Long> workerStart = Map.of();
    private Map<Long, Long> callerStart = Map.of();

    /** Required by JMH, which instantiates profilers by class name. */
    public ThreadCpuProfiler() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        if (!threads.isThreadCpuTimeSupported()) {
            throw new IllegalStateException("this JVM cannot measure thread CPU time");
        }
        threads.setThreadCpuTimeEnabled(true);
    }

    @Override
    public String getDescription() {
        return "CPU time per operation of the timers' own threads, of the benchmark threads and of the JVM";
    }

    @Override
    public void beforeIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams) {
        workerStart = WorkerThreads.cpuTimes(true);
        callerStart = WorkerThreads.cpuTimes(false);
        processStart = os.getProcessCpuTime();
    }

    @Override
    public List<? extends Result<?>> afterIteration(
            BenchmarkParams benchmarkParams, IterationParams iterationParams, IterationResult result) {
        long ops = Math.max(1, result.getMetadata().getAllOps());
        return List.of(
                new ScalarResult(WORKER_CPU, spent(workerStart, true) / (double) ops, "ns/op", AggregationPolicy.AVG),
                new ScalarResult(CALLER_CPU, spent(callerStart, false) / (double) ops, "ns/op", AggregationPolicy.AVG),
                new ScalarResult(
                        PROCESS_CPU,
                        (os.getProcessCpuTime() - processStart) / (double) ops,
                        "ns/op",
                        AggregationPolicy.AVG));
    }

    private static long spent(Map<Long, Long> start, boolean workers) {
        long total = 0;
        for (Map.Entry<Long, Long> now : WorkerThreads.cpuTimes(workers).entrySet()) {
            total += now.getValue() - start.getOrDefault(now.getKey(), 0L);
        }
        return total;
    }
}
