package io.wheelbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.wheelbeat.loadtest.Verdict.Better;
import io.wheelbeat.loadtest.Verdict.Call;
import io.wheelbeat.loadtest.Verdict.Outcome;
import io.wheelbeat.loadtest.Verdict.Spread;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Who won, from measured values alone: direction, losses, overlapping ranges, one run. */
class VerdictTest {

    @Test
    void spreadIsTheMedianAndTheRange() {
        Spread odd = Spread.of(30, 10, 20);
        assertEquals(new Spread(20, 10, 30, 3), odd);
        Spread even = Spread.of(4, 1, 3, 2);
        assertEquals(new Spread(2.5, 1, 4, 4), even);
        assertEquals(new Spread(7, 7, 7, 1), Spread.of(7));
        assertThrows(IllegalArgumentException.class, () -> Spread.of(List.of()));
    }

    @Test
    void aLowerCostIsAWin() {
        Call call = Verdict.call(Better.LOWER, Spread.of(130, 132, 134), Spread.of(280, 281, 290));
        assertEquals(Outcome.WON, call.outcome());
        assertEquals(132.0 / 281, call.ratio(), 1e-12);
        assertTrue(call.spreadKnown());
    }

    @Test
    void aHigherCostIsReportedAsALoss() {
        Call call = Verdict.call(Better.LOWER, Spread.of(2_600, 2_700, 2_800), Spread.of(2_300, 2_400, 2_500));
        assertEquals(Outcome.LOST, call.outcome());
        assertEquals("**lost**", call.outcome().markdown());
        assertEquals("LOST", call.outcome().plain());
        assertEquals(2_700.0 / 2_400, call.ratio(), 1e-12);
    }

    @Test
    void overlappingRangesAreWithinNoiseWhicheverMedianIsLower() {
        // GC total pause: ours' median is higher, but the ranges overlap.
        Call worseMedian = Verdict.call(Better.LOWER, Spread.of(2_000, 2_450, 2_900), Spread.of(1_900, 2_380, 2_100));
        assertEquals(Outcome.WITHIN_NOISE, worseMedian.outcome());
        Call betterMedian = Verdict.call(Better.LOWER, Spread.of(1_500, 1_600, 2_000), Spread.of(1_900, 2_000, 2_400));
        assertEquals(Outcome.WITHIN_NOISE, betterMedian.outcome());
        // Ranges that only touch at one value overlap too.
        assertEquals(Outcome.WITHIN_NOISE,
                Verdict.call(Better.LOWER, Spread.of(1, 2, 3), Spread.of(3, 4, 5)).outcome());
    }

    @Test
    void higherIsBetterForTheOpenRate() {
        assertEquals(Better.HIGHER, VerdictTable.OPEN_RATE.better());
        assertEquals(Outcome.WON,
                Verdict.call(Better.HIGHER, Spread.of(40_000, 41_000, 42_000), Spread.of(30_000, 31_000, 32_000))
                        .outcome());
        assertEquals(Outcome.LOST,
                Verdict.call(Better.HIGHER, Spread.of(30_000, 31_000, 32_000), Spread.of(40_000, 41_000, 42_000))
                        .outcome());
    }

    @Test
    void everyCostOfTheTableIsLowerIsBetter() {
        for (VerdictTable.Measure m : List.of(VerdictTable.WRONG_IDLE_EVENTS, VerdictTable.IDLE_MACHINERY_BYTES,
                VerdictTable.HEAP_BYTES, VerdictTable.IDLE_MACHINERY_CPU, VerdictTable.LOOP_CPU,
                VerdictTable.LOOP_TASKS, VerdictTable.LATENESS_P50, VerdictTable.LATENESS_P99,
                VerdictTable.LATENESS_P999, VerdictTable.LATENESS_MAX, VerdictTable.GC_TOTAL,
                VerdictTable.GC_LONGEST, VerdictTable.LOOP_ALLOCATION)) {
            assertEquals(Better.LOWER, m.better(), m.name());
        }
    }

    @Test
    void oneRunEachCallsTheDifferenceButSaysTheSpreadIsUnknown() {
        Call call = Verdict.call(Better.LOWER, Spread.of(2_450), Spread.of(2_382));
        assertEquals(Outcome.LOST, call.outcome());
        assertFalse(call.spreadKnown());
    }

    @Test
    void equalValuesAreEqual() {
        assertEquals(Outcome.EQUAL, Verdict.call(Better.LOWER, Spread.of(0), Spread.of(0)).outcome());
        assertEquals(Outcome.EQUAL, Verdict.call(Better.LOWER, Spread.of(0, 0, 0), Spread.of(0, 0, 0)).outcome());
    }

    @Test
    void costsBelowTheBaselineOnBothSidesAreWithinNoise() {
        // Idle machinery CPU per message, handler minus baseline, on a busy machine: -553 and -304 ns.
        assertEquals(Outcome.WITHIN_NOISE, Verdict.call(Better.LOWER, Spread.of(-553), Spread.of(-304)).outcome());
        assertEquals(Outcome.WON, Verdict.call(Better.LOWER, Spread.of(-50), Spread.of(400)).outcome());
        assertEquals(Outcome.LOST, Verdict.call(Better.LOWER, Spread.of(400), Spread.of(-50)).outcome());
    }

    @Test
    void aRatioNeedsPositiveMedians() {
        // An idle-machinery difference against the baseline can come out negative: no ratio then.
        assertTrue(Double.isNaN(Verdict.call(Better.LOWER, Spread.of(-50), Spread.of(400)).ratio()));
        assertTrue(Double.isNaN(Verdict.call(Better.LOWER, Spread.of(5), Spread.of(0)).ratio()));
        assertEquals(0, Verdict.call(Better.LOWER, Spread.of(0), Spread.of(5)).ratio());
    }
}
