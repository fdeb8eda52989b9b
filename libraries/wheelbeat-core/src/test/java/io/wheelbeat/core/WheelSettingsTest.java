package io.wheelbeat.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.wheelbeat.core.internal.ManualTicker;
import io.wheelbeat.core.internal.WheelSettings;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class WheelSettingsTest {

    @Test
    void theDefaultsAreAOneMillisecondTickAndFourThousandSlots() {
        WheelSettings defaults = new WheelSettings();
        assertEquals(Duration.ofNanos(1L << 20), defaults.tick());
        assertEquals(4096, defaults.slots());
        assertEquals(Integer.MAX_VALUE, defaults.maxPendingTimers());
    }

    @Test
    void tickAndSlotsAreRoundedUpToPowersOfTwo() {
        assertEquals(
                Duration.ofNanos(1L << 20),
                new WheelSettings().tick(Duration.ofMillis(1)).tick());
        assertEquals(
                Duration.ofNanos(1L << 10),
                new WheelSettings().tick(Duration.ofNanos(1024)).tick());
        assertEquals(
                Duration.ofNanos(1L << 11),
                new WheelSettings().tick(Duration.ofNanos(1025)).tick());
        assertEquals(128, new WheelSettings().slots(100).slots());
    }

    @Test
    void badSettingsAreRejectedWhenSet() {
        WheelSettings settings = new WheelSettings();
        assertThrows(IllegalArgumentException.class, () -> settings.tick(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> settings.tick(Duration.ofNanos(999)));
        assertThrows(IllegalArgumentException.class, () -> settings.tick(Duration.ofMinutes(2)));
        assertThrows(NullPointerException.class, () -> settings.tick(null));
        assertThrows(NullPointerException.class, () -> settings.ticker(null));
        assertThrows(IllegalArgumentException.class, () -> settings.slots(3));
        assertThrows(IllegalArgumentException.class, () -> settings.slots(8192));
        assertThrows(IllegalArgumentException.class, () -> settings.maxPendingTimers(0));
        assertEquals(Duration.ofNanos(1L << 20), settings.tick(), "a refused value changes nothing");
    }

    @Test
    void aDriverCopiesTheSettingsWhenMade() {
        ManualTicker ticker = new ManualTicker(0);
        WheelTimer.Builder builder = WheelTimer.builder().ticker(ticker).maxPendingTimers(1);
        WheelTimer timer = builder.build();
        try {
            builder.maxPendingTimers(5);
            timer.newTimeout(t -> {}, 1_000_000_000L);
            assertThrows(
                    java.util.concurrent.RejectedExecutionException.class,
                    () -> timer.newTimeout(t -> {}, 1_000_000_000L));
        } finally {
            timer.stop();
        }
    }
}
