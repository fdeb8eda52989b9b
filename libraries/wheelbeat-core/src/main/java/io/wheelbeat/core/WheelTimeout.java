package io.wheelbeat.core;

/**
 * The handle of a task scheduled with {@link WheelScheduler#newTimeout}. It either expires (its task
 * runs once) or is cancelled (its task never runs), never both, whatever threads race. Thread-safe.
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
     * @return {@code true} if this call cancelled it; {@code false} if it had expired or been cancelled
     */
    boolean cancel();

    /**
     * Returns whether the timeout was cancelled.
     *
     * @return whether {@code cancel()} succeeded on it
     */
    boolean isCancelled();

    /**
     * Returns whether the timeout expired: its task has run or is running.
     *
     * @return whether it expired
     */
    boolean isExpired();

    /**
     * Returns the deadline, a reading of the scheduler's {@link Ticker}.
     *
     * @return the deadline in nanoseconds
     */
    long deadlineNanos();
}
