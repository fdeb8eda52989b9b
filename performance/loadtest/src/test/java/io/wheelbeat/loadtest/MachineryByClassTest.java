package io.wheelbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The report's idle machinery by class: each arm's classes minus the baseline's, round by round. */
class MachineryByClassTest {

    private static RunResult run(String arm, int round, Map<String, Double> byClass) {
        return Runs.withLiveByClass(Runs.run(arm, round, 3_300, 40_000, 1_000), byClass);
    }

    @Test
    void takesTheBaselineOffWithinEachRoundThenAveragesTheRounds() {
        List<RunResult> runs = new ArrayList<>();
        // A shared table grows in whichever arm's share crosses its threshold: round 1 none, round 2 wheel.
        runs.add(run("wheel", 1, Map.of("Handler", 72.0, "Context", 256.0, "[Table", 6.0)));
        runs.add(run("netty", 1, Map.of("IdleStateHandler", 112.0, "Context", 256.0, "[Table", 6.0)));
        runs.add(run("none", 1, Map.of("Context", 192.0, "[Table", 12.0)));
        runs.add(run("wheel", 2, Map.of("Handler", 72.0, "Context", 256.0, "[Table", 12.0)));
        runs.add(run("netty", 2, Map.of("IdleStateHandler", 112.0, "Context", 256.0, "[Table", 6.0)));
        runs.add(run("none", 2, Map.of("Context", 192.0, "[Table", 6.0)));

        Map<String, Map<String, Double>> byClass = Report.machineryByClass(runs, Runs.N, 1);

        assertEquals(List.of("IdleStateHandler", "Handler", "Context", "[Table"), List.copyOf(byClass.keySet()));
        assertEquals(Map.of("netty", 112.0), byClass.get("IdleStateHandler"), "in neither wheel nor none");
        assertEquals(Map.of("wheel", 72.0), byClass.get("Handler"));
        assertEquals(Map.of("wheel", 64.0, "netty", 64.0), byClass.get("Context"));
        assertEquals(
                Map.of("wheel", 0.0, "netty", -3.0),
                byClass.get("[Table"),
                "the table's steps cancel over the rounds for wheel; netty's share never crossed one");
        assertEquals(3, Report.machineryByClass(runs, Runs.N, 10).size(), "what moved less is left out");
    }

    @Test
    void aRoundWithoutTheBaselineCountsForNothing() {
        List<RunResult> runs = List.of(
                run("wheel", 1, Map.of("Handler", 72.0)),
                run("none", 1, Map.of()),
                run("wheel", 2, Map.of("Handler", 500.0)));
        assertEquals(Map.of("Handler", Map.of("wheel", 72.0)), Report.machineryByClass(runs, Runs.N, 1));
    }
}
