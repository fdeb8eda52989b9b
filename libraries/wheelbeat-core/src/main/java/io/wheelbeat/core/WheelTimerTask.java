package io.wheelbeat.core;

/**
 * A task run once by a {@link WheelScheduler} when its {@link WheelTimeout} expires.
 *
 * <p>It runs on the scheduler's owner thread, or on the task executor of a {@link WheelTimer}
 * that has one. An exception it throws is logged through SLF4J; the scheduler goes on.
 */
@FunctionalInterface
public interface WheelTimerTask {

    /**
     * Runs the task; {@code timeout} is the handle {@code newTimeout} returned for it.
     *
     * @param timeout the handle of this run
     * @throws Exception anything: the timer logs it and goes on
     */
    void run(WheelTimeout timeout) throws Exception;
}
