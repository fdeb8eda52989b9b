package io.wheelbeat.netty.idle;

import io.netty.handler.timeout.IdleState;
import io.netty.util.concurrent.EventExecutor;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.Ticker;
import io.wheelbeat.core.WheelScheduler;
import io.wheelbeat.core.WheelTimeout;
import io.wheelbeat.core.WheelTimerTask;
import io.wheelbeat.netty.internal.LoopClocks;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the checks of a {@link WheelIdleStateHandler} wait: the clock its traffic is stamped with,
 * and the timers that wake it when a check falls due (at most one pending timer per check: reader,
 * writer, all). When a timer fires, the handler runs its due checks on its executor through
 * {@link WheelIdleStateHandler#checkFellDue(IdleState)}.
 *
 * <p>Every method is for the handler's executor thread only.
 */
abstract class IdleDeadlines {

    /** The three checks in Netty's order (reader, writer, all), which breaks ties between equal deadlines. */
    static final IdleState[] STATES = IdleState.values();

    /** The clock of the handler's executor: traffic is stamped and deadlines are set on it. */
    final Ticker ticker;

    IdleDeadlines(Ticker ticker) {
        this.ticker = ticker;
    }

    /** Makes the timer of the {@code state} check fire at {@code deadlineNanos}, replacing its pending one. */
    abstract void arm(WheelIdleStateHandler handler, IdleState state, long deadlineNanos);

    /** Cancels the pending timer of the {@code state} check, if any. */
    abstract void disarm(WheelIdleStateHandler handler, IdleState state);

    /**
     * On the wheel of one event loop, through its owner-thread long-id API: nothing allocates, the
     * handler itself is the callback of its timers (told apart by id), and the ids live in the
     * handler. One instance serves every handler with the same settings on that loop, so a
     * handler pays one reference for its clock and its wheel.
     */
    static final class OnLoopWheel extends IdleDeadlines {
        private final ExecutorDrivenWheel wheel;

        /** On {@code wheel}, whose ticker is its loop's clock. */
        OnLoopWheel(ExecutorDrivenWheel wheel) {
            super(wheel.ticker());
            this.wheel = wheel;
        }

        @Override
        void arm(WheelIdleStateHandler handler, IdleState state, long deadlineNanos) {
            long timer = handler.timer(state);
            if (timer == ExecutorDrivenWheel.NO_TIMER || !wheel.rescheduleAt(timer, deadlineNanos)) {
                handler.setTimer(state, wheel.scheduleAt(handler, deadlineNanos));
            }
        }

        @Override
        void disarm(WheelIdleStateHandler handler, IdleState state) {
            long timer = handler.timer(state);
            if (timer != ExecutorDrivenWheel.NO_TIMER) {
                wheel.cancel(timer);
                handler.setTimer(state, ExecutorDrivenWheel.NO_TIMER);
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
     * This one object is the task of all three checks' timeouts, told apart by handle.
     */
    static final class OnSharedTimer extends IdleDeadlines implements WheelTimerTask {
        private static final Logger log = LoggerFactory.getLogger(OnSharedTimer.class);

        private final WheelIdleStateHandler handler;
        private final WheelScheduler timer;
        private final EventExecutor executor;
        // The timeout each check waits for, or null; executor thread only.
        private WheelTimeout readerTimeout;
        private WheelTimeout writerTimeout;
        private WheelTimeout allTimeout;

        OnSharedTimer(WheelIdleStateHandler handler, WheelScheduler timer, EventExecutor executor) {
            super(LoopClocks.of(executor));
            this.handler = handler;
            this.timer = timer;
            this.executor = executor;
        }

        @Override
        void arm(WheelIdleStateHandler handler, IdleState state, long deadlineNanos) {
            disarm(handler, state);
            // The shared timer measures the delay on its own clock.
            long delay = deadlineNanos - ticker.nanoTime();
            setTimeout(state, timer.newTimeout(this, delay));
        }

        @Override
        void disarm(WheelIdleStateHandler handler, IdleState state) {
            WheelTimeout timeout = timeout(state);
            if (timeout != null) {
                timeout.cancel();
                setTimeout(state, null);
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
            for (IdleState state : STATES) {
                // A timeout re-armed or cancelled after it expired on the timer's thread is stale.
                if (timeout(state) == expired) {
                    setTimeout(state, null);
                    handler.checkFellDue(state);
                    return;
                }
            }
        }

        private WheelTimeout timeout(IdleState state) {
            return switch (state) {
                case READER_IDLE -> readerTimeout;
                case WRITER_IDLE -> writerTimeout;
                case ALL_IDLE -> allTimeout;
            };
        }

        private void setTimeout(IdleState state, WheelTimeout timeout) {
            switch (state) {
                case READER_IDLE -> readerTimeout = timeout;
                case WRITER_IDLE -> writerTimeout = timeout;
                case ALL_IDLE -> allTimeout = timeout;
            }
        }

        @Override
        public String toString() {
            return "idle deadlines of " + handler;
        }
    }
}
