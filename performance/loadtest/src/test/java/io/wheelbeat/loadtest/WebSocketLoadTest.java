package io.wheelbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The quick scenario over WebSocket, in this JVM: 2,000 local connections that upgrade with
 * Netty's codecs, heartbeat in binary frames and answer the server's pings until they go silent;
 * once with wheelbeat's WebSocket keepalive, once with Netty's IdleStateHandler and hand-written
 * pings. Real time, so it judges correctness only, never speed.
 */
class WebSocketLoadTest {

    @TempDir
    static Path reportDir;

    private static int exitCode;
    private static String errors;
    private static Report.SessionReport report;

    @BeforeAll
    static void runQuickScenarioOverWebSocket() throws Exception {
        StringWriter err = new StringWriter();
        picocli.CommandLine cl = LoadTest.commandLine();
        cl.setErr(new PrintWriter(err, true));
        // One short steady window (this test reads none) and a short silence spread.
        exitCode = cl.execute(
                "--quick",
                "--protocol",
                "websocket",
                "--connections",
                "2000",
                "--idle-handler",
                "wheel,netty",
                "--no-baseline",
                "--repeat",
                "1",
                "--steady-windows",
                "1",
                "--window",
                "1s",
                "--silence-spread",
                "500ms",
                "--tolerance",
                IdleTruth.TOLERANCE,
                "--in-process",
                "--report-dir",
                reportDir.toString());
        errors = err.toString();
        File json = reportDir.resolve(Report.JSON_FILE).toFile();
        if (json.isFile()) {
            report = Report.json().readValue(json, Report.SessionReport.class);
        }
    }

    @Test
    void bothKeepalivesReportEverySilencedConnectionAndNothingElse() {
        assertNotNull(report, "report.json is missing or unreadable: " + errors);
        IdleTruth.assertCleanUnlessTheMachineStalled(exitCode, report, errors);
        assertEquals("websocket", report.scenario().get("protocol"));
        assertEquals(
                List.of("wheel", "netty"),
                report.runs().stream().map(RunResult::handler).toList());
        for (RunResult run : report.runs()) {
            assertEquals(1_000, run.opened(), run.handler() + ": each arm its half");
            assertEquals(0, run.idle().neverHeard(), run.handler() + ": every connection's hello arrived in a frame");
            assertTrue(
                    run.idle().plannedSilent() > 50,
                    run.handler() + ": " + run.idle().plannedSilent());
            IdleTruth.assertHandlerRight(run);
        }
    }

    @Test
    void theReportSaysWhichKeepaliveEachRunIs() throws Exception {
        String md = Files.readString(reportDir.resolve(Report.MARKDOWN_FILE));
        assertTrue(md.contains("WebSocket (wheel: WebSocketKeepAliveHandler; netty: IdleStateHandler + pings)"), md);
        assertTrue(md.contains("--protocol websocket"), md);
    }
}
