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
 * The quick mode end to end, as the ordinary test command runs it: about 20,000 local
 * connections with Netty's idle handler and the no-handler baseline, in this JVM. Real time, so
 * it judges correctness only (every connection opened, every silenced one reported, no event
 * before its deadline, a well-formed report), never speed: an event later than the tolerance, or
 * one on a connection whose heartbeats the machine held back for a whole idle period, is what a
 * busy machine does, and the report counts it (a run with any is not clean, exit code 3).
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
        // The quick preset with a 3 s reader idle (still 2.5 times the longest heartbeat gap) and the
        // silences spread over 1 s: each of the three runs takes about 7 s instead of 10.5 s.
        exitCode = cl.execute("--quick", "--idle-handler", "wheel,netty", "--in-process",
                "--reader-idle", "3s", "--silence-spread", "1s", "--report-dir", reportDir.toString());
        errors = err.toString();
        File json = reportDir.resolve(Report.JSON_FILE).toFile();
        if (json.isFile()) {
            report = Report.json().readValue(json, Report.SessionReport.class);
        }
    }

    @Test
    void exitsCleanlyUnlessTheMachineWasTooBusyForTheScenario() {
        assertEquals(report.clean() ? 0 : LoadTest.EXIT_NOT_CLEAN, exitCode, errors);
        for (RunResult run : report.runs()) {
            assertTrue(LoadTestChecks.handlerRight(run), run.handler() + ": " + run.idle());
        }
    }

    @Test
    void writesAReportThatReadsBackWithBothRuns() {
        assertNotNull(report, "report.json is missing or unreadable");
        assertEquals("local", report.tier());
        assertEquals(List.of("wheel", "netty", "none"), report.runs().stream().map(RunResult::handler).toList());
    }

    @Test
    void opensEveryConnectionInEveryRun() {
        for (RunResult run : report.runs()) {
            assertEquals(20_000, run.connectionsRequested(), run.handler());
            assertEquals(20_000, run.opened(), run.handler());
            assertEquals(0, run.failed(), run.handler());
            assertEquals(20_000, run.serverChannels(), run.handler());
            assertEquals(0, run.idle().neverHeard(), run.handler());
        }
    }

    @Test
    void detectsEverySilencedConnectionWithNoMissedAndNoFalseIdleEvents() {
        for (String handler : IDLE_HANDLERS) {
            RunResult.Idle idle = run(handler).idle();
            assertTrue(idle.applicable(), handler);
            assertTrue(idle.plannedSilent() > 1_000, "the plan silences about 10%: " + idle.plannedSilent());
            LoadTestChecks.assertEverySilencedConnectionReportedAndNothingEarly(handler, idle);
            assertEquals(idle.plannedSilent(), idle.lateness().count(), handler);
            assertEquals(idle.plannedSilent(), Charts.decode(idle.lateness().histogram()).getTotalCount(), handler);
        }
    }

    @Test
    void reportsLatenessPercentilesInOrder() {
        for (String handler : IDLE_HANDLERS) {
            RunResult.Lateness l = run(handler).idle().lateness();
            assertTrue(l.p50Ms() >= 0 && l.p50Ms() <= l.p99Ms() && l.p99Ms() <= l.p999Ms()
                    && l.p999Ms() <= l.maxMs(), handler + ": " + l);
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
            assertEquals(3, run.heap().checkpoints().size(), "two during the ramp, one after it");
            assertTrue(run.timers().schedules() >= 20_000, handler + ": one schedule per channel at least");
            assertTrue(run.timers().reArms() > 20_000, handler + ": every connection heartbeats");
        }
        assertEquals(IDLE_HANDLERS.size(), report.idleMachinery().size());
    }

    @Test
    void writesMarkdownAndReadablePngCharts() throws Exception {
        String md = Files.readString(reportDir.resolve(Report.MARKDOWN_FILE));
        assertTrue(md.contains("| | wheel | netty | none |"), md);
        assertTrue(md.contains(String.format(java.util.Locale.ROOT, "**missed idle events** | %,d | %,d |",
                run("wheel").idle().missed(), run("netty").idle().missed())), md);
        for (String chart : List.of(Charts.LATENESS, Charts.HEAP, Charts.IDLE_MACHINERY)) {
            assertNotNull(ImageIO.read(reportDir.resolve(chart).toFile()), chart);
            assertTrue(md.contains("](" + chart + ")"), chart);
        }
    }

    private static RunResult run(String handler) {
        return report.runs().stream().filter(r -> r.handler().equals(handler)).findFirst().orElseThrow();
    }
}
