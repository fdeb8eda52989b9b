package io.wheelbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
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
    void theWaitForDeadlinesEndsOnceEveryHeardSilencedConnectionIsReported() {
        ConnectionLedger talking = new ConnectionLedger(2);
        talking.arrived(0, 1_000);
        assertTrue(talking.everySilentReported(NONE_SILENT), "no connection of this plan goes silent");
        ConnectionLedger ledger = new ConnectionLedger(3);
        ledger.arrived(0, 1_000);
        ledger.arrived(1, 1_000);
        assertFalse(ledger.everySilentReported(ALL_SILENT));
        ledger.idle(0, 1_000 + IDLE);
        assertFalse(ledger.everySilentReported(ALL_SILENT), "connection 1 is still due");
        ledger.idle(1, 1_000 + IDLE + TOLERANCE + 1);
        assertTrue(ledger.everySilentReported(ALL_SILENT), "connection 2 was never heard: nothing to wait for");
        assertEquals(1, ledger.evaluate(ALL_SILENT, IDLE, TOLERANCE).missedLate(), "a late report is still judged");
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

    @Test
    void anArmsLedgerCoversItsShareOnlyAndJudgesByTheAbsoluteIndex() {
        ConnectionLedger ledger = new ConnectionLedger(10, 12);
        assertEquals(false, ledger.covers(9));
        assertEquals(true, ledger.covers(10));
        assertEquals(true, ledger.covers(11));
        assertEquals(false, ledger.covers(12));
        ledger.arrived(11, 1_000);
        ledger.idle(11, 1_000 + IDLE);
        IdleVerdict v = ledger.evaluate(ALL_SILENT, IDLE, TOLERANCE);
        assertEquals(2, v.plannedSilent());
        assertEquals(1, v.onTime());
        assertEquals(1, v.neverHeard());
    }

    @Test
    void latenessOverTimeGroupsTheReportsByTheSecondTheyFiredIn() {
        long second = 1_000_000_000L;
        long idle = 20 * second;
        ConnectionLedger ledger = new ConnectionLedger(3);
        ledger.arrived(0, second);
        ledger.idle(0, second + idle + 2_000_000); // 2 ms late, fires in second 21
        ledger.arrived(1, second);
        ledger.idle(1, second + idle + 8_000_000); // 8 ms late, second 21
        ledger.arrived(2, 2 * second);
        ledger.idle(2, 2 * second + idle + 1_500_000_000L); // 1.5 s late, second 23
        List<RunResult.LateSecond> overTime = ledger.latenessOverTime(ALL_SILENT, idle, 0);
        assertEquals(2, overTime.size());
        assertEquals(21, overTime.get(0).atSecond());
        assertEquals(2, overTime.get(0).reported());
        assertEquals(8, overTime.get(0).maxMs(), 0.1);
        assertEquals(23, overTime.get(1).atSecond());
        assertEquals(1_500, overTime.get(1).maxMs(), 10);
    }
}
