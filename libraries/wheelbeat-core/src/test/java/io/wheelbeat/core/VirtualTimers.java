package io.wheelbeat.core;

/** Threaded timers in virtual time for tests. */
public final class VirtualTimers {

    private VirtualTimers() {
    }

    /**
     * Builds a {@link WheelTimer} whose wheel reads {@code ticker} and whose thread wakes whenever
     * the ticker advances, as it would when a real deadline passes.
     */
    public static WheelTimer wheelTimer(ManualTicker ticker, WheelTimer.Builder builder, WheelSettings wheel) {
        WheelTimer timer = builder.wheel(wheel.ticker(ticker)).build();
        ticker.onAdvance(timer::wakeToReadTheClock);
        return timer;
    }
}
