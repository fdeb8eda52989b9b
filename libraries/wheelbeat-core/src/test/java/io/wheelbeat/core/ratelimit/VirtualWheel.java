package io.wheelbeat.core.ratelimit;

import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.VirtualExecutor;
import io.wheelbeat.core.internal.Drivers;
import io.wheelbeat.core.internal.ManualTicker;
import io.wheelbeat.core.internal.WheelSettings;
import java.util.concurrent.TimeUnit;

/**
 * An {@link ExecutorDrivenWheel} in virtual time, driven by a {@link VirtualExecutor} owned by
 * the thread that creates it. Time is read as nanoseconds since creation, which is also the
 * origin of every limiter built on it (so windows start at multiples of their length).
 */
final class VirtualWheel {

    static final long SECOND = TimeUnit.SECONDS.toNanos(1);
    static final long MILLI = TimeUnit.MILLISECONDS.toNanos(1);
    /** Past any deadline by more than the wheel's tick. */
    static final long TICK_SLACK = 2 * MILLI;

    final ManualTicker ticker = new ManualTicker(7_000_000_123L);
    final VirtualExecutor executor = new VirtualExecutor(ticker);
    final ExecutorDrivenWheel wheel;
    private final long start = ticker.nanoTime();

    VirtualWheel() {
        this(new WheelSettings());
    }

    VirtualWheel(WheelSettings settings) {
        wheel = Drivers.executorDriven(executor, settings.ticker(ticker));
    }

    <K> KeyedRateLimiter<K> limiter(RateLimit limit) {
        return KeyedRateLimiter.builder(limit, wheel).build();
    }

    /** Moves virtual time to {@code nanos} after creation and runs the timers due. */
    void at(long nanos) {
        moveClock(nanos);
        executor.runDue();
    }

    /** Moves virtual time to {@code nanos} after creation; runs nothing. */
    void moveClock(long nanos) {
        long delta = start + nanos - ticker.nanoTime();
        if (delta < 0) {
            throw new IllegalArgumentException("virtual time only moves forward: at(" + nanos + ")");
        }
        ticker.advance(delta, TimeUnit.NANOSECONDS);
    }

    /** Returns virtual time: nanoseconds since creation. Any thread. */
    long now() {
        return ticker.nanoTime() - start;
    }

    int pendingTimers() {
        return wheel.pendingTimers();
    }

    /** Takes single permits for {@code key} until one is refused; returns how many were admitted. */
    static <K> int takeAll(KeyedRateLimiter<K> limiter, K key) {
        int admitted = 0;
        while (limiter.tryAcquire(key) == KeyedRateLimiter.ADMITTED) {
            if (++admitted > 10_000_000) {
                throw new AssertionError("never refused");
            }
        }
        return admitted;
    }
}
