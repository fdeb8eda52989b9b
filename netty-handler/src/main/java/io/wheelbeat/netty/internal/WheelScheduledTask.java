package io.wheelbeat.netty.internal;

import io.netty.util.concurrent.DefaultPromise;
import io.netty.util.concurrent.ScheduledFuture;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.TimerCallback;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.TimeUnit;

/**
 * A task scheduled on a {@link WheelIoEventLoop}: its future, its wheel timer's callback, and the
 * task the loop runs when the schedule or a cancel is handed over from another thread. The
 * contract is that of Netty's {@code ScheduledFutureTask}: a one-shot task becomes uncancellable
 * as it starts; a periodic one ({@link Periodic}) runs until cancelled, until it throws (the
 * future fails) or until the loop shuts down.
 *
 * <p>Thread rules: {@link #cancel}, {@link #getDelay} and the future's methods from any thread;
 * {@link #timerId} is the loop's alone.
 */
class WheelScheduledTask<V> extends DefaultPromise<V> implements ScheduledFuture<V>, TimerCallback, Runnable {

    /** A {@link Runnable} or a {@link Callable}. */
    private final Object task;
    /** A reading of the loop's ticker; moved by the loop only, when a periodic task re-arms. */
    long deadlineNanos;
    /** The wheel timer while the task is placed, else {@link ExecutorDrivenWheel#NO_TIMER}. Loop only. */
    long timerId = ExecutorDrivenWheel.NO_TIMER;
    /**
     * Its place among tasks with equal deadlines, given when the loop receives it (0 until then),
     * as Netty's loop gives its task id. Written on the loop; read by {@link #compareTo}.
     */
    long order;

    WheelScheduledTask(WheelIoEventLoop loop, Object task, long deadlineNanos) {
        super(loop);
        this.task = task;
        this.deadlineNanos = deadlineNanos;
    }

    final WheelIoEventLoop loop() {
        return (WheelIoEventLoop) executor();
    }

    /** The hand-over of a schedule or a cancel from another thread, now on the loop. */
    @Override
    public final void run() {
        loop().arrived(this);
    }

    /** Its timer is due: the wheel calls this on the loop. */
    @Override
    public final void onTimeout(long timerId) {
        this.timerId = ExecutorDrivenWheel.NO_TIMER;
        loop().due(this);
    }

    /** Runs the task as Netty's loop does a due one-shot task. Loop only. */
    void fire() {
        if (!setUncancellable()) {
            return;
        }
        try {
            trySuccess(runTask());
        } catch (Throwable t) {
            tryFailure(t);
        }
    }

    @SuppressWarnings("unchecked")
    final V runTask() throws Exception {
        if (task instanceof Callable) {
            return ((Callable<V>) task).call();
        }
        ((Runnable) task).run();
        return null;
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        boolean cancelled = super.cancel(mayInterruptIfRunning);
        if (cancelled) {
            loop().removeCancelled(this);
        }
        return cancelled;
    }

    @Override
    public long getDelay(TimeUnit unit) {
        return unit.convert(Math.max(0, deadlineNanos - loop().ticker().nanoTime()), TimeUnit.NANOSECONDS);
    }

    /**
     * Netty's order: by deadline, then by the order the loop received the tasks; never 0 for two
     * distinct tasks of the loop (as Netty's, two tasks not yet received compare as 1 either way).
     * Another kind of {@link Delayed} compares by {@link #getDelay}.
     */
    @Override
    public int compareTo(Delayed other) {
        if (this == other) {
            return 0;
        }
        if (!(other instanceof WheelScheduledTask)) {
            return Long.compare(getDelay(TimeUnit.NANOSECONDS), other.getDelay(TimeUnit.NANOSECONDS));
        }
        WheelScheduledTask<?> that = (WheelScheduledTask<?>) other;
        long difference = deadlineNanos - that.deadlineNanos;
        if (difference != 0) {
            return difference < 0 ? -1 : 1;
        }
        return order < that.order ? -1 : 1;
    }

    /**
     * A periodic task: at a fixed rate ({@code periodNanos > 0}: the next deadline is the last one
     * plus the period) or with a fixed delay ({@code periodNanos < 0}: the next deadline is the
     * end of the run plus the delay), as Netty's {@code ScheduledFutureTask} keeps its period.
     */
    static final class Periodic extends WheelScheduledTask<Void> {
        private final long periodNanos;

        Periodic(WheelIoEventLoop loop, Runnable task, long deadlineNanos, long periodNanos) {
            super(loop, task, deadlineNanos);
            this.periodNanos = periodNanos;
        }

        @Override
        void fire() {
            if (isDone()) {
                return;
            }
            try {
                runTask();
            } catch (Throwable t) {
                tryFailure(t);
                return;
            }
            WheelIoEventLoop loop = loop();
            if (!loop.isShutdown()) {
                deadlineNanos = periodNanos > 0 ? deadlineNanos + periodNanos : loop.ticker().nanoTime() - periodNanos;
                if (!isCancelled()) {
                    loop.placeOrDefer(this);
                }
            }
        }
    }
}
