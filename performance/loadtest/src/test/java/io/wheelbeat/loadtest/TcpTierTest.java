package io.wheelbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The TCP tier end to end on a small scale: real loopback sockets, the client side in a child
 * process started on this test's class path. Judges correctness only.
 */
class TcpTierTest {

    @TempDir
    Path reportDir;

    @Test
    void runsOverRealSocketsWithTheClientInAnotherProcessAndDetectsExactlyTheSilencedConnections() throws Exception {
        StringWriter err = new StringWriter();
        picocli.CommandLine cl = LoadTest.commandLine();
        cl.setErr(new PrintWriter(err, true));
        // One short steady window (this test reads none) and a short silence spread.
        int exit = cl.execute(
                "--quick",
                "--transport",
                "tcp",
                "--connections",
                "1000",
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
        Report.SessionReport report =
                Report.json().readValue(reportDir.resolve(Report.JSON_FILE).toFile(), Report.SessionReport.class);
        IdleTruth.assertCleanUnlessTheMachineStalled(exit, report, err.toString());
        assertEquals(2, report.runs().size(), "two arms, one round");
        for (RunResult run : report.runs()) {
            assertEquals("tcp", run.tier());
            assertTrue(run.transport().equals("nio") || run.transport().equals("epoll"), run.transport());
            assertEquals(500, run.opened(), run.handler() + ": each arm's server got its half");
            assertEquals(500, run.serverChannels(), run.handler());
            assertTrue(run.idle().plannedSilent() > 0);
            IdleTruth.assertHandlerRight(run);
            assertTrue(run.cpu().clientSeconds() > 0, "the client process reports its CPU time");
        }
    }
}
