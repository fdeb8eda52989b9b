package io.wheelbeat.core;

import java.util.concurrent.RejectedExecutionException;

/**
 * Schedules one-shot tasks on a timing wheel from any thread: {@link WheelTimer} or
 * {@link ExecutorDrivenWheel}. Each call allocates a handle; on the owner thread a
 * {@link TimerNode} allocates nothing. Thread-safe.
 */
public interface WheelScheduler {

    /**
     * Schedules {@code task} to run once after {@code delayNanos}; O(1) from any thread. Delays of
     * zero or less run as soon as the owner thread gets to it; delays beyond 2^62 ns saturate.
     *
     * @param task what runs when the timeout expires
     * @param delayNanos nanoseconds from now
     * @return the timeout, to cancel it or read its state
     * @throws NullPointerException if {@code task} is null
     * @throws RejectedExecutionException if the maximum number of pending timers is reached
     * @throws IllegalStateException if the scheduler has been stopped
     */
    WheelTimeout newTimeout(WheelTimerTask task, long delayNanos);

    /**
     * {@return the number of pending timers, counting those handed over and not yet placed; a
     * snapshot off the owner thread}
     */
    int pendingTimers();

    /** {@return the clock deadlines are read against} */
    Ticker ticker();
}
