package io.wheelbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.wheelbeat.loadtest.Verdict.Outcome;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The verdict table built from run results (made up here, no load test runs): which runs are
 * compared, the idle machinery taken against the baseline of the same round, the direction of
 * each measure, and what the reader sees.
 */
class VerdictTableTest {

    private static final int N = 500_000;

    @Test
    void needsBothWheelAndNetty() {
        assertTrue(VerdictTable.of(N, List.of(run("wheel", 1, 3_300, 400, 2_000, 40_000),
                run("none", 1, 3_200, 300, 1_900, 40_000))).isEmpty());
    }

    @Test
    void threeRoundsCallAWinALossAndNoise() {
        List<RunResult> runs = new ArrayList<>();
        double[] noneHeap = {3_180, 3_190, 3_170};
        for (int round = 1; round <= 3; round++) {
            // wheel: 132 B more than none in every round, netty 281 B; wheel's GC always longer;
            // the open rates overlap.
            runs.add(run("wheel", round, noneHeap[round - 1] + 132, 450 + round, 2_600 + round * 10, 39_000 + round * 500));
            runs.add(run("netty", round, noneHeap[round - 1] + 281, 560 + round, 2_300 + round * 10, 39_200 + round * 500));
            runs.add(run("none", round, noneHeap[round - 1], 300, 2_000, 40_000));
        }
        VerdictTable table = VerdictTable.of(N, runs).orElseThrow();

        VerdictTable.Row bytes = row(table, VerdictTable.IDLE_MACHINERY_BYTES);
        assertEquals(new Verdict.Spread(132, 132, 132, 3), roundSpread(bytes.ours()));
        assertEquals(Outcome.WON, bytes.call().outcome());
        assertEquals(132.0 / 281, bytes.call().ratio(), 1e-9);

        VerdictTable.Row gc = row(table, VerdictTable.GC_TOTAL);
        assertEquals(Outcome.LOST, gc.call().outcome());
        assertTrue(table.markdown().contains("| GC pauses, total (ms) | 2,620 [2,610 to 2,630] | 2,320 [2,310 to 2,330] | 1.13 | **lost** |"),
                table.markdown());
        assertTrue(table.plain().contains("LOST"), table.plain());

        VerdictTable.Row open = row(table, VerdictTable.OPEN_RATE);
        assertEquals(Outcome.WITHIN_NOISE, open.call().outcome());
        assertTrue(table.markdown().contains("| open rate (connections/s) | 40,000 [39,500 to 40,500] | 40,200 [39,700 to 40,700] | 1.00 | within noise |"),
                table.markdown());
        assertTrue(table.markdown().contains("median of 3 runs each"), table.markdown());
    }

    @Test
    void aHigherOpenRateWinsAndALowerOneLoses() {
        List<RunResult> faster = List.of(run("wheel", 1, 3_300, 400, 2_000, 45_000), run("netty", 1, 3_400, 500, 2_000, 40_000));
        assertEquals(Outcome.WON, row(VerdictTable.of(N, faster).orElseThrow(), VerdictTable.OPEN_RATE).call().outcome());
        List<RunResult> slower = List.of(run("wheel", 1, 3_300, 400, 2_000, 35_000), run("netty", 1, 3_400, 500, 2_000, 40_000));
        assertEquals(Outcome.LOST, row(VerdictTable.of(N, slower).orElseThrow(), VerdictTable.OPEN_RATE).call().outcome());
    }

    @Test
    void withoutTheBaselineTheWholeRunIsCompared() {
        VerdictTable table = VerdictTable.of(N, List.of(run("wheel", 1, 3_300, 400, 2_000, 40_000),
                run("netty", 1, 3_400, 500, 2_000, 40_000))).orElseThrow();
        assertEquals(Outcome.WON, row(table, VerdictTable.HEAP_BYTES).call().outcome());
        assertEquals(Outcome.WON, row(table, VerdictTable.LOOP_CPU).call().outcome());
        assertEquals(Outcome.EQUAL, row(table, VerdictTable.GC_TOTAL).call().outcome());
        assertTrue(table.plain().contains("One run each: the spread between identical runs is unknown"), table.plain());
    }

    private static Verdict.Spread roundSpread(Verdict.Spread s) {
        return new Verdict.Spread(Math.round(s.median()), Math.round(s.min()), Math.round(s.max()), s.runs());
    }

    private static VerdictTable.Row row(VerdictTable table, VerdictTable.Measure measure) {
        return table.rows().stream().filter(r -> r.measure() == measure).findFirst().orElseThrow();
    }

    /** A run with the given heap per connection, server-loop CPU per message, GC total pause and open rate. */
    static RunResult run(String handler, int round, double heapPerConnection, double nanosPerMessage,
                         double gcTotalMs, double openRate) {
        boolean idle = !handler.equals("none");
        return new RunResult("local", "local", "simulated", handler, round, N, N, 0, N, N / openRate, openRate, 60,
                new RunResult.Heap(0, 0, heapPerConnection, List.of()),
                new RunResult.Timers("test", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, handler.equals("netty") ? 30_000 : 2_000, ""),
                new RunResult.Idle(idle, 49_693, 0, 49_693, 0, 0, 0, 0, 0, 0, 0, 0, 49_693, 0, 2_000,
                        new RunResult.Lateness(49_693, 0.5, 4, 5, 6, 0.7, "")),
                new RunResult.Traffic(0, 0, 100_000, 0, 0),
                new RunResult.Gc(List.of("G1"), 20, gcTotalMs, gcTotalMs / 6, 5, 3_000, 1L << 30, 1L << 20, 10, List.of()),
                new RunResult.Cpu(60, 10, 10, nanosPerMessage),
                new RunResult.Machine(2, 6L << 30, "test", List.of(), 20_000, 1, 1), List.of());
    }
}
