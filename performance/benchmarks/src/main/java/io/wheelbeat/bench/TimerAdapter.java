package io.wheelbeat.bench;

import io.wheelbeat.core.internal.ManualTicker;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * One contender behind the operations every benchmark uses. Timer {@code i} (0 to
 * {@code capacity - 1}) is named by its index; the contender's own handle for it lives in a
 * preallocated array inside the adapter, so the benchmarks do the same bookkeeping for everyone.
 *
 * <p>Two kinds of contenders:
 * <ul>
 *   <li><b>owner-thread</b> timers (ours, Agrona, the Netty event loop) are driven by the caller:
 *       {@link #poll()} fires what is due. They can run on a {@link ManualTicker} (virtual time),
 *       which {@link #advanceTime(long)} moves.</li>
 *   <li><b>threaded</b> timers (WheelTimer, HashedWheelTimer, ScheduledThreadPoolExecutor, Kafka)
 *       fire on threads of their own, always in real time; their threads are named through
 *       {@link WorkerThreads} so that {@link ThreadCpuProfiler} can charge their CPU time.</li>
 * </ul>
 *
 * <p>Every timer's expiry calls {@link #onFired()}. Each adapter fires on one thread only, so the
 * count is a single-writer counter that any thread may read.
 */
abstract class TimerAdapter implements AutoCloseable {

    /** The tick of every contender that has one: 2^20 ns, as our default. */
    static final long TICK_NANOS = 1L << 20;
    /** Ticks per wheel turn for every wheel: 4096, as our default (a 4.29 s turn). */
    static final int WHEEL_TICKS = 4096;

    final int capacity;
    private final AtomicLong fired = new AtomicLong();

    TimerAdapter(int capacity) {
        this.capacity = capacity;
    }

    /** Schedules timer {@code i} (not pending) to fire {@code delayNanos} from now. */
    abstract void schedule(int i, long delayNanos);

    /** Cancels timer {@code i}; nothing happens if it is not pending. */
    abstract void cancel(int i);

    /**
     * Re-arms timer {@code i} to fire {@code delayNanos} from now: cancel then schedule again
     * (what the peers offer), unless the contender has a re-arm of its own. A timer that already
     * fired is scheduled anew.
     */
    void rearm(int i, long delayNanos) {
        cancel(i);
        schedule(i, delayNanos);
    }

    /** Fires the timers due now on the calling thread; threaded contenders return 0 at once. */
    abstract int poll();

    /** Whether the contender fires on a thread of its own (and so runs in real time only). */
    abstract boolean threaded();

    /** Moves virtual time forward. Only for owner-thread contenders built with virtual time. */
    void advanceTime(long nanos) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " runs in real time");
    }

    /** How many timers have fired so far. */
    final long fired() {
        return fired.get();
    }

    /** Counts one expiry. Called by one thread only (the one that fires this contender's timers). */
    final void onFired() {
        fired.lazySet(fired.get() + 1);
    }

    @Override
    public abstract void close();

    /** The clock of an owner-thread contender: the system clock, or a manual one for virtual time. */
    static LongSupplier clock(boolean virtualTime) {
        return virtualTime ? new ManualTicker(1L << 40) : System::nanoTime;
    }

    /** Moves {@code clock} forward if it is virtual; explains the mistake if it is the system clock. */
    static void advance(LongSupplier clock, long nanos) {
        if (!(clock instanceof ManualTicker manual)) {
            throw new UnsupportedOperationException("this adapter was built for real time");
        }
        manual.advance(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
    }
}
