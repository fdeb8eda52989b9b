package io.wheelbeat.netty.internal;

import io.netty.util.concurrent.DefaultPromise;
import io.netty.util.concurrent.ScheduledFuture;
import io.wheelbeat.core.TimerNode;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.TimeUnit;

/**
 * A task scheduled on a {@link WheelIoEventLoop}: its future, its wheel timer ({@link #timer}), and the
 * task the loop runs when the schedule or a cancel is handed over from another thread. The
 * contract is that of Netty's {@code ScheduledFutureTask}: a one-shot task becomes uncancellable
 * as it starts; a periodic one ({@link Periodic}) runs until cancelled, until it throws (the
 * future fails) or until the loop shuts down.
 *
 * <p>Thread rules: {@link #cancel}, {@link #getDelay} and the future's methods from any thread;
 * {@link #timer} is the loop's alone.
 */
class WheelScheduledTask<V> extends DefaultPromise<V> implements ScheduledFuture<V>, Runnable {

    /** A {@link Runnable} or a {@link Callable}. */
    private final Object task;
    /** A reading of the loop's ticker; moved by the loop only, when a periodic task re-arms. */
    long deadlineNanos;
    /** The task's node on the loop's wheel: pending while the task is placed. Loop only. */
    final Timer timer = new Timer();

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

    /** The task's timer: when it is due the wheel expires it on the loop, which fires the task. */
    final class Timer extends TimerNode {
        @Override
        protected void expire() {
            fire();
        }

        WheelScheduledTask<V> task() {
            return WheelScheduledTask.this;
        }
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

    @Override
    public int compareTo(Delayed other) {
        if (this == other) {
            return 0;
        }
        long difference = other instanceof WheelScheduledTask
                ? deadlineNanos - ((WheelScheduledTask<?>) other).deadlineNanos
                : getDelay(TimeUnit.NANOSECONDS) - other.getDelay(TimeUnit.NANOSECONDS);
        return Long.signum(difference);
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
