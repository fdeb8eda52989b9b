package io.wheelbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The judgement of idle events against the truth, on hand-made timelines (no clock involved). */
class ConnectionLedgerTest {

    private static final long IDLE = 5_000;
    private static final long TOLERANCE = 100;
    private static final SilencePlan ALL_SILENT = new SilencePlan(1, 1);
    private static final SilencePlan NONE_SILENT = new SilencePlan(1, 0);

    @Test
    void silencedConnectionReportedWithinToleranceIsDetectedAndItsLatenessRecorded() {
        ConnectionLedger ledger = new ConnectionLedger(1);
        ledger.arrived(0, 1_000);
        ledger.idle(0, 1_000 + IDLE + 40);
        IdleVerdict v = ledger.evaluate(ALL_SILENT, IDLE, TOLERANCE);
        assertEquals(1, v.onTime());
        assertEquals(0, v.missed());
        assertEquals(0, v.falseIdle());
        assertEquals(40, v.lateness().getMaxValue());
    }

    @Test
    void deadlineRunsFromTheLastArrivalNotTheFirst() {
        ConnectionLedger ledger = new ConnectionLedger(1);
        ledger.arrived(0, 1_000);
        ledger.arrived(0, 3_000);
        ledger.idle(0, 3_000 + IDLE);
        IdleVerdict v = ledger.evaluate(ALL_SILENT, IDLE, TOLERANCE);
        assertEquals(1, v.onTime());
        assertEquals(0, v.lateness().getMaxValue());
    }

    @Test
    void silencedConnectionNeverReportedIsMissed() {
        ConnectionLedger ledger = new ConnectionLedger(1);
        ledger.arrived(0, 1_000);
        IdleVerdict v = ledger.evaluate(ALL_SILENT, IDLE, TOLERANCE);
        assertEquals(1, v.missedNotReported());
        assertEquals(1, v.missed());
    }

    @Test
    void silencedConnectionReportedAfterTheToleranceIsMissedButItsLatenessStillCounts() {
        ConnectionLedger ledger = new ConnectionLedger(1);
        ledger.arrived(0, 1_000);
        ledger.idle(0, 1_000 + IDLE + TOLERANCE + 1);
        IdleVerdict v = ledger.evaluate(ALL_SILENT, IDLE, TOLERANCE);
        assertEquals(1, v.missedLate());
        assertEquals(0, v.onTime());
        assertEquals(1, v.lateness().getTotalCount());
    }

    /** What the run waits for past the tolerance: silenced connections heard and not yet reported. */
    @Test
    void unreportedSilentCountsHeardSilencedConnectionsWithoutAnIdleEvent() {
        SilencePlan plan = new SilencePlan(4, 1.0);
        ConnectionLedger ledger = new ConnectionLedger(4);
        ledger.arrived(0, 1_000);
        ledger.arrived(1, 1_000);
        ledger.arrived(2, 1_000); // connection 3 never heard: nothing to wait for
        ledger.idle(1, 1_000 + IDLE);
        assertEquals(2, ledger.unreportedSilent(plan));
        ledger.idle(0, 1_000 + IDLE + 3 * TOLERANCE);
        ledger.idle(2, 1_000 + IDLE);
        assertEquals(0, ledger.unreportedSilent(plan));
        assertEquals(0, ledger.unreportedSilent(new SilencePlan(4, 0)), "none silenced");
    }

    @Test
    void idleEventBeforeTheTrueDeadlineIsFalse() {
        ConnectionLedger ledger = new ConnectionLedger(1);
        ledger.arrived(0, 1_000);
        ledger.idle(0, 1_000 + IDLE - 1);
        IdleVerdict v = ledger.evaluate(ALL_SILENT, IDLE, TOLERANCE);
        assertEquals(1, v.falsePremature());
        assertEquals(1, v.falseIdle());
        assertEquals(0, v.lateness().getTotalCount());
    }

    @Test
    void idleEventOnAConnectionThePlanKeptTalkingIsFalse() {
        ConnectionLedger ledger = new ConnectionLedger(1);
        ledger.arrived(0, 1_000);
        ledger.idle(0, 1_000 + IDLE + 10);
        IdleVerdict v = ledger.evaluate(NONE_SILENT, IDLE, TOLERANCE);
        assertEquals(1, v.falseWhileTalking());
        assertEquals(1, v.falseIdle());
    }

    @Test
    void onlyTheFirstIdleEventOfAConnectionIsJudged() {
        ConnectionLedger ledger = new ConnectionLedger(1);
        ledger.arrived(0, 1_000);
        ledger.idle(0, 1_000 + IDLE);
        ledger.idle(0, 1_000 + 2 * IDLE);
        IdleVerdict v = ledger.evaluate(ALL_SILENT, IDLE, TOLERANCE);
        assertEquals(1, v.onTime());
        assertEquals(0, v.lateness().getMaxValue());
    }

    @Test
    void idleEventOnAnUnidentifiedChannelIsFalse() {
        ConnectionLedger ledger = new ConnectionLedger(1);
        ledger.unidentifiedIdle();
        assertEquals(1, ledger.evaluate(NONE_SILENT, IDLE, TOLERANCE).falseIdle());
    }

    @Test
    void connectionNeverHeardFromIsCountedApartAndNotJudged() {
        ConnectionLedger ledger = new ConnectionLedger(2);
        ledger.arrived(1, 1_000);
        ledger.idle(1, 1_000 + IDLE);
        IdleVerdict v = ledger.evaluate(ALL_SILENT, IDLE, TOLERANCE);
        assertEquals(1, v.neverHeard());
        assertEquals(0, v.missed());
        assertEquals(2, v.plannedSilent());
    }

    @Test
    void latestSilentDeadlineIsTheLastArrivalOfASilencedConnectionPlusTheLimit() {
        ConnectionLedger ledger = new ConnectionLedger(2);
        ledger.arrived(0, 1_000);
        ledger.arrived(1, 4_000);
        assertEquals(4_000 + IDLE, ledger.latestSilentDeadline(ALL_SILENT, IDLE));
        assertEquals(Long.MIN_VALUE, ledger.latestSilentDeadline(NONE_SILENT, IDLE));
    }
}
