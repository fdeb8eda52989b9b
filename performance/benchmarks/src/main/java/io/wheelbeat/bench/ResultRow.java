package io.wheelbeat.bench;

import java.util.Map;
import java.util.TreeMap;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;

/**
 * One benchmark result as the report needs it: which benchmark and parameters, the JMH score
 * (wall time per operation) and the secondary results of the GC and thread-CPU profilers.
 *
 * @param benchmark the benchmark's simple name, {@code Class.method}
 * @param params its parameters, by name
 * @param score wall ns per operation
 * @param error the score's 99.9% half-interval (NaN with a single iteration)
 * @param allocBytes bytes allocated per operation, all threads ({@code gc.alloc.rate.norm}), or NaN
 * @param callerCpu CPU ns per operation of the benchmark thread, or NaN
 * @param workerCpu CPU ns per operation of the timer's own threads, or NaN
 * @param processCpu CPU ns per operation of the whole JVM (GC threads included), or NaN
 * @param firedTimers timers that fired per iteration where the benchmark counts them, or NaN
 */
record ResultRow(
        String benchmark,
        Map<String, String> params,
        double score,
        double error,
        double allocBytes,
        double callerCpu,
        double workerCpu,
        double processCpu,
        double firedTimers) {

    static ResultRow of(RunResult result) {
        String full = result.getParams().getBenchmark();
        String[] parts = full.split("\\.");
        String benchmark = parts[parts.length - 2] + "." + parts[parts.length - 1];
        Map<String, String> params = new TreeMap<>();
        for (String key : result.getParams().getParamsKeys()) {
            params.put(key, result.getParams().getParam(key));
        }
        @SuppressWarnings({"rawtypes", "unchecked"}) // JMH returns a raw Map<String, Result>
        Map<String, Result<?>> secondary = (Map) result.getSecondaryResults();
        return new ResultRow(
                benchmark,
                params,
                result.getPrimaryResult().getScore(),
                result.getPrimaryResult().getScoreError(),
                secondary(secondary, "gc.alloc.rate.norm"),
                secondary(secondary, ThreadCpuProfiler.CALLER_CPU),
                secondary(secondary, ThreadCpuProfiler.WORKER_CPU),
                secondary(secondary, ThreadCpuProfiler.PROCESS_CPU),
                secondary(secondary, "firedTimers"));
    }

    private static double secondary(Map<String, Result<?>> secondary, String label) {
        Result<?> r = secondary.get(label);
        return r == null ? Double.NaN : r.getScore();
    }

    String param(String name) {
        return params.getOrDefault(name, "");
    }

    /** CPU per operation, the caller's plus the timer threads': the basis of every ratio. */
    double cpu() {
        return callerCpu + (Double.isNaN(workerCpu) ? 0 : workerCpu);
    }
}
