package io.wheelbeat.loadtest;

import org.HdrHistogram.Histogram;

/**
 * How the idle handler did against the truth the load test knows.
 *
 * @param plannedSilent connections the plan silenced
 * @param neverHeard connections of the run whose hello never reached the server
 * @param onTime silenced connections reported within the tolerance after their true deadline
 * @param missedNotReported silenced connections never reported
 * @param missedLate silenced connections reported later than deadline plus tolerance
 * @param falsePremature idle events before the connection's true deadline: the handler was wrong
 * @param falseWhileTalking idle events, at or after the true deadline, on connections the plan
 *     kept talking: traffic really stopped for a whole idle period (the load generator or the
 *     machine stalled), so the handler was right but the scenario was not honoured
 * @param unidentifiedIdleEvents idle events on channels that never said which connection they are
 * @param badHellos channels that announced an index outside the run
 * @param lateness fire time minus true deadline of every silenced connection reported at or
 *     after its deadline, in nanoseconds
 */
record IdleVerdict(
        int plannedSilent,
        int neverHeard,
        int onTime,
        int missedNotReported,
        int missedLate,
        int falsePremature,
        int falseWhileTalking,
        long unidentifiedIdleEvents,
        long badHellos,
        Histogram lateness) {

    int missed() {
        return missedNotReported + missedLate;
    }

    long falseIdle() {
        return falsePremature + falseWhileTalking + unidentifiedIdleEvents;
    }
}
