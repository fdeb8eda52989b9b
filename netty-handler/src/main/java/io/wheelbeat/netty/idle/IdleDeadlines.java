package io.wheelbeat.netty.idle;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Ticker;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.TimerWheel;
import io.wheelbeat.core.WheelScheduler;
import io.wheelbeat.core.WheelTimeout;
import io.wheelbeat.core.WheelTimerTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the checks of a {@link WheelIdleStateHandler} wait: the clock its traffic is stamped with,
 * and the timers that wake it when a check falls due (at most one pending timer per kind: reader,
 * writer, all). When a timer fires, the handler runs its due checks on its executor through
 * {@link WheelIdleStateHandler#checkFellDue(int)}.
 *
 * <p>Every method is for the handler's executor thread only.
 */
abstract class IdleDeadlines {

    static final int READER = 0;
    static final int WRITER = 1;
    static final int ALL = 2;

    /** The clock of the handler's executor: traffic is stamped and deadlines are set on it. */
    final Ticker ticker;

    IdleDeadlines(Ticker ticker) {
        this.ticker = ticker;
    }

    /** Makes the timer of {@code kind} fire at {@code deadlineNanos}, replacing its pending one. */
    abstract void arm(WheelIdleStateHandler handler, int kind, long deadlineNanos);

    /** Cancels the pending timer of {@code kind}, if any. */
    abstract void disarm(WheelIdleStateHandler handler, int kind);

    /**
     * On the wheel of one event loop, through its owner-thread long-id API: nothing allocates, the
     * handler itself is the callback of its timers (told apart by id), and the ids live in the
     * handler. One instance serves every handler with the same settings on that loop, so a
     * handler pays one reference for its clock and its wheel.
     */
    static final class OnLoopWheel extends IdleDeadlines {
        private final ExecutorDrivenWheel wheel;

        /** {@code wheel} must be driven by {@code executor}, on its ticker. */
        OnLoopWheel(EventExecutor executor, ExecutorDrivenWheel wheel) {
            super(executor.ticker());
            this.wheel = wheel;
        }

        @Override
        void arm(WheelIdleStateHandler handler, int kind, long deadlineNanos) {
            long timer = handler.timer(kind);
            if (timer == TimerWheel.NO_TIMER || !wheel.rescheduleAt(timer, deadlineNanos)) {
                handler.setTimer(kind, wheel.scheduleAt(handler, deadlineNanos));
            }
        }

        @Override
        void disarm(WheelIdleStateHandler handler, int kind) {
            long timer = handler.timer(kind);
            if (timer != TimerWheel.NO_TIMER) {
                wheel.cancel(timer);
                handler.setTimer(kind, TimerWheel.NO_TIMER);
            }
        }

        @Override
        public String toString() {
            return "idle deadlines on " + wheel;
        }
    }

    /**
     * On a scheduler shared across event loops (a {@link io.wheelbeat.core.WheelTimer}), one per
     * handler: each arm allocates a timeout handle and each expiry hops to the handler's executor.
     * This one object is the task of all three kinds' timeouts, told apart by handle.
     */
    static final class OnSharedTimer extends IdleDeadlines implements WheelTimerTask {
        private static final Logger log = LoggerFactory.getLogger(OnSharedTimer.class);

        private final WheelIdleStateHandler handler;
        private final WheelScheduler timer;
        private final EventExecutor executor;
        // The timeout each kind waits for, or null; executor thread only.
        private WheelTimeout readerTimeout;
        private WheelTimeout writerTimeout;
        private WheelTimeout allTimeout;

        OnSharedTimer(WheelIdleStateHandler handler, WheelScheduler timer, EventExecutor executor) {
            super(executor.ticker());
            this.handler = handler;
            this.timer = timer;
            this.executor = executor;
        }

        @Override
        void arm(WheelIdleStateHandler handler, int kind, long deadlineNanos) {
            disarm(handler, kind);
            // The shared timer measures the delay on its own clock.
            long delay = deadlineNanos - ticker.nanoTime();
            setTimeout(kind, timer.newTimeout(this, delay, TimeUnit.NANOSECONDS));
        }

        @Override
        void disarm(WheelIdleStateHandler handler, int kind) {
            WheelTimeout timeout = timeout(kind);
            if (timeout != null) {
                timeout.cancel();
                setTimeout(kind, null);
            }
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
                    handler.checkFellDue(kind);
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
