package io.wheelbeat.core;

/**
 * What a timer of an {@link ExecutorDrivenWheel} does when it expires.
 *
 * <p>Called on the wheel's owner thread, once per expired timer. One callback object may serve
 * many timers: the expired timer's id tells them apart, so a connection handler can keep one
 * callback (itself) for all of its deadlines and allocate nothing per timer.
 *
 * <p>When the callback runs, the timer is no longer pending: {@link ExecutorDrivenWheel#cancel(long)}
 * and {@link ExecutorDrivenWheel#rescheduleAt(long, long)} on its id return {@code false}. To fire
 * again, schedule a new timer. An exception thrown here is logged and counted, and the wheel goes
 * on.
 */
@FunctionalInterface
public interface TimerCallback {

    /**
     * Called when the timer {@code timerId} expires.
     *
     * @throws Exception anything: the driver logs it, counts it as failed and goes on
     * @param timerId the id {@link ExecutorDrivenWheel#schedule} returned for the timer
     */
    void onTimeout(long timerId) throws Exception;
}
