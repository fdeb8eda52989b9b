package io.wheelbeat.netty.deadline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

class MaxConnectionAgeTest {

    private static final MaxConnectionAge AN_HOUR = MaxConnectionAge.of(Duration.ofHours(1));

    @Test
    void defaultsToTenPercentJitterAndNoGrace() {
        assertEquals(Duration.ofHours(1), AN_HOUR.age());
        assertEquals(0.1, AN_HOUR.jitter());
        assertEquals(Duration.ZERO, AN_HOUR.grace());
    }

    @Test
    void withersReturnANewValueAndLeaveTheOriginal() {
        MaxConnectionAge exact = AN_HOUR.withJitter(0).withGrace(Duration.ZERO);
        assertEquals(Duration.ofHours(1), exact.age());
        assertEquals(0.0, exact.jitter());
        assertEquals(Duration.ZERO, exact.grace());
        assertEquals(0.1, AN_HOUR.jitter());
        assertEquals(Duration.ZERO, AN_HOUR.grace());
        assertEquals(
                exact,
                MaxConnectionAge.of(Duration.ofHours(1))
                        .withGrace(Duration.ZERO)
                        .withJitter(0));
        assertEquals(
                exact.hashCode(),
                MaxConnectionAge.of(Duration.ofHours(1))
                        .withGrace(Duration.ZERO)
                        .withJitter(0)
                        .hashCode());
        assertNotEquals(AN_HOUR, exact);
        assertNotEquals(AN_HOUR, AN_HOUR.withGrace(Duration.ofMinutes(1)));
    }

    @Test
    void rejectsNulls() {
        assertEquals(
                "maxConnectionAge",
                assertThrows(NullPointerException.class, () -> MaxConnectionAge.of(null))
                        .getMessage());
        assertEquals(
                "maxConnectionAge grace",
                assertThrows(NullPointerException.class, () -> AN_HOUR.withGrace(null))
                        .getMessage());
    }

    @Test
    void rejectsAnAgeThatIsNotPositiveOrTooLong() {
        assertMessage("maxConnectionAge must be positive: PT0S", () -> MaxConnectionAge.of(Duration.ZERO));
        assertMessage("maxConnectionAge must be positive: PT-1S", () -> MaxConnectionAge.of(Duration.ofSeconds(-1)));
        assertMessage("maxConnectionAge is too long", () -> MaxConnectionAge.of(Duration.ofSeconds(Long.MAX_VALUE)));
    }

    @Test
    void rejectsANegativeGrace() {
        assertMessage(
                "maxConnectionAge grace must not be negative: PT-1S", () -> AN_HOUR.withGrace(Duration.ofSeconds(-1)));
    }

    @Test
    void rejectsJitterOutsideZeroToOne() {
        assertMessage("maxConnectionAge jitter must be at least 0 and below 1: -0.01", () -> AN_HOUR.withJitter(-0.01));
        assertMessage("maxConnectionAge jitter must be at least 0 and below 1: 1.0", () -> AN_HOUR.withJitter(1.0));
        assertMessage(
                "maxConnectionAge jitter must be at least 0 and below 1: NaN", () -> AN_HOUR.withJitter(Double.NaN));
    }

    private static void assertMessage(String start, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertTrue(e.getMessage().startsWith(start), e.getMessage());
    }
}
