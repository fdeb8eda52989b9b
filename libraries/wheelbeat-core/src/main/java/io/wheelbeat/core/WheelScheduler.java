package io.wheelbeat.core;

import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Schedules one-shot tasks on a timing wheel from any thread, the role of Netty's {@code Timer}:
 * {@link WheelTimer} or {@link ExecutorDrivenWheel}. A task is a {@code Consumer<WheelTimeout>}
 * told its own handle; it runs once on the owner thread (or a {@link WheelTimer}'s task executor),
 * and what it throws is logged and counted, the scheduler going on. The clock is a
 * {@link LongSupplier} of nanoseconds read as {@link System#nanoTime()} is (only differences mean
 * anything). Each call allocates a handle; on the owner thread a {@link TimerNode} allocates
 * nothing. Thread-safe.
 */
public interface WheelScheduler {

    /**
     * Schedules {@code task} to run once after {@code delayNanos}; O(1) from any thread. Delays of
     * zero or less run as soon as the owner thread gets to it; delays beyond 2^62 ns saturate.
     *
     * @param task what runs when the timeout expires, given the handle this call returns
     * @param delayNanos nanoseconds from now
     * @return the timeout, to cancel it or read its state
     * @throws NullPointerException if {@code task} is null
     * @throws RejectedExecutionException if the maximum number of pending timers is reached
     * @throws IllegalStateException if the scheduler has been stopped
     */
    WheelTimeout newTimeout(Consumer<WheelTimeout> task, long delayNanos);

    /**
     * {@return the number of pending timers, counting those handed over and not yet placed; a
     * snapshot off the owner thread}
     */
    int pendingTimers();

    /** {@return the clock deadlines are read against: nanoseconds, compared by difference; any thread} */
    LongSupplier ticker();
}
