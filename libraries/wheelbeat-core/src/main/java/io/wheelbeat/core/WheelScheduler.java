package io.wheelbeat.core;

import java.util.concurrent.RejectedExecutionException;

/**
 * Schedules one-shot tasks on a timing wheel from any thread.
 *
 * <p>Implemented by {@link WheelTimer} (a wheel with its own thread) and by
 * {@link ExecutorDrivenWheel} (a wheel that an existing single-threaded executor drives). Each
 * call allocates one handle; for allocation-free timers on the owner thread hold a
 * {@link TimerNode} and arm it with {@link ExecutorDrivenWheel#schedule(TimerNode, long)}.
 *
 * <p>Thread-safe.
 */
public interface WheelScheduler {

    /**
     * Schedules {@code task} to run once after {@code delayNanos}. Zero and negative delays run as
     * soon as the scheduler's thread gets to it; delays beyond 2^62 ns (146 years) saturate. O(1)
     * from any thread: other threads hand the timeout to the owner thread through a lock-free
     * queue. The delay is a plain {@code long}, as in every per-timer call of wheelbeat (settings
     * take a {@code Duration}); Netty's {@code (delay, unit)} shape is {@code NettyWheelTimer}'s.
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
     * Returns the number of timers pending, counting those handed over and not yet placed. Read
     * from a thread other than the owner it is a snapshot.
     *
     * @return the number of pending timers
     */
    int pendingTimers();

    /**
     * Returns the clock that deadlines are read against.
     *
     * @return the scheduler's clock
     */
    Ticker ticker();
}
