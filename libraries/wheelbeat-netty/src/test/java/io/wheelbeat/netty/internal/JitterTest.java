package io.wheelbeat.netty.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.wheelbeat.core.ScriptedRandom;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class JitterTest {

    @Test
    void staysWithinTheFractionAndReachesBothEnds() {
        SplittableRandom random = new SplittableRandom(1);
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;
        for (int i = 0; i < 100_000; i++) {
            long jittered = Jitter.apply(1_000_000, 0.1, random);
            min = Math.min(min, jittered);
            max = Math.max(max, jittered);
        }
        assertTrue(min >= 900_000 && min < 900_100, "min " + min);
        assertTrue(max <= 1_100_000 && max > 1_099_900, "max " + max);
    }

    @Test
    void zeroFractionReturnsTheBaseWithoutDrawing() {
        ScriptedRandom random = new ScriptedRandom();
        assertEquals(1234, Jitter.apply(1234, 0, random));
        assertEquals(0, random.draws());
    }

    @Test
    void saturatesInsteadOfOverflowing() {
        assertEquals(Long.MAX_VALUE, Jitter.apply(Long.MAX_VALUE, 0.5, new ScriptedRandom(0.99)));
    }

    @Test
    void neverReturnsLessThanOneNanosecond() {
        assertEquals(1, Jitter.apply(1, 0.9, new ScriptedRandom(0.0)));
    }

    @Test
    void rejectsFractionsOutsideZeroToOne() {
        assertThrows(IllegalArgumentException.class, () -> Jitter.checkFraction("f", -0.5));
        assertThrows(IllegalArgumentException.class, () -> Jitter.checkFraction("f", 1));
        assertThrows(IllegalArgumentException.class, () -> Jitter.checkFraction("f", Double.POSITIVE_INFINITY));
        assertEquals(0.0, Jitter.checkFraction("f", 0));
    }
}
