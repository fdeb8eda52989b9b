package io.wheelbeat.core.internal;

import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.WheelTimer;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * Makes an {@link ExecutorDrivenWheel} and reaches the scheduler inside a driver, for wheelbeat's
 * own modules: the constructor and the shared state take internal types, so they stay out of the
 * public API (the JDK's shared-secrets pattern, through method handles within this module).
 */
public final class Drivers {

    private static final MethodHandle NEW_EXECUTOR_DRIVEN;
    private static final MethodHandle EXECUTOR_DRIVEN_TIMERS;
    private static final MethodHandle TIMER_TIMERS;

    static {
        try {
            MethodHandles.Lookup driven =
                    MethodHandles.privateLookupIn(ExecutorDrivenWheel.class, MethodHandles.lookup());
            NEW_EXECUTOR_DRIVEN = driven.findConstructor(
                    ExecutorDrivenWheel.class,
                    MethodType.methodType(void.class, WheelExecutor.class, WheelSettings.class));
            EXECUTOR_DRIVEN_TIMERS = driven.findGetter(ExecutorDrivenWheel.class, "timers", HandoverScheduler.class);
            TIMER_TIMERS = MethodHandles.privateLookupIn(WheelTimer.class, MethodHandles.lookup())
                    .findGetter(WheelTimer.class, "timers", HandoverScheduler.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private Drivers() {}

    /**
     * Creates a wheel with {@code settings}, driven by {@code executor}, whose tasks it schedules by
     * the settings' ticker.
     *
     * @param executor the owner thread's executor, which runs every callback
     * @param settings tick, slots, limit and the clock the executor schedules by
     * @return the wheel
     * @throws NullPointerException if an argument is null
     */
    public static ExecutorDrivenWheel executorDriven(WheelExecutor executor, WheelSettings settings) {
        try {
            return (ExecutorDrivenWheel) NEW_EXECUTOR_DRIVEN.invokeExact(executor, settings);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    static HandoverScheduler timers(ExecutorDrivenWheel wheel) {
        try {
            return (HandoverScheduler) EXECUTOR_DRIVEN_TIMERS.invokeExact(wheel);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    static HandoverScheduler timers(WheelTimer timer) {
        try {
            return (HandoverScheduler) TIMER_TIMERS.invokeExact(timer);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
