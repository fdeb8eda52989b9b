package io.wheelbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class SilencePlanTest {

    @Test
    void twoPlansWithTheSameSeedAgreeOnEveryConnection() {
        SilencePlan a = new SilencePlan(7, 0.1);
        SilencePlan b = new SilencePlan(7, 0.1);
        for (int i = 0; i < 10_000; i++) {
            assertEquals(a.isSilent(i), b.isSilent(i));
            assertEquals(a.offset(i), b.offset(i));
        }
    }

    @Test
    void silencesAboutTheRequestedFraction() {
        int silent = new SilencePlan(42, 0.1).silentCount(100_000);
        assertTrue(silent > 9_500 && silent < 10_500, "silent: " + silent);
    }

    @Test
    void fractionZeroSilencesNoneAndOneSilencesAll() {
        assertEquals(0, new SilencePlan(1, 0).silentCount(10_000));
        assertEquals(10_000, new SilencePlan(1, 1).silentCount(10_000));
    }

    @Test
    void offsetsLieInTheSilenceWindow() {
        SilencePlan plan = new SilencePlan(3, 0.5);
        for (int i = 0; i < 10_000; i++) {
            assertTrue(plan.offset(i) >= 0 && plan.offset(i) < 1);
        }
    }

    @Test
    void anotherSeedMakesAnotherPlan() {
        int differences = 0;
        for (int i = 0; i < 1_000; i++) {
            if (new SilencePlan(1, 0.5).isSilent(i) != new SilencePlan(2, 0.5).isSilent(i)) {
                differences++;
            }
        }
        assertTrue(differences > 300, "differences: " + differences);
    }
}
