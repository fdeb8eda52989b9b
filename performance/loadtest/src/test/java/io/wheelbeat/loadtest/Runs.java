package io.wheelbeat.loadtest;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Made-up results of one arm in one round, for the tests of the verdict and the exit status. */
final class Runs {

    static final int N = 500_000;
    static final int SILENCED = 16_564;

    private Runs() {}

    /** {@code run} with its live bytes per connection by class. */
    static RunResult withLiveByClass(RunResult run, Map<String, Double> byClass) {
        RunResult.Heap h = run.heap();
        RunResult.Heap heap = new RunResult.Heap(
                h.beforeBytes(),
                h.afterBytes(),
                h.bytesPerConnection(),
                h.liveBeforeBytes(),
                h.liveAfterBytes(),
                h.liveBytesPerConnection(),
                byClass,
                h.checkpoints());
        return new RunResult(
                run.tier(),
                run.transport(),
                run.connectionKind(),
                run.handler(),
                run.round(),
                run.connectionsRequested(),
                run.opened(),
                run.failed(),
                run.serverChannels(),
                run.rampSeconds(),
                run.openRatePerSecond(),
                run.windowSeconds(),
                heap,
                run.timers(),
                run.idle(),
                run.traffic(),
                run.gc(),
                run.cpu(),
                run.machine(),
                run.steady(),
                run.loopLag(),
                run.timeline());
    }

    /**
     * An arm's result with the given heap per connection, open rate, steady loop CPU per message
     * in each sub-window (one window per value), and no misses.
     */
    static RunResult run(
            String arm, int round, double heapPerConnection, double openRate, double... windowNanosPerMessage) {
        return run(arm, round, heapPerConnection, openRate, 0, 0, 0, windowNanosPerMessage);
    }

    static RunResult run(
            String arm,
            int round,
            double heapPerConnection,
            double openRate,
            int missed,
            int falseIdle,
            int failed,
            double... windowNanosPerMessage) {
        boolean idle = !arm.equals("none");
        boolean wheel = arm.startsWith("wheel"); // the handler's wheel, or the loop group's
        List<RunResult.Window> windows = new ArrayList<>();
        long messages = 100_000;
        for (double nanos : windowNanosPerMessage) {
            windows.add(new RunResult.Window(5, Math.round(nanos * messages), messages, 10 * messages));
        }
        double steadyNanos = windowNanosPerMessage.length == 0
                ? 0
                : java.util.Arrays.stream(windowNanosPerMessage).average().orElse(0);
        int share = N / 3;
        return new RunResult(
                "local",
                "local",
                "simulated",
                arm,
                round,
                N,
                share - failed,
                failed,
                share,
                share / openRate,
                openRate,
                60,
                // The heap in use is off by what the collector leaves behind, arm by arm: the verdict reads
                // the live objects.
                new RunResult.Heap(
                        0, 0, heapPerConnection + 40 * arm.length(), 0, 0, heapPerConnection, Map.of(), List.of()),
                new RunResult.Timers(
                        "test",
                        0,
                        0,
                        0,
                        0,
                        0,
                        0,
                        0,
                        0,
                        0,
                        0,
                        arm.equals("netty") ? 30_000 : 200,
                        wheel ? 1_000 + round : -1,
                        wheel ? List.of(900, 1_000 + round) : List.of(),
                        ""),
                new RunResult.Idle(
                        idle,
                        SILENCED,
                        0,
                        SILENCED - missed,
                        missed,
                        missed,
                        0,
                        falseIdle,
                        0,
                        falseIdle,
                        0,
                        0,
                        SILENCED,
                        0,
                        2_000,
                        new RunResult.Lateness(SILENCED, 0.5, 4, 5, 6, 0.7, ""),
                        List.of()),
                new RunResult.Traffic(0, 0, 33_000, 0, 0),
                new RunResult.Gc(List.of("G1"), 20, 2_000, 300, 4, 3_000, 1L << 30, 1L << 20, 10, List.of()),
                new RunResult.Cpu(60, 10, 10, steadyNanos),
                new RunResult.Machine(2, 6L << 30, "test", List.of(), 20_000, 1, 1),
                new RunResult.Steady(
                        share,
                        5.0 * windows.size(),
                        windows,
                        steadyNanos,
                        0,
                        10,
                        new RunResult.Attribution(
                                10_000, arm.equals("none") ? 0 : 1_000, 0.1, steadyNanos / 10, 1, List.of())),
                new RunResult.LoopLag(3, 10, 20),
                List.of());
    }
}
