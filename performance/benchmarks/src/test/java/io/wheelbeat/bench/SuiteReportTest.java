package io.wheelbeat.bench;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The report computes ratios on CPU per operation and judges every target from the numbers. */
class SuiteReportTest {

    private static final SuiteReport.RunInfo INFO =
            new SuiteReport.RunInfo("t", "cmd", "now", "m", "jdk", "gc", "-Xmx4g", "it", "1 / 1");

    private static ResultRow rearm(
            String contender, String pending, double score, double caller, double worker, double alloc) {
        return new ResultRow(
                SuiteReport.REARM,
                Map.of("contender", contender, "pending", pending, "delayMs", "2000", "order", "random"),
                score,
                Double.NaN,
                alloc,
                caller,
                worker,
                Double.NaN,
                Double.NaN);
    }

    private static ResultRow ours(String benchmark, Map<String, String> params, double cpu) {
        return new ResultRow(benchmark, params, cpu, Double.NaN, 0, cpu, Double.NaN, cpu, Double.NaN);
    }

    @Test
    void ratiosAreOursOverPeerOnCallerPlusWorkerCpu() {
        List<ResultRow> rows =
                List.of(rearm("ours", "524288", 10, 10, 0, 0), rearm("netty-hwt", "524288", 60, 60, 40, 64));

        String md = SuiteReport.render(rows, List.of(), INFO);

        assertTrue(md.contains("| netty-hwt | 60.0 | 100 (60.0 + 40.0) | – | 64.0 | 0.10 |"), md);
        assertTrue(
                md.contains("| re-arm ≤ 0.5x HashedWheelTimer's CPU (524288 pending, T = 2000 ms, random order) "
                        + "| ours ÷ netty-hwt: CPU 0.10 (10.0 / 100 (60.0 + 40.0)) | met |"),
                md);
    }

    @Test
    void aMissedTargetIsReportedWithItsNumber() {
        List<ResultRow> rows = List.of(
                rearm("ours", "1048576", 70, 70, 0, 0),
                rearm("kafka", "1048576", 100, 90, 10, 40),
                ours(SuiteReport.EXPIRE, Map.of("contender", "ours", "spreadTicks", "4096"), 61.5));

        String md = SuiteReport.render(rows, List.of(), INFO);

        assertTrue(
                md.contains("| re-arm ≤ 0.5x Kafka's CPU (1048576 pending, T = 2000 ms, random order) "
                        + "| ours ÷ kafka: CPU 0.70 (70.0 / 100 (90.0 + 10.0)) | **MISSED** |"),
                md);
        assertTrue(
                md.contains("| expiry ≤ 50 ns per timer, schedule + fire (524,288 timers over 4096 ticks) "
                        + "| CPU 61.5, wall 61.5 | **MISSED** |"),
                md);
    }

    @Test
    void reArmTargetsAreJudgedAt512kAndOneMillionOnly() {
        List<ResultRow> rows = new ArrayList<>(
                List.of(rearm("ours", "1024", 10, 10, 0, 0), rearm("netty-eventloop", "1024", 100, 100, 0, 64)));

        String md = SuiteReport.render(rows, List.of(), INFO);

        assertFalse(md.contains("re-arm ≥ 5x cheaper"), md);
    }

    @Test
    void memoryTargetUsesOursAtDefaultSettings() {
        List<MemoryFootprint.Measurement> memory = List.of(
                new MemoryFootprint.Measurement("ours", 524288, 22.5, 22.6),
                new MemoryFootprint.Measurement("netty-hwt", 524288, 56.2, Double.NaN));

        String md = SuiteReport.render(List.of(), memory, INFO);

        assertTrue(
                md.contains(
                        "| ≤ 24 B per pending timer (524288 pending, default settings) | 22.5 B heap, 22.6 B JOL | met"
                                + " |"),
                md);
        assertTrue(md.contains("| netty-hwt | 524288 | 56.2 | – | 0.40 |"), md);
    }

    @Test
    void theHandlerTargetIsNotRunUntilTheWheelHandlerIsMeasured() {
        ResultRow netty = new ResultRow(
                SuiteReport.HANDLER, Map.of("handler", "netty"), 40, Double.NaN, 0, 40, 0, 40, Double.NaN);

        String md = SuiteReport.render(List.of(netty), List.of(), INFO);

        assertTrue(md.contains("not measured: WheelIdleStateHandler was not in this build | NOT RUN |"), md);
    }

    @Test
    void theHandlerTargetsCompareEachSizeWithNettysAtTheSameSize() {
        List<ResultRow> rows = List.of(
                handlerRow("netty", "1", 80), handlerRow("wheel", "1", 60),
                handlerRow("netty", "524288", 400), handlerRow("wheel", "524288", 100),
                handlerRow("netty", "1024", 90), handlerRow("wheel", "1024", 85));

        String md = SuiteReport.render(rows, List.of(), INFO);

        assertTrue(
                md.contains("| handler per read batch ≤ 0.8x IdleStateHandler's CPU (one channel, in cache) | "
                        + "wheel ÷ netty: CPU 0.75"),
                md);
        assertTrue(
                md.contains("| handler per read batch ≤ 0.5x IdleStateHandler's CPU (524288 channels, random order) | "
                        + "wheel ÷ netty: CPU 0.25"),
                md);
        assertFalse(md.contains("IdleStateHandler's CPU (1024 channels"), md);
        assertTrue(md.contains("| wheel | 524288 |"), md);
    }

    @Test
    void theIdleMachineryIsWhatEachHandlerAddsToThePipelineWithoutOne() {
        List<ResultRow> rows =
                List.of(handlerRow("netty", "1", 80), handlerRow("wheel", "1", 60), handlerRow("none", "1", 40));

        String md = SuiteReport.render(rows, List.of(), INFO);

        assertTrue(
                md.contains("| the same, idle machinery only (minus the pipeline without a handler) | "
                        + "wheel ÷ netty: CPU 0.50 (20.0 / 40.0) | met |"),
                md);
    }

    @Test
    void aHandlerOverItsBoundIsMissed() {
        String md = SuiteReport.render(
                List.of(handlerRow("netty", "1", 80), handlerRow("wheel", "1", 70)), List.of(), INFO);

        assertTrue(md.contains("(one channel, in cache) | wheel ÷ netty: CPU 0.88 (70.0 / 80.0) | **MISSED** |"), md);
    }

    private static ResultRow handlerRow(String handler, String channels, double cpu) {
        return new ResultRow(
                SuiteReport.HANDLER,
                Map.of("handler", handler, "channels", channels),
                cpu,
                Double.NaN,
                0,
                cpu,
                Double.NaN,
                cpu,
                Double.NaN);
    }
}
