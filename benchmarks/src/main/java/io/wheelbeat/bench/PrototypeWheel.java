package io.wheelbeat.bench;

/**
 * What the benchmark-only wheels of the overflow design record ({@link RoundsWheelPrototype},
 * {@link HierarchicalWheelPrototype}) offer {@link OverflowSchemeBenchmark}, and the tick
 * arithmetic they share: 2^20 ns ticks, a timer firing on the first tick boundary at or after its
 * deadline (as wheelbeat's wheel did before v2). Owner thread only.
 */
interface PrototypeWheel {

    int TICK_SHIFT = 20;
    long TICK_NANOS = 1L << TICK_SHIFT;

    /** Schedules a timer at {@code deadlineNanos} (same clock as the origin); returns its id. */
    long scheduleAt(long deadlineNanos);

    /** Moves a pending timer; returns false if it is not pending. */
    boolean rescheduleAt(long id, long deadlineNanos);

    /** Fires, in tick order, every timer due at or before the tick of {@code nowNanos}. */
    int advance(long nowNanos);

    /** The first tick at or after {@code deadline}: a timer never fires early. */
    static long tickOf(long deadline) {
        return (deadline >>> TICK_SHIFT) + ((deadline & (TICK_NANOS - 1)) == 0 ? 0 : 1);
    }
}
