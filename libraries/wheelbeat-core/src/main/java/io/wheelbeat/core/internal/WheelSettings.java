package io.wheelbeat.core.internal;

import io.wheelbeat.core.internal.checks.ConfigChecks;
import java.time.Duration;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * Settings of a wheel and its driver: clock, tick, slots, limit of pending timers. Defaults: the
 * system clock, a 2^20 ns tick, 4096 slots, no limit. Setters check at once; a driver copies them
 * when made. Not thread-safe.
 */
public final class WheelSettings {

    private LongSupplier ticker = System::nanoTime;
    private long tickNanos = 1L << 20;
    private int slots = 4096;
    private int maxPendingTimers = Integer.MAX_VALUE;

    /** The defaults. */
    public WheelSettings() {}

    /**
     * Sets the clock the driver reads and schedules by.
     *
     * @param ticker the clock
     * @return these settings
     * @throws NullPointerException if {@code ticker} is null
     */
    public WheelSettings ticker(LongSupplier ticker) {
        this.ticker = Objects.requireNonNull(ticker, "ticker");
        return this;
    }

    /**
     * Sets the tick, rounded up to a power of two nanoseconds.
     *
     * @param tick from 1 us to 2^36 ns, before rounding
     * @return these settings
     * @throws IllegalArgumentException if out of that range
     * @throws NullPointerException if {@code tick} is null
     */
    public WheelSettings tick(Duration tick) {
        long nanos = ConfigChecks.positiveNanos("tick", tick);
        if (nanos < 1_000 || nanos > (1L << 36)) {
            throw new IllegalArgumentException("tick must be between 1 us and 2^36 ns: " + tick);
        }
        this.tickNanos = 1L << 64 - Long.numberOfLeadingZeros(nanos - 1);
        return this;
    }

    /**
     * Sets the number of level-0 slots, rounded up to a power of two.
     *
     * @param slots from 64 to 4096, before rounding
     * @return these settings
     * @throws IllegalArgumentException if out of that range
     */
    public WheelSettings slots(int slots) {
        if (slots < 64 || slots > 4096) {
            throw new IllegalArgumentException("slots must be between 64 and 4096: " + slots);
        }
        this.slots = 1 << 32 - Integer.numberOfLeadingZeros(slots - 1);
        return this;
    }

    /**
     * Sets the most timers pending at once, counting those being handed over.
     *
     * @param max at least 1
     * @return these settings
     * @throws IllegalArgumentException if not positive
     */
    public WheelSettings maxPendingTimers(int max) {
        this.maxPendingTimers = ConfigChecks.positive("maxPendingTimers", max);
        return this;
    }

    /** {@return the clock} */
    public LongSupplier ticker() {
        return ticker;
    }

    /** {@return the tick after rounding} */
    public Duration tick() {
        return Duration.ofNanos(tickNanos);
    }

    /** {@return the number of level-0 slots after rounding} */
    public int slots() {
        return slots;
    }

    /** {@return the most timers pending at once ({@link Integer#MAX_VALUE}: no limit)} */
    public int maxPendingTimers() {
        return maxPendingTimers;
    }
}
