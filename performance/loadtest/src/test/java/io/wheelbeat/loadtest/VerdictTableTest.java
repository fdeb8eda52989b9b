package io.wheelbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.wheelbeat.loadtest.Verdict.Outcome;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The verdict table built from made-up arm results: which arms are compared, the baseline taken
 * off within each round and sub-window, the peer's misses as a row, and what the reader sees.
 */
class VerdictTableTest {

    private static final int N = Runs.N;

    @Test
    void needsBothArms() {
        assertTrue(VerdictTable.of(
                        N,
                        List.of(Runs.run("wheel", 1, 3_300, 40_000, 400), Runs.run("none", 1, 3_200, 40_000, 300)),
                        "wheel",
                        "netty")
                .isEmpty());
    }

    @Test
    void threeRoundsCallTheIdleMachineryAgainstTheBaselineOfEachWindow() {
        List<RunResult> runs = new ArrayList<>();
        double[] drift = {1.0, 1.3, 0.8}; // the machine differs from round to round, alike for every arm
        for (int round = 1; round <= 3; round++) {
            double d = drift[round - 1];
            runs.add(Runs.run("wheel", round, 3_180 + 132, 39_000 + round * 500, 1_100 * d, 1_110 * d, 1_090 * d));
            // The open rates cross: higher for netty in one round, lower in the others.
            runs.add(Runs.run(
                    "netty",
                    round,
                    3_180 + 281,
                    39_000 + round * 500 + (round == 2 ? -700 : 300),
                    1_400 * d,
                    1_420 * d,
                    1_380 * d));
            runs.add(Runs.run("none", round, 3_180, 40_000, 1_000 * d, 1_010 * d, 990 * d));
        }
        VerdictTable table = VerdictTable.of(N, runs, "wheel", "netty").orElseThrow();

        Verdict.Call bytes = row(table, VerdictTable.IDLE_MACHINERY_BYTES).call();
        assertEquals(132.0 / 281, bytes.ratio(), 1e-9);
        assertEquals(Outcome.WON, bytes.outcome());

        Verdict.Call idleCpu = row(table, VerdictTable.IDLE_MACHINERY_CPU).call();
        assertEquals(100.0 / 400, idleCpu.ratio(), 0.01);
        assertEquals(Outcome.WON, idleCpu.outcome());
        assertTrue(idleCpu.high() < 1, idleCpu.toString());

        Verdict.Call cpu = row(table, VerdictTable.LOOP_CPU).call();
        assertEquals(1_100.0 / 1_400, cpu.ratio(), 0.01);
        assertEquals(9, cpu.units(), "three sub-windows in each of three rounds");

        assertEquals(
                Outcome.EQUAL, row(table, VerdictTable.WRONG_IDLE_EVENTS).call().outcome());
        assertEquals(
                Outcome.WITHIN_NOISE, row(table, VerdictTable.OPEN_RATE).call().outcome());
        assertTrue(
                table.markdown()
                        .contains("| idle machinery per connection, minus none (B) | 132 | 281 | 0.47 [0.47 to 0.47] |"
                                + " won |"),
                table.markdown());
        assertTrue(table.plain().contains("wheel/netty [95% interval]"), table.plain());
        assertTrue(table.plain().contains("3 rounds, arm order rotated"), table.plain());

        assertEquals(
                List.of(new VerdictTable.WheelRun(N, "wheel", 1_003, List.of(1_001, 1_002, 1_003), 4_096)),
                table.wheelRuns(),
                "only the wheel arm has a wheel; its largest run over the rounds");
        assertTrue(
                table.plain()
                        .contains("(timers fired + moved, over the arm's loops; the engine's bound 4,096): "
                                + "wheel 1,003 (by round: 1,001, 1,002, 1,003)."),
                table.plain());
        assertTrue(table.markdown().contains("wheel 1,003 (by round"), table.markdown());
    }

    @Test
    void thePeersMissesAreAWinOfOursAndOursALoss() {
        List<RunResult> peerMissed = List.of(
                Runs.run("wheel", 1, 3_300, 40_000, 400, 410),
                Runs.run("netty", 1, 3_400, 40_000, 494, 0, 0, 500, 510));
        assertEquals(
                Outcome.WON,
                row(VerdictTable.of(N, peerMissed, "wheel", "netty").orElseThrow(), VerdictTable.WRONG_IDLE_EVENTS)
                        .call()
                        .outcome());
        List<RunResult> oursMissed = List.of(
                Runs.run("wheel", 1, 3_300, 40_000, 19_523, 0, 0, 400, 410),
                Runs.run("netty", 1, 3_400, 40_000, 500, 510));
        VerdictTable table = VerdictTable.of(N, oursMissed, "wheel", "netty").orElseThrow();
        assertEquals(
                Outcome.LOST, row(table, VerdictTable.WRONG_IDLE_EVENTS).call().outcome());
        assertTrue(table.plain().contains("LOST"), table.plain());
    }

    @Test
    void oneRoundHasNoIntervalForPerRoundRows() {
        VerdictTable table = VerdictTable.of(
                        N,
                        List.of(
                                Runs.run("wheel", 1, 3_300, 45_000, 400, 410),
                                Runs.run("netty", 1, 3_400, 40_000, 500, 510)),
                        "wheel",
                        "netty")
                .orElseThrow();
        assertEquals(
                Outcome.NO_INTERVAL, row(table, VerdictTable.HEAP_BYTES).call().outcome());
        assertEquals(
                Outcome.NO_INTERVAL, row(table, VerdictTable.OPEN_RATE).call().outcome());
        assertTrue(table.plain().contains("one value: no interval"), table.plain());
    }

    @Test
    void theJfrRowComesWithTheSamplingInterval() {
        VerdictTable table = VerdictTable.of(
                        N,
                        List.of(
                                Runs.run("wheel", 1, 3_300, 45_000, 400, 410),
                                Runs.run("netty", 1, 3_400, 40_000, 800, 810)),
                        "wheel",
                        "netty")
                .orElseThrow();
        Verdict.Call sampled = row(table, VerdictTable.IDLE_CPU_SAMPLED).call();
        // Both sides: 1,000 of 10,000 samples idle; ours runs at half the CPU per message.
        assertEquals(0.5, sampled.ratio(), 0.01);
        assertTrue(sampled.low() < 0.5 && sampled.high() > 0.5 && sampled.high() < 1, sampled.toString());
        assertEquals(Outcome.WON, sampled.outcome());
    }

    @Test
    void loopGroupsCompareUnderTheirOwnNames() {
        VerdictTable table = VerdictTable.of(
                        N,
                        List.of(
                                Runs.run("wheel-loop", 1, 3_300, 45_000, 400, 410),
                                Runs.run("netty-loop", 1, 3_400, 40_000, 500, 510)),
                        "wheel-loop",
                        "netty-loop")
                .orElseThrow();
        assertTrue(table.plain().contains("wheel-loop against netty-loop"), table.plain());
        assertEquals(
                List.of("wheel-loop"),
                table.wheelRuns().stream().map(VerdictTable.WheelRun::arm).toList());
    }

    @Test
    void loopGroupsCallHeapPerConnectionOnRoundsWithAnInterval() {
        List<RunResult> runs = new ArrayList<>();
        for (int round = 1; round <= 4; round++) {
            // The share opened later reads more heap, and the order rotates: each arm is later twice.
            double later = round % 2 == 0 ? 40 : 0;
            runs.add(Runs.run("wheel-loop", round, 3_000 + later, 45_000, 400, 410));
            runs.add(Runs.run("netty-loop", round, 3_100 + 40 - later, 45_000, 500, 510));
        }
        VerdictTable table =
                VerdictTable.of(N, runs, "wheel-loop", "netty-loop").orElseThrow();
        Verdict.Call heap = row(table, VerdictTable.HEAP_BYTES).call();
        assertEquals(3_020.0 / 3_120, heap.ratio(), 1e-9);
        assertEquals(4, heap.units(), "one unit per round");
        assertTrue(heap.hasInterval() && heap.low() < heap.ratio() && heap.ratio() < heap.high(), heap.toString());
        assertTrue(table.plain().contains("heap per connection (B)"), table.plain());
    }

    private static VerdictTable.Row row(VerdictTable table, VerdictTable.Measure measure) {
        return table.rows().stream()
                .filter(r -> r.measure() == measure)
                .findFirst()
                .orElseThrow();
    }
}
