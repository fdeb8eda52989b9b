package io.wheelbeat.core.internal;

import io.wheelbeat.core.ExecutorDrivenWheel;
import java.util.concurrent.Future;
import java.util.function.LongSupplier;

/**
 * The single-threaded executor that drives an {@link ExecutorDrivenWheel}: the wheel asks it to
 * run one task at the earliest pending deadline, and runs every timer callback on its thread.
 *
 * <p>netty-handler adapts a Netty {@code EventLoop} to this interface. Implementations must run
 * every task on one thread, the owner, and be callable from any thread.
 */
public interface WheelExecutor {

    /** {@return whether the calling thread is the owner thread} */
    boolean inOwnerThread();

    /**
     * Runs {@code task} on the owner thread soon.
     *
     * @param task what to run
     */
    void execute(Runnable task);

    /**
     * Runs {@code task} on the owner thread after {@code delayNanos}, measured on the wheel's
     * {@link LongSupplier}.
     *
     * @param task what to run
     * @param delayNanos nanoseconds from now
     * @return a future whose {@code cancel(false)} prevents the run
     */
    Future<?> schedule(Runnable task, long delayNanos);
}
