package io.wheelbeat.core;

/**
 * A task a {@link WheelScheduler} runs once when its {@link WheelTimeout} expires, on the owner
 * thread or on a {@link WheelTimer}'s task executor. What it throws is logged; the scheduler goes on.
 */
@FunctionalInterface
public interface WheelTimerTask {

    /**
     * Runs the task.
     *
     * @param timeout the handle {@code newTimeout} returned for it
     * @throws Exception anything: logged, and the scheduler goes on
     */
    void run(WheelTimeout timeout) throws Exception;
}
