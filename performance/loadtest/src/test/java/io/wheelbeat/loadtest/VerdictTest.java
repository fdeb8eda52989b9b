package io.wheelbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.wheelbeat.loadtest.Verdict.Better;
import io.wheelbeat.loadtest.Verdict.Call;
import io.wheelbeat.loadtest.Verdict.Outcome;
import io.wheelbeat.loadtest.Verdict.Unit;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Who won, from paired units alone: the ratio and its bootstrap interval, a call only where the
 * interval excludes 1.0, the direction, the baseline, counts. No timing; fixed seeds.
 */
class VerdictTest {

    /** Six sub-windows in each of three rounds, ours about {@code ratio} x theirs, with noise shared by the pair. */
    private static List<Unit> paired(double ratio, double pairNoise, double ownNoise) {
        Random random = new Random(7);
        List<Unit> units = new ArrayList<>();
        for (int round = 1; round <= 3; round++) {
            for (int w = 0; w < 6; w++) {
                double machine = 1 + pairNoise * random.nextGaussian();
                double theirs = 1_000 * machine * (1 + ownNoise * random.nextGaussian());
                double ours = ratio * 1_000 * machine * (1 + ownNoise * random.nextGaussian());
                units.add(new Unit(round, ours * 100_000, 100_000, theirs * 100_000, 100_000));
            }
        }
        return units;
    }

    @Test
    void aClearlyLowerCostIsAWinAndTheIntervalHoldsTheRatio() {
        Call call = Verdict.call(Better.LOWER, paired(0.5, 0.3, 0.02));
        assertEquals(Outcome.WON, call.outcome());
        assertTrue(call.low() <= call.ratio() && call.ratio() <= call.high(), call.toString());
        assertTrue(call.high() < 1, call.toString());
        assertEquals(0.5, call.ratio(), 0.02);
        assertEquals(18, call.units());
    }

    @Test
    void pairingCancelsTheNoiseBothSidesShare() {
        // Machine noise of 30% moves both sides alike; the ratio stays within a few percent.
        Call call = Verdict.call(Better.LOWER, paired(0.9, 0.3, 0.01));
        assertEquals(Outcome.WON, call.outcome(), call.toString());
        assertTrue(call.high() - call.low() < 0.05, call.toString());
    }

    @Test
    void aHigherCostIsALoss() {
        Call call = Verdict.call(Better.LOWER, paired(1.3, 0.1, 0.02));
        assertEquals(Outcome.LOST, call.outcome());
        assertTrue(call.low() > 1, call.toString());
        assertEquals("**lost**", call.outcome().markdown());
        assertEquals("LOST", call.outcome().plain());
    }

    @Test
    void anIntervalThatHoldsOneIsWithinNoise() {
        Call call = Verdict.call(Better.LOWER, paired(1.0, 0.1, 0.2));
        assertEquals(Outcome.WITHIN_NOISE, call.outcome(), call.toString());
        assertTrue(call.low() < 1 && call.high() > 1, call.toString());
    }

    @Test
    void aHigherRateIsAWin() {
        List<Unit> rounds = List.of(Unit.of(1, 45_000, 40_000), Unit.of(2, 46_000, 40_500), Unit.of(3, 44_000, 39_000));
        assertEquals(Outcome.WON, Verdict.call(Better.HIGHER, rounds).outcome());
        assertEquals(Outcome.LOST, Verdict.call(Better.LOWER, rounds).outcome());
    }

    @Test
    void roundsThatDisagreeGiveNoCall() {
        // One round says 0.5, the other 1.5: resampling the rounds keeps that apart.
        List<Unit> units = List.of(
                Unit.of(1, 500, 1_000), Unit.of(1, 510, 1_000), Unit.of(2, 1_500, 1_000), Unit.of(2, 1_490, 1_000));
        Call call = Verdict.call(Better.LOWER, units);
        assertEquals(Outcome.WITHIN_NOISE, call.outcome(), call.toString());
        assertTrue(call.low() <= 0.51 && call.high() >= 1.49, call.toString());
    }

    @Test
    void oneUnitHasNoInterval() {
        Call call = Verdict.call(Better.LOWER, List.of(Unit.of(1, 132, 281)));
        assertEquals(Outcome.NO_INTERVAL, call.outcome());
        assertEquals(132.0 / 281, call.ratio(), 1e-12);
        assertFalse(call.hasInterval());
    }

    @Test
    void identicalValuesAreEqual() {
        assertEquals(
                Outcome.EQUAL,
                Verdict.call(Better.LOWER, List.of(Unit.of(1, 0, 0), Unit.of(2, 0, 0)))
                        .outcome());
    }

    @Test
    void theBaselineIsTakenOffBothSidesBeforeTheRatio() {
        // Ours 1,100 and theirs 1,400 against a baseline of 1,000: the idle machinery is 100 against 400.
        List<Unit> units = new ArrayList<>();
        for (int round = 1; round <= 3; round++) {
            for (int w = 0; w < 4; w++) {
                double shift = 50 * w;
                units.add(new Unit(round, 1_100 + shift, 1, 1_400 + shift, 1, 1_000 + shift, 1));
            }
        }
        Call call = Verdict.call(Better.LOWER, units);
        assertEquals(0.25, call.ratio(), 1e-9);
        assertEquals(100, call.ours(), 1e-9);
        assertEquals(400, call.theirs(), 1e-9);
        assertEquals(Outcome.WON, call.outcome());
    }

    @Test
    void theirsAtOrBelowTheBaselineIsNoWinForOurs() {
        List<Unit> units = new ArrayList<>();
        for (int w = 0; w < 6; w++) {
            units.add(new Unit(1 + w % 2, 1_050 + w, 1, 990 + w, 1, 1_000 + w, 1));
        }
        Call call = Verdict.call(Better.LOWER, units);
        assertTrue(Double.isNaN(call.ratio()), call.toString());
        assertFalse(call.outcome() == Outcome.WON, call.toString());
    }

    @Test
    void countsCallEveryDifference() {
        assertEquals(Outcome.WON, Verdict.count(0, 494, 1).outcome());
        assertEquals(Outcome.LOST, Verdict.count(19_523, 0, 1).outcome());
        assertEquals(Outcome.EQUAL, Verdict.count(0, 0, 3).outcome());
    }

    @Test
    void aGivenIntervalDecidesTheSameWay() {
        assertEquals(
                Outcome.WON, Verdict.call(Better.LOWER, 50, 100, 0.4, 0.6, 3).outcome());
        assertEquals(
                Outcome.WITHIN_NOISE,
                Verdict.call(Better.LOWER, 50, 100, 0.4, 1.2, 3).outcome());
        assertEquals(
                Outcome.WITHIN_NOISE,
                Verdict.call(Better.LOWER, 50, 100, Double.NaN, Double.NaN, 3).outcome());
    }

    @Test
    void theSameUnitsGiveTheSameInterval() {
        assertEquals(
                Verdict.call(Better.LOWER, paired(0.8, 0.2, 0.1)), Verdict.call(Better.LOWER, paired(0.8, 0.2, 0.1)));
    }

    @Test
    void aUnitHasFourOrSixValues() {
        assertThrows(IllegalArgumentException.class, () -> new Unit(1, 1, 2, 3));
        assertThrows(IllegalArgumentException.class, () -> Verdict.call(Better.LOWER, List.of()));
    }
}
