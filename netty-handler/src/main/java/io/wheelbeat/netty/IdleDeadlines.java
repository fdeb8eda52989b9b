package io.wheelbeat.netty;

import io.netty.util.concurrent.EventExecutor;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.TimerCallback;
import io.wheelbeat.core.TimerWheel;
import io.wheelbeat.core.WheelScheduler;
import io.wheelbeat.core.WheelTimeout;
import io.wheelbeat.core.WheelTimerTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The three timers (reader, writer, all) of one {@link WheelIdleStateHandler}, on whatever drives
 * them. Each kind has at most one pending timer, which wakes the handler to run its checks; when
 * it expires the handler is told, on the handler's executor, through
 * {@link WheelIdleStateHandler#deadlineExpired(int)}. One per started handler.
 *
 * <p>Every method is for the handler's executor thread only.
 */
abstract class IdleDeadlines {

    static final int READER = 0;
    static final int WRITER = 1;
    static final int ALL = 2;

    final WheelIdleStateHandler handler;

    IdleDeadlines(WheelIdleStateHandler handler) {
        this.handler = handler;
    }

    /** Makes the timer of {@code kind} fire at {@code deadlineNanos}, replacing its pending one. */
    abstract void arm(int kind, long deadlineNanos);

    /** Cancels the pending timer of {@code kind}, if any. */
    abstract void disarm(int kind);

    /**
     * How late a timer may fire only because of the timer's granularity: a check found later
     * than that means the loop itself ran late.
     */
    abstract long quantumNanos();

    /**
     * Whether moving a timer is cheap enough to do on every read batch and write completion.
     * When not, traffic only stamps times and the timer wakes for every check, as Netty's does.
     */
    abstract boolean rearmsOnTraffic();

    /**
     * On the per-event-loop wheel, through its owner-thread long-id API: arming is a reschedule
     * (one field write when the deadline stays in its slot), nothing allocates, and this one
     * object is the callback of all three timers, told apart by id. The ids live with the checks'
     * state in the handler ({@link WheelIdleStateHandler#timer}), so that only the kinds watched
     * take room.
     */
    static final class OnLoopWheel extends IdleDeadlines implements TimerCallback {
        private final ExecutorDrivenWheel wheel;

        /** {@code wheel} must be owned by the handler's executor. */
        OnLoopWheel(WheelIdleStateHandler handler, ExecutorDrivenWheel wheel) {
            super(handler);
            this.wheel = wheel;
        }

        @Override
        void arm(int kind, long deadlineNanos) {
            long timer = handler.timer(kind);
            if (timer == TimerWheel.NO_TIMER || !wheel.rescheduleAt(timer, deadlineNanos)) {
                handler.setTimer(kind, wheel.scheduleAt(this, deadlineNanos));
            }
        }

        @Override
        void disarm(int kind) {
            long timer = handler.timer(kind);
            if (timer != TimerWheel.NO_TIMER) {
                wheel.cancel(timer);
                handler.setTimer(kind, TimerWheel.NO_TIMER);
            }
        }

        @Override
        long quantumNanos() {
            return wheel.wheel().tickNanos();
        }

        @Override
        boolean rearmsOnTraffic() {
            return true;
        }

        @Override
        public void onTimeout(long timerId) {
            handler.timerExpired(timerId);
        }

        @Override
        public String toString() {
            return "idle deadlines of " + handler;
        }
    }

    /**
     * On a scheduler shared across event loops (a {@link io.wheelbeat.core.WheelTimer}): each arm
     * allocates a timeout handle and each expiry hops to the handler's executor, so traffic never
     * re-arms; it only stamps times, as Netty's own handler does. This one object is the task of
     * all three kinds' timeouts, told apart by handle.
     */
    static final class OnSharedTimer extends IdleDeadlines implements WheelTimerTask {
        private static final Logger log = LoggerFactory.getLogger(OnSharedTimer.class);

        private final WheelScheduler timer;
        private final EventExecutor executor;
        // The timeout each kind waits for, or null; executor thread only.
        private WheelTimeout readerTimeout;
        private WheelTimeout writerTimeout;
        private WheelTimeout allTimeout;

        OnSharedTimer(WheelIdleStateHandler handler, WheelScheduler timer, EventExecutor executor) {
            super(handler);
            this.timer = timer;
            this.executor = executor;
        }

        @Override
        void arm(int kind, long deadlineNanos) {
            disarm(kind);
            // Deadlines are readings of the executor's ticker plus a positive duration, so this
            // difference cannot overflow; the shared timer measures the delay on its own clock.
            long delay = deadlineNanos - executor.ticker().nanoTime();
            setTimeout(kind, timer.newTimeout(this, delay, TimeUnit.NANOSECONDS));
        }

        @Override
        void disarm(int kind) {
            WheelTimeout timeout = timeout(kind);
            if (timeout != null) {
                timeout.cancel();
                setTimeout(kind, null);
            }
        }

        @Override
        long quantumNanos() {
            return 0;
        }

        @Override
        boolean rearmsOnTraffic() {
            return false;
        }

        /** Runs on the timer's thread: hands over to the executor. */
        @Override
        public void run(WheelTimeout expired) {
            try {
                executor.execute(() -> expiredOnExecutor(expired));
            } catch (RejectedExecutionException e) {
                log.debug("{} is shut down; idle deadline of {} dropped", executor, handler, e);
            }
        }

        private void expiredOnExecutor(WheelTimeout expired) {
            for (int kind = READER; kind <= ALL; kind++) {
                // A timeout re-armed or cancelled after it expired on the timer's thread is stale.
                if (timeout(kind) == expired) {
                    setTimeout(kind, null);
                    handler.deadlineExpired(kind);
                    return;
                }
            }
        }

        private WheelTimeout timeout(int kind) {
            return kind == READER ? readerTimeout : kind == WRITER ? writerTimeout : allTimeout;
        }

        private void setTimeout(int kind, WheelTimeout timeout) {
            if (kind == READER) {
                readerTimeout = timeout;
            } else if (kind == WRITER) {
                writerTimeout = timeout;
            } else {
                allTimeout = timeout;
            }
        }

        @Override
        public String toString() {
            return "idle deadlines of " + handler;
        }
    }
}
