package io.wheelbeat.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The suite's plan and command line. */
class BenchmarkSuiteTest {

    @Test
    void bothIdleHandlersArePlanned() {
        assertEquals(List.of("netty", "wheel", "none"), handlers(BenchmarkSuite.plan(true)));
    }

    @Test
    void aQuickRunStillMeasuresOursAtEverySizeTheTargetsNeed() {
        List<String> oursSizes = BenchmarkSuite.plan(true).stream()
                .filter(s -> s.benchmark().equals("RearmBenchmark.rearm"))
                .filter(s -> s.params().get("contender").contains("ours"))
                .flatMap(s -> s.params().get("pending").stream())
                .sorted()
                .toList();

        assertTrue(oursSizes.containsAll(List.of("1024", "524288", "1048576")), oursSizes.toString());
    }

    @Test
    void theFullPlanRunsEveryContenderAtEverySizeInRandomOrder() {
        List<BenchmarkSuite.Step> rearm = BenchmarkSuite.plan(false).stream()
                .filter(s -> s.name().startsWith("rearm-")
                        && List.of("random").equals(s.params().get("order")))
                .toList();

        assertEquals(
                List.of("rearm-2000", "rearm-30000"),
                rearm.stream().map(BenchmarkSuite.Step::name).toList());
        assertEquals(
                7 * 4 * 2,
                rearm.stream().mapToInt(BenchmarkSuite.Step::combinations).sum());
    }

    @Test
    void everyPlannedContenderExists() {
        BenchmarkSuite.plan(false).stream()
                .map(s -> s.params().get("contender"))
                .filter(c -> c != null)
                .flatMap(List::stream)
                .forEach(Contender::of);
    }

    @Test
    void anUnknownOptionIsAUsageError() {
        int exit = new CommandLine(new BenchmarkSuite())
                .setErr(new PrintWriter(Writer.nullWriter()))
                .execute("--fast");

        assertEquals(2, exit);
    }

    @Test
    void listingThePlanRunsAndWritesNothing(@TempDir Path dir) {
        Path out = dir.resolve("bench");

        int exit = new CommandLine(new BenchmarkSuite()).execute("--quick", "--list", "--out", out.toString());

        assertEquals(0, exit);
        assertFalse(Files.exists(out), "--list must not create the report directory");
    }

    private static List<String> handlers(List<BenchmarkSuite.Step> plan) {
        return plan.stream()
                .filter(s -> s.name().equals("handler"))
                .findFirst()
                .orElseThrow()
                .params()
                .get("handler");
    }
}
