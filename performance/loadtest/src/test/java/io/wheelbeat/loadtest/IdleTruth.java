package io.wheelbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the end-to-end tests require of an arm's idle detection on any machine, however busy. The
 * truth is what the server received: an idle event before a whole idle period without reads, or
 * a silenced connection never reported, is the handler's fault. A talking connection reported
 * idle after a whole idle period without reads is not: its client or the server's loop was
 * starved of CPU (seen beside four busy loops), so the test asks for the stall that explains it.
 * How late events come is speed, left to the report.
 */
final class IdleTruth {

    /**
     * The tolerance the end-to-end tests give: a run waits this long past the last deadline only
     * while a silenced connection is unreported, so on a quiet machine it costs nothing.
     */
    static final String TOLERANCE = "10s";

    /** The quick preset's heartbeat interval: a stall at least this long can silence a talking connection. */
    private static final double HEARTBEAT_MS = 1_000;

    private IdleTruth() {}

    /** The arm's handler was right about every connection the server heard. */
    static void assertHandlerRight(RunResult run) {
        RunResult.Idle idle = run.idle();
        String arm = run.handler() + " (round " + run.round() + "): " + idle;
        assertTrue(idle.applicable(), arm);
        assertEquals(0, idle.falsePremature(), "idle before a whole idle period without reads: " + arm);
        assertEquals(0, idle.unidentified(), arm);
        assertEquals(0, idle.badHellos(), arm);
        assertEquals(0, idle.missedNotReported(), "silenced connections never reported: " + arm);
        assertEquals(
                idle.plannedSilent(),
                idle.lateness().count(),
                "every silenced connection reported at or after its deadline: " + arm);
        if (idle.falseWhileTalking() > 0) {
            double stallMs = run.traffic().maxSenderLagMs() + run.loopLag().maxMs();
            assertTrue(
                    stallMs >= HEARTBEAT_MS,
                    "talking connections went a whole idle period unheard with no sender or loop stall: " + stallMs
                            + " ms; " + arm);
        }
    }

    /**
     * The command's exit status is 0, or 3 (wheelbeat's arm reported talking connections idle or
     * events late) only where every arm's handler was right and the machine explains the rest.
     */
    static void assertCleanUnlessTheMachineStalled(int exitCode, Report.SessionReport report, String errors) {
        assertTrue(exitCode == ExitStatus.OK || exitCode == ExitStatus.WHEELBEAT_MISSED, errors);
        if (exitCode == ExitStatus.WHEELBEAT_MISSED) {
            for (RunResult run : report.runs()) {
                if (run.idle().applicable()) {
                    assertHandlerRight(run);
                }
            }
        }
    }
}
