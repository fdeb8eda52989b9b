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
    void runsOverRealSocketsWithTheClientInAnotherProcessAndDetectsExactlyTheSilencedConnections()
            throws Exception {
        StringWriter err = new StringWriter();
        picocli.CommandLine cl = LoadTest.commandLine();
        cl.setErr(new PrintWriter(err, true));
        // As QuickLoadTest: a 3 s reader idle and the silences spread over 1 s, to keep it short.
        int exit = cl.execute("--quick", "--transport", "tcp", "--connections", "1000", "--idle-handler", "netty",
                "--no-baseline", "--in-process", "--reader-idle", "3s", "--silence-spread", "1s",
                "--report-dir", reportDir.toString());

        Report.SessionReport report = Report.json().readValue(reportDir.resolve(Report.JSON_FILE).toFile(),
                Report.SessionReport.class);
        assertEquals(report.clean() ? 0 : LoadTest.EXIT_NOT_CLEAN, exit, err.toString());
        RunResult run = report.runs().get(0);
        assertEquals("tcp", run.tier());
        assertTrue(run.transport().equals("nio") || run.transport().equals("epoll"), run.transport());
        assertEquals(1000, run.opened());
        assertEquals(1000, run.serverChannels());
        assertTrue(run.idle().plannedSilent() > 0);
        LoadTestChecks.assertEverySilencedConnectionReportedAndNothingEarly(run.handler(), run.idle());
        assertTrue(LoadTestChecks.handlerRight(run), run.idle().toString());
        assertTrue(run.cpu().clientSeconds() > 0, "the client process reports its CPU time");
    }
}
