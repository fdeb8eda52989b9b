package io.wheelbeat.bench;

import io.wheelbeat.core.Ticker;
import io.wheelbeat.core.TimerCallback;
import io.wheelbeat.core.WheelSettings;
import io.wheelbeat.core.internal.TimerWheel;

/**
 * Ours on the owner thread: {@link TimerWheel}'s long-id API, each operation reading the clock
 * once (as a driver's {@code schedule(callback, delay, unit)} does); re-arm is
 * {@code rescheduleAt}.
 */
final class OursAdapter extends OwnerThreadAdapter {

    private final Ticker clock;
    private final TimerWheel wheel;
    private final long[] ids;
    private final TimerCallback callback = id -> onFired();

    OursAdapter(int capacity, boolean virtualTime) {
        super(capacity);
        this.clock = clock(virtualTime);
        // Default settings (2^20 ns tick, 4096 slots, arrays grown on demand): what a user gets.
        this.wheel = engine(new WheelSettings(), clock.nanoTime());
        this.ids = new long[capacity];
    }

    /**
     * The engine with {@code settings}' tick, slots and initial room, starting at
     * {@code startNanos}: what a driver builds from them, without the driver.
     */
    static TimerWheel engine(WheelSettings settings, long startNanos) {
        return new TimerWheel(startNanos, settings.tick().toNanos(), settings.slots(), settings.initialCapacity());
    }

    @Override
    void schedule(int i, long delayNanos) {
        ids[i] = wheel.scheduleAt(callback, clock.nanoTime() + delayNanos);
    }

    @Override
    void cancel(int i) {
        wheel.cancel(ids[i]);
    }

    @Override
    void rearm(int i, long delayNanos) {
        long deadline = clock.nanoTime() + delayNanos;
        if (!wheel.rescheduleAt(ids[i], deadline)) {
            ids[i] = wheel.scheduleAt(callback, deadline);
        }
    }

    @Override
    int poll() {
        return wheel.poll(clock.nanoTime());
    }

    @Override
    long untilNextDeadline() {
        return wheel.pendingTimers() == 0 ? -1 : Math.max(0, wheel.nextDeadlineNanos() - clock.nanoTime());
    }

    @Override
    void advanceTime(long nanos) {
        advance(clock, nanos);
    }
}
