package io.wheelbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The quick mode end to end, as the ordinary test command runs it: 20,000 local connections
 * over three arms side by side (wheelbeat's handler, Netty's, none), two rounds, in this JVM,
 * with shorter steady sub-windows and silence spread than the preset's (the suite judges that
 * they are measured, not their precision). Real time, so it judges correctness only (every
 * connection opened, every silenced one detected, no event before a whole idle period without
 * reads, steady windows and samples taken, a well-formed report), never speed (see {@link IdleTruth}).
 */
class QuickLoadTest {

    @TempDir
    static Path reportDir;

    private static final List<String> IDLE_HANDLERS = List.of("wheel", "netty");
    private static int exitCode;
    private static String errors;
    private static Report.SessionReport report;

    @BeforeAll
    static void runQuickScenario() throws Exception {
        StringWriter err = new StringWriter();
        picocli.CommandLine cl = LoadTest.commandLine();
        cl.setErr(new PrintWriter(err, true));
        exitCode = cl.execute(
                "--quick",
                "--idle-handler",
                "wheel,netty",
                "--in-process",
                "--repeat",
                "2",
                "--tolerance",
                IdleTruth.TOLERANCE,
                "--window",
                "2500ms",
                "--silence-spread",
                "500ms",
                "--report-dir",
                reportDir.toString());
        errors = err.toString();
        File json = reportDir.resolve(Report.JSON_FILE).toFile();
        if (json.isFile()) {
            report = Report.json().readValue(json, Report.SessionReport.class);
        }
    }

    @Test
    void exitsCleanlyUnlessTheMachineStalled() {
        IdleTruth.assertCleanUnlessTheMachineStalled(exitCode, report, errors);
    }

    @Test
    void writesAReportThatReadsBackWithBothRuns() {
        assertNotNull(report, "report.json is missing or unreadable");
        assertEquals("local", report.tier());
        assertEquals(
                List.of("wheel", "netty", "none", "netty", "none", "wheel"),
                report.runs().stream().map(RunResult::handler).toList(),
                "round 2 rotates the arms");
        assertEquals(report.runs().stream().allMatch(Report::clean), report.clean());
        assertTrue(
                report.verdict().stream()
                        .anyMatch(r -> r.measure().startsWith("server-loop CPU per message")
                                && r.low() != null
                                && r.high() != null
                                && r.units() == 4),
                "two rounds of two sub-windows");
    }

    @Test
    void opensEveryConnectionInEveryRoundEachArmItsShare() {
        for (int round = 1; round <= 2; round++) {
            int opened = 0;
            for (RunResult run : runsOf(round)) {
                assertEquals(20_000, run.connectionsRequested(), run.handler());
                assertTrue(run.opened() == 6_666 || run.opened() == 6_667, run.handler() + ": " + run.opened());
                assertEquals(0, run.failed(), run.handler());
                assertEquals(run.opened(), run.serverChannels(), run.handler());
                assertEquals(0, run.idle().neverHeard(), run.handler());
                opened += run.opened();
            }
            assertEquals(20_000, opened);
        }
    }

    @Test
    void measuresEachArmsLoopsInTheSteadyWindowAndSamplesThem() {
        for (RunResult run : report.runs()) {
            RunResult.Steady steady = run.steady();
            assertEquals(2, steady.windows().size(), run.handler());
            for (RunResult.Window w : steady.windows()) {
                assertTrue(w.messages() > 0 && w.loopCpuNanos() > 0, run.handler() + ": " + w);
            }
            assertTrue(steady.loopNanosPerMessage() > 0 && steady.loopNanosPerConnectionSecond() > 0, run.handler());
            RunResult.Attribution a = steady.attribution();
            assertTrue(a.idleSamples() <= a.samples() && a.idleShare() >= 0 && a.idleShare() <= 1, run.handler() + a);
            assertTrue(run.loopLag().maxMs() >= run.loopLag().steadyMaxMs(), run.handler());
        }
        // Over both rounds each arm's loops ran 10 s under JFR, as long as one round of the
        // preset's windows; one round of 5 s may get no sample of a loop beside busy processes.
        for (String arm : List.of("wheel", "netty", "none")) {
            assertTrue(
                    report.runs().stream()
                                    .filter(r -> r.handler().equals(arm))
                                    .mapToLong(r -> r.steady().attribution().samples())
                                    .sum()
                            > 0,
                    arm + ": JFR sampled its loops");
        }
    }

    @Test
    void detectsEverySilencedConnectionAndNoneBeforeAWholeIdlePeriodWithoutReads() {
        for (String handler : IDLE_HANDLERS) {
            RunResult.Idle idle = run(handler).idle();
            assertTrue(
                    idle.plannedSilent() > 500,
                    "the plan silences about 10% of the arm's 6,667: " + idle.plannedSilent());
            IdleTruth.assertHandlerRight(run(handler));
            IdleTruth.assertHandlerRight(run(handler, 2));
            assertEquals(
                    idle.plannedSilent(),
                    Charts.decode(idle.lateness().histogram()).getTotalCount(),
                    handler);
        }
    }

    @Test
    void reportsLatenessPercentilesInOrder() {
        for (String handler : IDLE_HANDLERS) {
            RunResult.Lateness l = run(handler).idle().lateness();
            assertTrue(
                    l.p50Ms() >= 0 && l.p50Ms() <= l.p99Ms() && l.p99Ms() <= l.p999Ms() && l.p999Ms() <= l.maxMs(),
                    handler + ": " + l);
        }
    }

    @Test
    void baselineRunHasNoIdleHandlerAndSchedulesNoTimers() {
        RunResult none = run("none");
        assertFalse(none.idle().applicable());
        assertEquals(0, none.idle().firstEvents());
        assertEquals(0, none.timers().loopScheduledTasks());
    }

    @Test
    void measuresHeapAndTimersOfEachIdleHandler() {
        for (String handler : IDLE_HANDLERS) {
            RunResult run = run(handler);
            assertTrue(run.heap().bytesPerConnection() > 0, handler);
            assertEquals(1, run.heap().checkpoints().size(), "one reading after the arm's share");
            assertTrue(run.timers().schedules() >= run.opened(), handler + ": one schedule per channel at least");
            assertTrue(run.timers().reArms() > run.opened(), handler + ": every connection heartbeats");
        }
        assertEquals(IDLE_HANDLERS.size() * 2, report.idleMachinery().size());
    }

    @Test
    void readsTheLargestRunOfEachLoopsWheelWithinTheEnginesBound() {
        int loops = Runtime.getRuntime().availableProcessors();
        for (RunResult run : report.runs()) {
            RunResult.Timers t = run.timers();
            if (run.handler().equals("wheel")) {
                assertEquals(loops, t.largestWheelRunByLoop().size(), "one wheel per server loop");
                for (int largest : t.largestWheelRunByLoop()) {
                    assertTrue(largest > 0 && largest <= TimerAccounting.WHEEL_RUN_BOUND, "by loop: " + t);
                }
                assertEquals(java.util.Collections.max(t.largestWheelRunByLoop()), t.largestWheelRun());
            } else {
                assertEquals(-1, t.largestWheelRun(), run.handler() + " uses no wheel");
                assertEquals(List.of(), t.largestWheelRunByLoop(), run.handler());
            }
        }
        assertEquals(1, report.wheelRuns().size(), "the wheel arm's summary in report.json");
        VerdictTable.WheelRun summary = report.wheelRuns().get(0);
        assertEquals("wheel", summary.arm());
        assertEquals(
                List.of(
                        run("wheel", 1).timers().largestWheelRun(),
                        run("wheel", 2).timers().largestWheelRun()),
                summary.byRound());
        assertEquals(TimerAccounting.WHEEL_RUN_BOUND, summary.bound());
    }

    @Test
    void writesMarkdownAndReadablePngCharts() throws Exception {
        String md = Files.readString(reportDir.resolve(Report.MARKDOWN_FILE));
        assertTrue(md.contains("| | wheel (1) | netty (1) | none (1) | netty (2) | none (2) | wheel (2) |"), md);
        assertTrue(md.contains("**missed idle events** |"), md);
        for (String chart : List.of(Charts.LATENESS, Charts.HEAP, Charts.IDLE_MACHINERY)) {
            assertNotNull(ImageIO.read(reportDir.resolve(chart).toFile()), chart);
            assertTrue(md.contains("](" + chart + ")"), chart);
        }
    }

    private static List<RunResult> runsOf(int round) {
        return report.runs().stream().filter(r -> r.round() == round).toList();
    }

    private static RunResult run(String handler) {
        return run(handler, 1);
    }

    private static RunResult run(String handler, int round) {
        return runsOf(round).stream()
                .filter(r -> r.handler().equals(handler))
                .findFirst()
                .orElseThrow();
    }
}
