package io.wheelbeat.bench;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The report computes ratios on CPU per operation and judges every target from the numbers. */
class SuiteReportTest {

    private static final SuiteReport.RunInfo INFO = new SuiteReport.RunInfo("t", "cmd", "now", "m", "jdk", "gc",
            "-Xmx4g", "it", "1 / 1");

    private static ResultRow rearm(String contender, String pending, double score, double caller, double worker,
            double alloc) {
        return new ResultRow(SuiteReport.REARM, Map.of("contender", contender, "pending", pending, "delayMs", "2000", "order", "random"),
                score, Double.NaN, alloc, caller, worker, Double.NaN, Double.NaN);
    }

    @Test
    void ratiosAreOursOverPeerOnCallerPlusWorkerCpu() {
        List<ResultRow> rows = List.of(rearm("ours", "524288", 10, 10, 0, 0),
                rearm("netty-hwt", "524288", 60, 60, 40, 64));

        String md = SuiteReport.render(rows, List.of(), INFO);

        assertTrue(md.contains("| netty-hwt | 60.0 | 100 (60.0 + 40.0) | – | 64.0 | 0.10 |"), md);
        assertTrue(md.contains("re-arm ≥ 5x faster than HashedWheelTimer (512k pending, T = 2000 ms, random order) | ours ÷ netty-hwt: CPU 0.10"), md);
    }

    @Test
    void aMissedTargetIsReportedWithItsNumber() {
        List<ResultRow> rows = List.of(rearm("ours", "524288", 25, 24, 0, 0),
                rearm("agrona", "524288", 15, 15, 0, 0));

        String md = SuiteReport.render(rows, List.of(), INFO);

        assertTrue(md.contains("| re-arm ≤ 20 ns on the owner thread (512k pending, T = 2000 ms, random order) | wall 25.0, CPU 24.0 | **MISSED** |"), md);
        assertTrue(md.contains("within 1.3x of Agrona's wheel (512k pending, T = 2000 ms, random order) | ours ÷ agrona: CPU 1.60"), md);
        assertTrue(md.contains("(24.0 / 15.0), wall+timer threads 1.67 | **MISSED** |"), md);
    }

    @Test
    void theSizeTargetComparesOneMillionPendingWithOneThousand() {
        List<ResultRow> rows = new ArrayList<>(List.of(rearm("ours", "524288", 10, 10, 0, 0),
                rearm("ours", "1024", 10, 10, 0, 0), rearm("ours", "1048576", 14, 16, 0, 0)));

        String md = SuiteReport.render(rows, List.of(), INFO);

        assertTrue(md.contains("| re-arm at 1M pending ≤ 1.5x the cost at 1k (T = 2000 ms, random order) | wall 1.40 (14.0 / 10.0), CPU 1.60"
                + " | **MISSED** on CPU time, met on wall time |"), md);
    }

    @Test
    void memoryTargetUsesOursAtDefaultSettings() {
        List<MemoryFootprint.Measurement> memory = List.of(new MemoryFootprint.Measurement("ours", 524288, 30.1, 30.0),
                new MemoryFootprint.Measurement("netty-hwt", 524288, 60.2, Double.NaN));

        String md = SuiteReport.render(List.of(), memory, INFO);

        assertTrue(md.contains("| ≤ 32 B per pending timer (524288 pending, default settings) | 30.1 B | met |"), md);
        assertTrue(md.contains("| netty-hwt | 524288 | 60.2 | – | 0.50 |"), md);
    }

    @Test
    void theHandlerTargetIsNotRunUntilTheWheelHandlerIsMeasured() {
        ResultRow netty = new ResultRow(SuiteReport.HANDLER, Map.of("handler", "netty"), 40, Double.NaN, 0, 40, 0, 40, Double.NaN);

        String md = SuiteReport.render(List.of(netty), List.of(), INFO);

        assertTrue(md.contains("not measured: WheelIdleStateHandler was not in this build | NOT RUN |"), md);
    }
}
