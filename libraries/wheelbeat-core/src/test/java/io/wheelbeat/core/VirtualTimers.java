package io.wheelbeat.core;

import io.wheelbeat.core.internal.ManualTicker;

/** Threaded timers in virtual time for tests. */
public final class VirtualTimers {

    private VirtualTimers() {}

    /**
     * Builds a {@link WheelTimer} whose wheel reads {@code ticker} and whose thread wakes whenever
     * the ticker advances, as it would when a real deadline passes.
     */
    public static WheelTimer wheelTimer(ManualTicker ticker, WheelTimer.Builder builder) {
        WheelTimer timer = builder.ticker(ticker).build();
        ticker.onAdvance(timer::wakeToReadTheClock);
        return timer;
    }
}
