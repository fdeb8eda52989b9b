package io.wheelbeat.netty.heartbeat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

class PingLimitsTest {

    @Test
    void theDefaultIsAHundredMillisecondsAndThreeStrikes() {
        assertEquals(Duration.ofMillis(100), PingLimits.DEFAULT.minPingInterval());
        assertEquals(3, PingLimits.DEFAULT.maxPingStrikes());
        assertEquals(PingLimits.DEFAULT, PingLimits.of(Duration.ofMillis(100), 3));
        assertEquals(
                PingLimits.DEFAULT.hashCode(),
                PingLimits.of(Duration.ofMillis(100), 3).hashCode());
    }

    @Test
    void offHasNoIntervalAndNoStrikesAndIsNoOtherLimit() {
        assertEquals(Duration.ZERO, PingLimits.OFF.minPingInterval());
        assertEquals(0, PingLimits.OFF.maxPingStrikes());
        assertNotEquals(PingLimits.DEFAULT, PingLimits.OFF);
        assertEquals("PingLimits.OFF", PingLimits.OFF.toString());
    }

    @Test
    void keepsWhatItWasGiven() {
        PingLimits limits = PingLimits.of(Duration.ofMinutes(5), 2);
        assertEquals(Duration.ofMinutes(5), limits.minPingInterval());
        assertEquals(2, limits.maxPingStrikes());
        assertNotEquals(PingLimits.of(Duration.ofMinutes(5), 3), limits);
        assertNotEquals(PingLimits.of(Duration.ofMinutes(4), 2), limits);
    }

    @Test
    void rejectsANullInterval() {
        NullPointerException e = assertThrows(NullPointerException.class, () -> PingLimits.of(null, 3));
        assertEquals("minPingInterval", e.getMessage());
    }

    @Test
    void rejectsAnIntervalThatIsNotPositiveOrTooLong() {
        assertMessage("minPingInterval must be positive: PT0S", () -> PingLimits.of(Duration.ZERO, 3));
        assertMessage("minPingInterval must be positive: PT-0.001S", () -> PingLimits.of(Duration.ofMillis(-1), 3));
        assertMessage("minPingInterval is too long", () -> PingLimits.of(Duration.ofSeconds(Long.MAX_VALUE), 3));
    }

    @Test
    void rejectsStrikesThatAreNotPositive() {
        assertMessage("maxPingStrikes must be positive: 0", () -> PingLimits.of(Duration.ofMillis(100), 0));
        assertMessage("maxPingStrikes must be positive: -1", () -> PingLimits.of(Duration.ofMillis(100), -1));
    }

    private static void assertMessage(String start, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertTrue(e.getMessage().startsWith(start), e.getMessage());
    }
}
