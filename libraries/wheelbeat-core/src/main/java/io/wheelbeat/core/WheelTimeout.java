package io.wheelbeat.core;

/**
 * The handle of a task scheduled with {@link WheelScheduler#newTimeout}.
 *
 * <p>A timeout ends in exactly one of two ways: it expires (its task is run once) or it is
 * cancelled (its task never runs). {@link #cancel()} and expiry race safely from any threads: one
 * of them wins, never both.
 *
 * <p>Thread-safe.
 */
public interface WheelTimeout {

    /**
     * Returns the scheduled task.
     *
     * @return the task given to {@code newTimeout}
     */
    WheelTimerTask task();

    /**
     * Cancels the timeout if it is still pending.
     *
     * @return {@code true} if this call cancelled it, so its task will never run; {@code false} if
     *     it had already expired or been cancelled (calling twice is harmless)
     */
    boolean cancel();

    /**
     * Returns whether the timeout was cancelled.
     *
     * @return whether {@code cancel()} succeeded on this timeout
     */
    boolean isCancelled();

    /**
     * Returns whether the timeout expired: its task has been, or is being, run.
     *
     * @return whether the timeout expired
     */
    boolean isExpired();

    /**
     * Returns the deadline as a reading of the scheduler's {@link Ticker}.
     *
     * @return the deadline in nanoseconds of the scheduler's ticker
     */
    long deadlineNanos();
}
