package io.wheelbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What a load-test run must show on any machine, however busy: the parts of the verdict that
 * judge the idle handler, apart from the ones that judge the machine. Lateness beyond the
 * tolerance and events on connections whose heartbeats were held back for a whole idle period
 * ({@code falseWhileTalking}) come from a machine short of CPU; they are printed, not asserted.
 */
final class LoadTestChecks {

    private LoadTestChecks() {
    }

    /** Every connection opened and said hello, and the handler was never wrong. */
    static boolean handlerRight(RunResult run) {
        RunResult.Idle idle = run.idle();
        return run.failed() == 0 && idle.neverHeard() == 0 && (!idle.applicable()
                || idle.missedNotReported() == 0 && idle.falsePremature() == 0 && idle.unidentified() == 0
                && idle.badHellos() == 0);
    }

    /** Every silenced connection reported, none before its true deadline; prints what the machine did. */
    static void assertEverySilencedConnectionReportedAndNothingEarly(String handler, RunResult.Idle idle) {
        System.out.printf("%s: %d silenced, %d reported within the tolerance, %d later (p99 %.1f ms, max %.1f ms), "
                        + "%d idle events on connections the busy machine kept from talking%n", handler,
                idle.plannedSilent(), idle.detectedOnTime(), idle.missedLate(), idle.lateness().p99Ms(),
                idle.lateness().maxMs(), idle.falseWhileTalking());
        assertEquals(0, idle.missedNotReported(), handler + ": silenced connections never reported");
        assertEquals(idle.plannedSilent(), idle.detectedOnTime() + idle.missedLate(), handler);
        assertEquals(0, idle.falsePremature(), handler + ": idle events before the true deadline");
        assertEquals(0, idle.unidentified(), handler);
    }
}
