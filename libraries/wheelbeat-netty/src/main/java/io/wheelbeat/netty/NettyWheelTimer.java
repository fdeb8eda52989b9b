package io.wheelbeat.netty;

import io.netty.util.Timeout;
import io.netty.util.Timer;
import io.netty.util.TimerTask;
import io.wheelbeat.core.WheelTimeout;
import io.wheelbeat.core.WheelTimer;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.HashSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Netty's {@link Timer} on a {@link WheelTimer}: swap {@code new HashedWheelTimer()} for
 * {@code new NettyWheelTimer()}. {@code HashedWheelTimer}'s contract: {@link Timeout#cancel()}
 * returns whether it won and, on Netty 4.2, calls the task's {@code cancelled(Timeout)} on the
 * cancelling thread; {@link #stop()} returns the pending timeouts and later scheduling throws
 * {@link IllegalStateException}, as does {@code stop()} from one of its tasks. A timeout fires at
 * its deadline plus wake-up lateness, not on a tick; the thread sleeps while nothing is due.
 *
 * <p>Thread-safe; tasks run on the wrapped timer's thread (or its task executor).
 */
public final class NettyWheelTimer implements Timer {

    /**
     * {@code TimerTask.cancelled(Timeout)}, a default method since Netty 4.2; null on 4.1. Looked up
     * once: a constant handle, so that calling it costs what a direct call does.
     */
    private static final MethodHandle TASK_CANCELLED = taskCancelled();

    private final WheelTimer timer;

    /** A timer on a new {@link WheelTimer} with the default settings and thread. */
    public NettyWheelTimer() {
        this(WheelTimer.builder().build());
    }

    /**
     * A timer on {@code timer}; {@link #stop()} stops it.
     *
     * @param timer the timer to run on
     * @throws NullPointerException if {@code timer} is null
     */
    public NettyWheelTimer(WheelTimer timer) {
        this.timer = Objects.requireNonNull(timer, "timer");
    }

    /**
     * Schedules {@code task} to run once after {@code delay}; zero and negative delays run as
     * soon as the timer's thread gets to it.
     *
     * @throws NullPointerException if {@code task} or {@code unit} is null
     * @throws IllegalStateException if the timer has been stopped
     * @throws java.util.concurrent.RejectedExecutionException if the wheel's maximum number of
     *     pending timers is reached
     */
    @Override
    public Timeout newTimeout(TimerTask task, long delay, TimeUnit unit) {
        NettyTimeout timeout = new NettyTimeout(this, Objects.requireNonNull(task, "task"));
        timeout.bind(timer.newTimeout(timeout, unit.toNanos(delay)));
        return timeout;
    }

    /**
     * Stops the timer's thread, cancels every timeout that neither expired nor was cancelled and
     * returns them; their tasks never run and are not told {@code cancelled}. Later calls return
     * an empty set.
     *
     * @throws IllegalStateException if called from a task run on the timer's thread
     */
    @Override
    public Set<Timeout> stop() {
        Set<WheelTimeout> unfired = timer.stop();
        Set<Timeout> cancelled = new HashSet<>(unfired.size() * 2);
        for (WheelTimeout pending : unfired) {
            if (pending.cancel()) {
                cancelled.add((NettyTimeout) pending.task());
            }
        }
        return cancelled;
    }

    @Override
    public String toString() {
        return "NettyWheelTimer(" + timer + ")";
    }

    private static MethodHandle taskCancelled() {
        try {
            return MethodHandles.publicLookup()
                    .findVirtual(TimerTask.class, "cancelled", MethodType.methodType(void.class, Timeout.class));
        } catch (NoSuchMethodException e) {
            return null; // Netty 4.1
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e); // a public method of a public interface
        }
    }

    /** Netty's view of one {@link WheelTimeout}; the wheel runs it as the timeout's task. */
    private static final class NettyTimeout implements Timeout, Consumer<WheelTimeout> {
        private final NettyWheelTimer timer;
        private final TimerTask task;
        /** Set by newTimeout, or first by the task if it runs before newTimeout returns. */
        private volatile WheelTimeout scheduled;

        NettyTimeout(NettyWheelTimer timer, TimerTask task) {
            this.timer = timer;
            this.task = task;
        }

        void bind(WheelTimeout timeout) {
            scheduled = timeout;
        }

        @Override
        public void accept(WheelTimeout timeout) {
            scheduled = timeout;
            try {
                task.run(this);
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                // The wheel logs and counts what a task throws; a checked exception travels wrapped.
                throw new UndeclaredThrowableException(e);
            }
        }

        @Override
        public Timer timer() {
            return timer;
        }

        @Override
        public TimerTask task() {
            return task;
        }

        @Override
        public boolean isExpired() {
            return scheduled.isExpired();
        }

        @Override
        public boolean isCancelled() {
            return scheduled.isCancelled();
        }

        @Override
        public boolean cancel() {
            if (!scheduled.cancel()) {
                return false;
            }
            if (TASK_CANCELLED != null) {
                try {
                    TASK_CANCELLED.invokeExact(task, (Timeout) this);
                } catch (RuntimeException | Error e) {
                    throw e;
                } catch (Throwable e) {
                    throw new IllegalStateException(e); // cancelled(Timeout) declares no checked exception
                }
            }
            return true;
        }

        @Override
        public String toString() {
            // Not scheduled.toString(): that prints its task, which is this.
            String state = isExpired() ? "expired" : isCancelled() ? "cancelled" : "pending";
            return "NettyTimeout(" + task + ", " + state + ")";
        }
    }
}
