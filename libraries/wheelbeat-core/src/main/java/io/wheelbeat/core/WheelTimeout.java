package io.wheelbeat.core;

import java.util.function.Consumer;

/**
 * The handle of a task scheduled with {@link WheelScheduler#newTimeout}. It either expires (its task
 * runs once) or is cancelled (its task never runs), never both, whatever threads race. Thread-safe.
 */
public interface WheelTimeout {

    /** {@return the scheduled task} */
    Consumer<WheelTimeout> task();

    /**
     * Cancels the timeout if it is still pending.
     *
     * @return {@code true} if this call cancelled it; {@code false} if it had expired or been cancelled
     */
    boolean cancel();

    /** {@return whether the timeout was cancelled} */
    boolean isCancelled();

    /** {@return whether the timeout expired: its task has run or is running} */
    boolean isExpired();

    /** {@return the deadline, a reading of the scheduler's {@link WheelScheduler#ticker() clock}} */
    long deadlineNanos();
}
