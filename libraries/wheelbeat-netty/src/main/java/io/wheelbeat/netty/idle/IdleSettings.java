package io.wheelbeat.netty.idle;

import io.netty.handler.timeout.IdleState;
import io.wheelbeat.core.WheelScheduler;
import io.wheelbeat.core.internal.checks.ConfigChecks;
import io.wheelbeat.netty.EventLoopWheels;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * A {@link WheelIdleStateHandler}'s configuration and the checks of its values: immutable, so one
 * instance serves every handler configured alike (one per builder, or one per distinct set of
 * constructor arguments), and a handler keeps one reference instead of the values.
 *
 * <p>Thread-safe.
 */
final class IdleSettings {

    private static final long MIN_TIMEOUT_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    /**
     * Recent settings of the Netty-shaped constructors, by their values. Racy on purpose: a
     * reader sees null, an older or a newer entry, each fully built (every field is final),
     * and a miss only costs a new instance.
     */
    private static final IdleSettings[] INTERNED = new IdleSettings[16];

    final boolean observeOutput;
    final long readerIdleTimeNanos;
    final long writerIdleTimeNanos;
    final long allIdleTimeNanos;
    /** Reader or all idleness is watched: reads count. */
    final boolean watchesReads;
    /** Writer or all idleness is watched: writes count. */
    final boolean watchesWrites;
    /** Where the timers go: per-event-loop wheels, or (when non-null) {@link #sharedTimer}. */
    final EventLoopWheels wheels;

    final WheelScheduler sharedTimer;
    /** Null when no meter registry was given. */
    final IdleEventCounters counters;

    /** The builder's settings; {@code sharedTimer} (when non-null) takes the place of {@code wheels}. */
    IdleSettings(
            boolean observeOutput,
            long readerIdleTimeNanos,
            long writerIdleTimeNanos,
            long allIdleTimeNanos,
            EventLoopWheels wheels,
            WheelScheduler sharedTimer,
            IdleEventCounters counters) {
        this.observeOutput = observeOutput;
        this.readerIdleTimeNanos = readerIdleTimeNanos;
        this.writerIdleTimeNanos = writerIdleTimeNanos;
        this.allIdleTimeNanos = allIdleTimeNanos;
        this.watchesReads = readerIdleTimeNanos > 0 || allIdleTimeNanos > 0;
        this.watchesWrites = writerIdleTimeNanos > 0 || allIdleTimeNanos > 0;
        this.wheels = wheels;
        this.sharedTimer = sharedTimer;
        this.counters = counters;
    }

    /**
     * Settings with the shared wheels and no metrics, as the Netty-shaped constructors give: zero
     * or less disables a check; positive values are floored at 1 ms.
     */
    static IdleSettings interned(
            boolean observeOutput, long readerIdleTime, long writerIdleTime, long allIdleTime, TimeUnit unit) {
        Objects.requireNonNull(unit, "unit");
        long readerIdleTimeNanos = idleNanos(readerIdleTime, unit);
        long writerIdleTimeNanos = idleNanos(writerIdleTime, unit);
        long allIdleTimeNanos = idleNanos(allIdleTime, unit);
        int hash = Boolean.hashCode(observeOutput)
                + 31
                        * (Long.hashCode(readerIdleTimeNanos)
                                + 31 * (Long.hashCode(writerIdleTimeNanos) + 31 * Long.hashCode(allIdleTimeNanos)));
        int index = (hash ^ hash >>> 16) & (INTERNED.length - 1);
        IdleSettings cached = INTERNED[index];
        if (cached != null
                && cached.observeOutput == observeOutput
                && cached.readerIdleTimeNanos == readerIdleTimeNanos
                && cached.writerIdleTimeNanos == writerIdleTimeNanos
                && cached.allIdleTimeNanos == allIdleTimeNanos) {
            return cached;
        }
        IdleSettings settings = new IdleSettings(
                observeOutput,
                readerIdleTimeNanos,
                writerIdleTimeNanos,
                allIdleTimeNanos,
                EventLoopWheels.shared(),
                null,
                null);
        INTERNED[index] = settings;
        return settings;
    }

    private static long idleNanos(long time, TimeUnit unit) {
        return time <= 0 ? 0 : Math.max(unit.toNanos(time), MIN_TIMEOUT_NANOS);
    }

    /**
     * A builder's idle time in nanoseconds: zero disables the check; positive values are floored
     * at 1 ms.
     *
     * @throws NullPointerException if {@code time} is null
     * @throws IllegalArgumentException if {@code time} is negative
     */
    static long idleNanos(String name, Duration time) {
        long nanos = ConfigChecks.nonNegativeNanos(name, time);
        return nanos == 0 ? 0 : Math.max(nanos, MIN_TIMEOUT_NANOS);
    }

    /** The idle time of the {@code state} check in nanoseconds; 0 when it is not watched. */
    long idleTime(IdleState state) {
        return switch (state) {
            case READER_IDLE -> readerIdleTimeNanos;
            case WRITER_IDLE -> writerIdleTimeNanos;
            case ALL_IDLE -> allIdleTimeNanos;
        };
    }
}
