package io.wheelbeat.core;

import io.wheelbeat.core.internal.checks.ConfigChecks;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;

/**
 * Settings of a wheel and of the driver that runs it ({@link ExecutorDrivenWheel},
 * {@link WheelTimer}): its clock, its tick and number of slots, and how many timers it may hold.
 * The defaults suit connection timers: a 1.05 ms tick (2^20
 * ns) and 4096 slots, a 4.3 s turn, no limit, the system clock.
 *
 * <p>Every setter checks its argument at once ({@link NullPointerException} for a null,
 * {@link IllegalArgumentException} for a value out of range). A driver copies the settings when it
 * is made: changing them afterwards changes no driver. Not thread-safe.
 */
public final class WheelSettings {

    private Ticker ticker = Ticker.system();
    private long tickNanos = 1L << 20;
    private int slots = 4096;
    private int maxPendingTimers = Integer.MAX_VALUE;

    /** The defaults: the system clock, a 1.05 ms tick, 4096 slots, no limit. */
    public WheelSettings() {
    }

    /**
     * The driver's clock; {@link Ticker#system()} by default. The driver reads it; the wheel only
     * compares the readings it is given.
     *
     * @param ticker the clock
     * @return these settings
     */
    public WheelSettings ticker(Ticker ticker) {
        this.ticker = Objects.requireNonNull(ticker, "ticker");
        return this;
    }

    /**
     * The tick, rounded up to a power of two nanoseconds (1 ms becomes 1.048576 ms): the span of
     * one level-0 slot. Timers fire at their exact deadline whatever the tick; it sets how
     * deadlines are grouped. Between 1 microsecond and about 68.7 s (2^36 ns).
     *
     * @param tick the tick before rounding
     * @return these settings
     * @throws IllegalArgumentException if out of that range
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
     * The number of level-0 slots, rounded up to a power of two, between 64 and 4096: delays up
     * to {@code slots x tick} are placed directly in their tick's slot, longer ones on the levels
     * above (64 slots each) and moved down when their slot comes due.
     *
     * @param slots the number of slots before rounding
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
     * The most timers the driver keeps pending at once, counting timeouts other threads are
     * handing over; scheduling beyond it throws {@link RejectedExecutionException}. No limit by
     * default.
     *
     * @param max the most pending timers
     * @return these settings
     * @throws IllegalArgumentException if not positive
     */
    public WheelSettings maxPendingTimers(int max) {
        this.maxPendingTimers = ConfigChecks.positive("maxPendingTimers", max);
        return this;
    }

    /**
     * The clock.
     *
     * @return the clock
     */
    public Ticker ticker() {
        return ticker;
    }

    /**
     * The tick, a power of two nanoseconds.
     *
     * @return the tick after rounding
     */
    public Duration tick() {
        return Duration.ofNanos(tickNanos);
    }

    /**
     * The number of level-0 slots, a power of two.
     *
     * @return the number of level-0 slots after rounding
     */
    public int slots() {
        return slots;
    }

    /**
     * The most timers pending at once ({@link Integer#MAX_VALUE}: no limit).
     *
     * @return the most timers pending at once
     */
    public int maxPendingTimers() {
        return maxPendingTimers;
    }
}
