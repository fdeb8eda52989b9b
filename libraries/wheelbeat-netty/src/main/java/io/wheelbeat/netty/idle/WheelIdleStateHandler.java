package io.wheelbeat.netty.idle;

import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelPromise;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.EventExecutor;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.Ticker;
import io.wheelbeat.core.TimerNode;
import io.wheelbeat.core.WheelScheduler;
import io.wheelbeat.core.WheelTimeout;
import io.wheelbeat.core.WheelTimerTask;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.internal.LoopClocks;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A drop-in replacement for Netty's {@link IdleStateHandler} whose timers live on the shared
 * timing wheel of the channel's event loop ({@link EventLoopWheels#shared()}) instead of the
 * loop's priority queue: it fires the same {@link IdleStateEvent} singletons, with the same
 * first/non-first semantics, at the same moments, so existing {@code userEventTriggered} code
 * works unchanged.
 *
 * <h2>Swapping it in</h2>
 * <pre>{@code
 * // was: pipeline.addLast("idle", new IdleStateHandler(60, 30, 0));
 * import io.wheelbeat.netty.idle.WheelIdleStateHandler;
 * pipeline.addLast("idle", new WheelIdleStateHandler(60, 30, 0));
 * // userEventTriggered(ctx, evt) { if (evt instanceof IdleStateEvent e) ... } stays as it is
 * }</pre>
 * The three constructors are Netty's: {@code (int, int, int)} in seconds,
 * {@code (long, long, long, TimeUnit)} and {@code (boolean observeOutput, long, long, long,
 * TimeUnit)}; zero or less disables a check, and positive values are floored at 1 ms.
 * {@link #builder()} adds the options Netty lacks (a meter registry, other wheels, a shared
 * timer). It is not a subclass of {@code IdleStateHandler}: code that looks the handler up by that
 * class ({@code pipeline.get(IdleStateHandler.class)}) must look up this one.
 *
 * <h2>Semantics (Netty's, reproduced)</h2>
 * <ul>
 *   <li>A read counts when its batch completes ({@code channelReadComplete}); while a batch is in
 *       progress ({@code channelRead} seen, not yet complete) the reader is busy. A read makes the
 *       next reader-idle and all-idle events "first" again.</li>
 *   <li>A write counts when it completes (its promise is done, whether it succeeded or failed), as
 *       Netty stamps it from a write listener; a write sitting unflushed in the outbound buffer
 *       does not count. A completed write makes the next writer-idle and all-idle events first.
 *       Void promises are replaced by real ones (Netty's {@code unvoid()}) when writer or all
 *       idleness is watched.</li>
 *   <li>An idle period fires one event flagged first, then repeats it unflagged every period
 *       until traffic resets it. With {@code observeOutput}, a non-first writer-idle or all-idle
 *       event is skipped while the outbound buffer makes progress (its current message, pending
 *       bytes or flush progress changed, or a write completed since the last check), so a slow
 *       consumer that is still draining does not count as idle.</li>
 *   <li>Nothing fires once the channel is closed; timers stop when the channel goes inactive or
 *       the handler is removed, whichever comes first, and a handler never starts again after
 *       that (Netty's state machine). Like Netty's, the handler is not {@code @Sharable}.</li>
 *   <li>{@link #channelIdle} and {@link #newIdleStateEvent} may be overridden; an exception from
 *       them goes to {@code exceptionCaught}.</li>
 * </ul>
 *
 * <h2>Timing: Netty's</h2>
 * The handler runs Netty's algorithm: traffic only stamps the time, and each check (one per
 * watched check) waits on a timer; when the timer fires, the check runs as Netty's idle task does,
 * either firing an event and waiting a full period, or waiting for the rest of the period counted
 * from the last traffic. The wheel fires a timer when it is polled at or after its deadline, and
 * the shared wheels poll at the earliest deadline, so a check runs when Netty's task would run on
 * the same loop: at its deadline plus only the loop's own lateness. Checks that fall due together,
 * of this handler or of any other handler on the loop's wheel, run in Netty's order (by deadline,
 * then in the order they were scheduled), the order in which the wheel fires timers. Events are
 * therefore Netty's, in Netty's order, at Netty's moments, also when the loop runs late or runs its
 * tasks on a coarse step. In tests with
 * {@code EmbeddedChannel}, {@code freezeTime()}, {@code advanceTimeBy(...)} and
 * {@code runScheduledPendingTasks()} drive it exactly as they drive Netty's handler.
 *
 * <h2>Cost</h2>
 * A read batch costs one clock read and a few stores into this handler; a completed write the
 * same into its write state. Traffic never touches the wheel. As with Netty's handler, a check
 * whose channel kept talking wakes once per idle period and re-arms for the rest of the period;
 * that wake is an O(1) wheel operation with no allocation, where Netty's allocates a task and
 * inserts it into the loop's priority queue. With {@link Builder#timer(WheelScheduler) a shared
 * timer}, every wake-up also hops to the channel's event loop and allocates a timeout handle.
 *
 * <p>Memory: handlers configured alike share one immutable settings object (per factory, or per
 * set of constructor arguments); a handler holds one timer node (40 bytes) per watched check,
 * made once and re-armed for the channel's life, where Netty's makes a task per period.
 *
 * <h2>Thread rules</h2>
 * One instance per channel. Every method runs on the handler's executor, except
 * {@link #resetReadTimeout()} and {@link #resetWriteTimeout()}, which may be called from any
 * thread (off the executor they are handed to it). Construction and the builder are
 * single-threaded.
 */
public class WheelIdleStateHandler extends ChannelDuplexHandler {

    private static final Logger log = LoggerFactory.getLogger(WheelIdleStateHandler.class);
    private static final byte NEW = 0;
    private static final byte RUNNING = 1;
    /** Stopped for good: never starts again, even if it never started (Netty issue 143). */
    private static final byte STOPPED = 2;

    // Netty's IdleStateHandler keeps these in one class with three task fields; so does this one,
    // with a timer node per watched check instead of a task per period. The settings are shared
    // (immutable, one per factory or per set of constructor arguments).
    private final IdleSettings settings;
    /** The timers, null when the check is not watched. */
    private final IdleCheck readerCheck;
    private final IdleCheck writerCheck;
    private final IdleCheck allCheck;

    private ChannelHandlerContext ctx;
    private byte state = NEW;
    /** The loop's wheel once started; null on a shared timer. */
    private ExecutorDrivenWheel wheel;
    /** On a shared timer once started: its timeouts; else null. */
    private SharedTimeouts shared;

    private boolean reading;
    private boolean firstReaderIdleEvent = true;
    private boolean firstWriterIdleEvent = true;
    private boolean firstAllIdleEvent = true;
    private long lastReadTime;
    private long lastWriteTime;

    /**
     * Netty's {@code IdleStateHandler(int, int, int)}: idle times in seconds, zero or less
     * disables a check.
     *
     * @param readerIdleTimeSeconds reader idle time in seconds
     * @param writerIdleTimeSeconds writer idle time in seconds
     * @param allIdleTimeSeconds all idle time in seconds
     */
    public WheelIdleStateHandler(int readerIdleTimeSeconds, int writerIdleTimeSeconds, int allIdleTimeSeconds) {
        this(readerIdleTimeSeconds, writerIdleTimeSeconds, allIdleTimeSeconds, TimeUnit.SECONDS);
    }

    /**
     * Netty's {@code IdleStateHandler(long, long, long, TimeUnit)}: zero or less disables a check;
     * positive values are floored at 1 ms.
     *
     * @param readerIdleTime reader idle time in {@code unit}
     * @param writerIdleTime writer idle time in {@code unit}
     * @param allIdleTime all idle time in {@code unit}
     * @param unit the unit of the three times
     * @throws NullPointerException if {@code unit} is null
     */
    public WheelIdleStateHandler(long readerIdleTime, long writerIdleTime, long allIdleTime, TimeUnit unit) {
        this(false, readerIdleTime, writerIdleTime, allIdleTime, unit);
    }

    /**
     * Netty's {@code IdleStateHandler(boolean, long, long, long, TimeUnit)}.
     *
     * @param readerIdleTime reader idle time in {@code unit}
     * @param writerIdleTime writer idle time in {@code unit}
     * @param allIdleTime all idle time in {@code unit}
     * @param unit the unit of the three times
     * @param observeOutput whether progress of the outbound buffer (a slow consumer still
     *     draining) keeps the writer from being idle; see the class comment
     * @throws NullPointerException if {@code unit} is null
     */
    public WheelIdleStateHandler(boolean observeOutput, long readerIdleTime, long writerIdleTime,
                                 long allIdleTime, TimeUnit unit) {
        this(IdleSettings.interned(observeOutput, readerIdleTime, writerIdleTime, allIdleTime, unit));
    }

    /**
     * A handler with a factory's settings; for subclasses that need the builder's options.
     *
     * @param factory the settings, from the builder
     */
    protected WheelIdleStateHandler(Factory factory) {
        this(factory.settings);
    }

    private WheelIdleStateHandler(IdleSettings settings) {
        this.settings = settings;
        this.readerCheck = settings.readerIdleTimeNanos > 0 ? new IdleCheck() : null;
        // The write listener (the writer's check, else the all check's) keeps observeOutput's state.
        boolean observing = settings.observeOutput;
        this.writerCheck = settings.writerIdleTimeNanos > 0 ? observing ? new ObservingCheck() : new IdleCheck() : null;
        this.allCheck = settings.allIdleTimeNanos > 0
                ? observing && writerCheck == null ? new ObservingCheck() : new IdleCheck() : null;
    }

    /**
     * Returns a builder: every check disabled, no output observation, the shared wheels, no metrics.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Returns the reader idle time in milliseconds (0: disabled).
     *
     * @return the reader idle time in milliseconds
     */
    public long getReaderIdleTimeInMillis() {
        return TimeUnit.NANOSECONDS.toMillis(settings.readerIdleTimeNanos);
    }

    /**
     * Returns the writer idle time in milliseconds (0: disabled).
     *
     * @return the writer idle time in milliseconds
     */
    public long getWriterIdleTimeInMillis() {
        return TimeUnit.NANOSECONDS.toMillis(settings.writerIdleTimeNanos);
    }

    /**
     * Returns the all idle time in milliseconds (0: disabled).
     *
     * @return the all idle time in milliseconds
     */
    public long getAllIdleTimeInMillis() {
        return TimeUnit.NANOSECONDS.toMillis(settings.allIdleTimeNanos);
    }

    // ---------------------------------------------------------------- lifecycle

    // Netty's state machine: start once, on whichever of these comes first with the channel
    // active and the handler in place; stop for good on the first of inactive/removed.

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        if (startsEarly(ctx)) {
            start(ctx);
        }
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        stop();
    }

    @Override
    public void channelRegistered(ChannelHandlerContext ctx) throws Exception {
        if (startsEarly(ctx)) {
            start(ctx);
        }
        ctx.fireChannelRegistered();
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        if (state == NEW) {
            start(ctx);
        }
        ctx.fireChannelActive();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        stop();
        ctx.fireChannelInactive();
    }

    /** New on a channel active and registered already: {@code channelActive} has fired and will not come. */
    private boolean startsEarly(ChannelHandlerContext ctx) {
        return state == NEW && ctx.channel().isActive() && ctx.channel().isRegistered();
    }

    /** Starts the checks, as Netty's {@code initialize}: the channel is active and the handler in place. */
    private void start(ChannelHandlerContext ctx) {
        // Before RUNNING: if this throws, stop() has nothing to disarm.
        if (settings.sharedTimer != null) {
            shared = new SharedTimeouts(settings.sharedTimer, ctx.executor());
        } else {
            wheel = settings.wheels.wheelFor(ctx.executor());
        }
        state = RUNNING;
        this.ctx = ctx;
        long now = now();
        lastReadTime = lastWriteTime = now;
        if (writeListener() instanceof ObservingCheck observing) {
            observing.start(ctx);
        }
        // Netty schedules its tasks in this order, which breaks ties between equal deadlines.
        if (readerCheck != null) {
            arm(readerCheck, now + settings.readerIdleTimeNanos);
        }
        if (writerCheck != null) {
            arm(writerCheck, now + settings.writerIdleTimeNanos);
        }
        if (allCheck != null) {
            arm(allCheck, now + settings.allIdleTimeNanos);
        }
    }

    /** Stops the checks for good, as Netty's {@code destroy}: the channel went inactive or the handler was removed. */
    private void stop() {
        byte was = state;
        state = STOPPED;
        if (was == RUNNING) {
            disarmAll();
        }
    }

    private void disarmAll() {
        disarm(readerCheck);
        disarm(writerCheck);
        disarm(allCheck);
    }

    /** A reading of the loop's clock (virtual time under {@code EmbeddedChannel}); once started. */
    private long now() {
        return wheel != null ? wheel.ticker().nanoTime() : shared.clock.nanoTime();
    }

    // ---------------------------------------------------------------- traffic: stamps only

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (settings.watchesReads) {
            reading = true;
            firstReaderIdleEvent = firstAllIdleEvent = true;
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
        if (reading) { // only ever set when reads are watched
            reading = false;
            if (state == RUNNING) {
                lastReadTime = now();
            }
        }
        ctx.fireChannelReadComplete();
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        if (settings.watchesWrites) {
            // One listener for every write, as Netty's: the writer or the all check.
            ctx.write(msg, promise.unvoid()).addListener(writeListener());
        } else {
            // Only reads are watched: a void promise may stay void.
            ctx.write(msg, promise);
        }
    }

    /**
     * Counts a read now: Netty's {@code resetReadTimeout()}. The next reader-idle and all-idle
     * events are first again. May be called from any thread; off the handler's executor it is
     * handed to the executor.
     */
    public void resetReadTimeout() {
        if (settings.watchesReads) {
            if (offExecutor()) {
                ctx.executor().execute(this::resetReadTimeout);
                return;
            }
            if (state == RUNNING) {
                lastReadTime = now();
            }
            reading = false; // as Netty's: a batch in progress counts as complete
            firstReaderIdleEvent = firstAllIdleEvent = true;
        }
    }

    /**
     * Counts a write now: Netty's {@code resetWriteTimeout()}. The next writer-idle and all-idle
     * events are first again. May be called from any thread; off the handler's executor it is
     * handed to the executor.
     */
    public void resetWriteTimeout() {
        if (settings.watchesWrites) {
            if (offExecutor()) {
                ctx.executor().execute(this::resetWriteTimeout);
                return;
            }
            writeObserved();
        }
    }

    /** A write completed (Netty's write listener), or the write timeout was reset: stamps the time. */
    private void writeObserved() {
        if (state == RUNNING) {
            lastWriteTime = now();
        }
        firstWriterIdleEvent = firstAllIdleEvent = true;
    }

    /** The listener of every write, as Netty's one listener: the writer's check, else the all check. */
    private IdleCheck writeListener() {
        return writerCheck != null ? writerCheck : allCheck;
    }

    private boolean offExecutor() {
        return ctx != null && !ctx.executor().inEventLoop();
    }

    // ---------------------------------------------------------------- checks (Netty's idle tasks)

    /**
     * Netty's idle task of {@code check}, run when its timer fires at {@code now}: it waits for
     * what is left of the period since the last traffic, or, when the period has passed, waits a
     * full period and fires the event. The reader and all checks never fire while a read batch is
     * in progress. The wheel fires timers in Netty's order (deadline, then scheduling order) across
     * every handler on the loop, so checks run in that order too.
     */
    private void runCheck(IdleCheck check, long now) {
        if (!ctx.channel().isOpen()) {
            disarmAll(); // as Netty's task: a closed channel stops it (and fires nothing after)
            return;
        }
        IdleState idle = idleStateOf(check);
        long idleTime = settings.idleTime(idle);
        long nextDelay = idleTime;
        if (idle == IdleState.WRITER_IDLE || !reading) {
            // Traffic stamped after {@code now} (by an event fired in this same run) counts as now.
            nextDelay -= Math.max(0, now - lastTrafficOf(idle));
        }
        if (nextDelay > 0) {
            arm(check, now + nextDelay);
            return;
        }
        arm(check, now + idleTime);
        boolean first;
        if (idle == IdleState.READER_IDLE) {
            first = firstReaderIdleEvent;
            firstReaderIdleEvent = false;
        } else if (idle == IdleState.WRITER_IDLE) {
            first = firstWriterIdleEvent;
            firstWriterIdleEvent = false;
        } else {
            first = firstAllIdleEvent;
            firstAllIdleEvent = false;
        }
        try {
            if (idle != IdleState.READER_IDLE && writeListener() instanceof ObservingCheck observing
                    && observing.hasOutputChanged(ctx, first, lastWriteTime)) {
                return;
            }
            IdleStateEvent event = newIdleStateEvent(idle, first);
            if (settings.counters != null) {
                settings.counters.increment(idle);
            }
            channelIdle(ctx, event);
        } catch (Throwable t) {
            ctx.fireExceptionCaught(t);
        }
    }

    private IdleState idleStateOf(IdleCheck check) {
        return check == readerCheck ? IdleState.READER_IDLE
                : check == writerCheck ? IdleState.WRITER_IDLE : IdleState.ALL_IDLE;
    }

    /** The last traffic the {@code idle} check counts from: reads, writes, or for all idleness the later of both. */
    private long lastTrafficOf(IdleState idle) {
        return switch (idle) {
            case READER_IDLE -> lastReadTime;
            case WRITER_IDLE -> lastWriteTime;
            case ALL_IDLE -> lastWriteTime - lastReadTime > 0 ? lastWriteTime : lastReadTime;
        };
    }

    /** Schedules {@code check} at {@code at}, as Netty's {@code schedule(...)}: a re-arm, allocation free, on the loop's wheel. */
    private void arm(IdleCheck check, long at) {
        if (wheel != null) {
            wheel.scheduleAt(check, at);
        } else {
            shared.arm(check, at - now());
        }
    }

    private void disarm(IdleCheck check) {
        if (check == null) {
            return;
        }
        if (wheel != null) {
            wheel.cancel(check);
        } else if (shared != null) {
            shared.disarm(check);
        }
    }

    /**
     * The timer of one check (Netty's {@code ReaderIdleTimeoutTask} and its two siblings, but armed
     * again for the channel's life instead of made anew each period); the writer's or else the all
     * check is also the listener of every write.
     */
    private class IdleCheck extends TimerNode implements ChannelFutureListener {

        /** The timer fell due, on the event loop. */
        @Override
        protected void expire() {
            if (state == RUNNING) {
                runCheck(this, now());
            }
        }

        /** A write completed: Netty's write listener. */
        @Override
        public void operationComplete(ChannelFuture future) {
            writeObserved();
        }
    }

    /**
     * The checks' timeouts on a scheduler shared across event loops (a
     * {@link io.wheelbeat.core.WheelTimer}): each arm allocates a timeout handle and each expiry
     * hops to the handler's executor. This one object is the task of the three checks' timeouts,
     * told apart by handle.
     */
    private final class SharedTimeouts implements WheelTimerTask {
        private final WheelScheduler timer;
        private final EventExecutor executor;
        /** The clock of the handler's executor: traffic is stamped and deadlines are set on it. */
        final Ticker clock;
        // The timeout each check waits for, or null; executor thread only.
        private WheelTimeout readerTimeout;
        private WheelTimeout writerTimeout;
        private WheelTimeout allTimeout;

        SharedTimeouts(WheelScheduler timer, EventExecutor executor) {
            this.timer = timer;
            this.executor = executor;
            this.clock = LoopClocks.of(executor);
        }

        void arm(IdleCheck check, long delayNanos) {
            disarm(check);
            setTimeout(idleStateOf(check), timer.newTimeout(this, delayNanos));
        }

        void disarm(IdleCheck check) {
            WheelTimeout timeout = timeout(idleStateOf(check));
            if (timeout != null) {
                timeout.cancel();
                setTimeout(idleStateOf(check), null);
            }
        }

        /** Runs on the timer's thread: hands over to the executor. */
        @Override
        public void run(WheelTimeout expired) {
            try {
                executor.execute(() -> expiredOnExecutor(expired));
            } catch (RejectedExecutionException e) {
                log.debug("{} is shut down; idle deadline of {} dropped", executor, WheelIdleStateHandler.this, e);
            }
        }

        private void expiredOnExecutor(WheelTimeout expired) {
            // A timeout re-armed or cancelled after it expired on the timer's thread is stale.
            for (IdleCheck check : new IdleCheck[] {readerCheck, writerCheck, allCheck}) {
                if (check != null && timeout(idleStateOf(check)) == expired) {
                    setTimeout(idleStateOf(check), null);
                    check.expire();
                    return;
                }
            }
        }

        private WheelTimeout timeout(IdleState idle) {
            return switch (idle) {
                case READER_IDLE -> readerTimeout;
                case WRITER_IDLE -> writerTimeout;
                case ALL_IDLE -> allTimeout;
            };
        }

        private void setTimeout(IdleState idle, WheelTimeout timeout) {
            switch (idle) {
                case READER_IDLE -> readerTimeout = timeout;
                case WRITER_IDLE -> writerTimeout = timeout;
                case ALL_IDLE -> allTimeout = timeout;
            }
        }
    }

    /**
     * With observeOutput, the write listener's check: it also keeps the outbound buffer as the
     * writer and all checks last saw it, as Netty keeps it (Netty issue 6150), so that a slow
     * consumer still draining does not count as idle.
     */
    private final class ObservingCheck extends IdleCheck {
        private long lastChangeCheckTimeStamp;
        private int lastMessageHashCode;
        private long lastPendingWriteBytes;
        private long lastFlushProgress;

        /** Records the outbound buffer as it is when the handler starts. */
        void start(ChannelHandlerContext ctx) {
            ChannelOutboundBuffer buf = ctx.channel().unsafe().outboundBuffer();
            if (buf != null) {
                lastMessageHashCode = System.identityHashCode(buf.current());
                lastPendingWriteBytes = buf.totalPendingWriteBytes();
                lastFlushProgress = buf.currentProgress();
            }
        }

        /**
         * Whether the outbound buffer changed since the last call: a completed write (the last
         * write time moved), another message at the head, other pending bytes, or flush progress.
         * A first event is never skipped: the call then only records.
         */
        boolean hasOutputChanged(ChannelHandlerContext ctx, boolean first, long lastWriteTime) {
            if (lastChangeCheckTimeStamp != lastWriteTime) {
                // Writes complete: a change at the message level, assumed at the byte level too.
                lastChangeCheckTimeStamp = lastWriteTime;
                if (!first) {
                    return true;
                }
            }
            ChannelOutboundBuffer buf = ctx.channel().unsafe().outboundBuffer();
            if (buf == null) {
                return false;
            }
            int messageHashCode = System.identityHashCode(buf.current());
            long pendingWriteBytes = buf.totalPendingWriteBytes();
            if (messageHashCode != lastMessageHashCode || pendingWriteBytes != lastPendingWriteBytes) {
                lastMessageHashCode = messageHashCode;
                lastPendingWriteBytes = pendingWriteBytes;
                if (!first) {
                    return true;
                }
            }
            long flushProgress = buf.currentProgress();
            if (flushProgress != lastFlushProgress) {
                lastFlushProgress = flushProgress;
                return !first;
            }
            return false;
        }
    }

    // ---------------------------------------------------------------- extension points

    /**
     * Called when an idle state event should be fired; fires it through the pipeline
     * ({@code ctx.fireUserEventTriggered(evt)}). As in Netty's handler.
     *
     * @param ctx the handler's context
     * @param evt the event to fire
     * @throws Exception anything: Netty passes it to {@code exceptionCaught}
     */
    protected void channelIdle(ChannelHandlerContext ctx, IdleStateEvent evt) throws Exception {
        ctx.fireUserEventTriggered(evt);
    }

    /**
     * Returns the event for {@code state}: by default Netty's singletons
     * ({@link IdleStateEvent#FIRST_READER_IDLE_STATE_EVENT} and the five others).
     *
     * @param state which idleness
     * @param first whether it is the first event of this idle period
     * @return the event to fire
     */
    protected IdleStateEvent newIdleStateEvent(IdleState state, boolean first) {
        return switch (state) {
            case ALL_IDLE -> first ? IdleStateEvent.FIRST_ALL_IDLE_STATE_EVENT : IdleStateEvent.ALL_IDLE_STATE_EVENT;
            case READER_IDLE -> first ? IdleStateEvent.FIRST_READER_IDLE_STATE_EVENT : IdleStateEvent.READER_IDLE_STATE_EVENT;
            case WRITER_IDLE -> first ? IdleStateEvent.FIRST_WRITER_IDLE_STATE_EVENT : IdleStateEvent.WRITER_IDLE_STATE_EVENT;
        };
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "(reader " + settings.readerIdleTimeNanos + " ns, writer "
                + settings.writerIdleTimeNanos + " ns, all " + settings.allIdleTimeNanos + " ns"
                + (ctx == null ? "" : ", " + ctx.channel()) + ")";
    }

    /**
     * Settings that make one {@link WheelIdleStateHandler} per channel: immutable, so handlers
     * made by one factory share its settings and meters.
     *
     * <p>Thread-safe: {@link #newHandler()} may be called from any event loop, say once per
     * channel in a {@code ChannelInitializer}.
     */
    public static final class Factory {
        private final IdleSettings settings;

        private Factory(IdleSettings settings) {
            this.settings = settings;
        }

        /**
         * Returns a new handler for one channel.
         *
         * @return a new handler, for one channel only
         */
        public WheelIdleStateHandler newHandler() {
            return new WheelIdleStateHandler(settings);
        }
    }

    /**
     * Settings of a {@link WheelIdleStateHandler}. Every check starts disabled. Every setter
     * checks its argument at once ({@link NullPointerException} for a null,
     * {@link IllegalArgumentException} for a value out of range). Not thread-safe.
     */
    public static final class Builder {
        private boolean observeOutput;
        private long readerIdleTimeNanos;
        private long writerIdleTimeNanos;
        private long allIdleTimeNanos;
        private EventLoopWheels wheels = EventLoopWheels.shared();
        private boolean wheelsChosen;
        private WheelScheduler sharedTimer;
        private IdleEventCounters counters;

        private Builder() {
        }

        /**
         * Reader idle time: zero disables the check (the default); positive values are floored
         * at 1 ms.
         *
         * @param time the time without a read
         * @return this builder
         * @throws IllegalArgumentException if {@code time} is negative
         */
        public Builder readerIdleTime(Duration time) {
            this.readerIdleTimeNanos = IdleSettings.idleNanos("readerIdleTime", time);
            return this;
        }

        /**
         * Writer idle time, as {@link #readerIdleTime}.
         *
         * @param time the time without a write
         * @return this builder
         */
        public Builder writerIdleTime(Duration time) {
            this.writerIdleTimeNanos = IdleSettings.idleNanos("writerIdleTime", time);
            return this;
        }

        /**
         * All idle time (neither read nor write), as {@link #readerIdleTime}.
         *
         * @param time the time without a read or a write
         * @return this builder
         */
        public Builder allIdleTime(Duration time) {
            this.allIdleTimeNanos = IdleSettings.idleNanos("allIdleTime", time);
            return this;
        }

        /**
         * Whether a draining outbound buffer keeps the writer from being idle; off by default.
         *
         * @param observeOutput whether to observe the outbound buffer
         * @return this builder
         */
        public Builder observeOutput(boolean observeOutput) {
            this.observeOutput = observeOutput;
            return this;
        }

        /**
         * Puts the timers on these per-event-loop wheels instead of {@link EventLoopWheels#shared()}
         * (say, wheels with another tick).
         *
         * @param wheels the per-event-loop wheels
         * @return this builder
         * @throws NullPointerException if {@code wheels} is null
         * @throws IllegalStateException if {@link #timer} was chosen
         */
        public Builder wheels(EventLoopWheels wheels) {
            Objects.requireNonNull(wheels, "wheels");
            if (sharedTimer != null) {
                throw new IllegalStateException("choose either wheels(...) or timer(...), not both");
            }
            this.wheels = wheels;
            this.wheelsChosen = true;
            return this;
        }

        /**
         * Puts the timers of every channel on one thread-safe timer, such as a
         * {@link io.wheelbeat.core.WheelTimer}, instead of the channel's event-loop wheel. Each
         * wake-up then hops to the channel's event loop ({@code ctx.executor().execute}) and each
         * arm allocates a timeout handle, so traffic only stamps times and the timer wakes for
         * every check, as Netty's does: slower than the per-loop wheels, for when one timer
         * thread is wanted.
         *
         * @param timer the timer to run on
         * @return this builder
         * @throws NullPointerException if {@code timer} is null
         * @throws IllegalStateException if {@link #wheels} was chosen
         */
        public Builder timer(WheelScheduler timer) {
            Objects.requireNonNull(timer, "timer");
            if (wheelsChosen) {
                throw new IllegalStateException("choose either wheels(...) or timer(...), not both");
            }
            this.sharedTimer = timer;
            return this;
        }

        /**
         * Counts idle events in {@code registry}: counter {@code wheelbeat.idle.events}, tag
         * {@code state} = {@code reader}, {@code writer} or {@code all}. Without a registry there
         * are no metrics and no cost.
         *
         * @param registry the meter registry
         * @return this builder
         * @throws NullPointerException if {@code registry} is null
         */
        public Builder metrics(MeterRegistry registry) {
            this.counters = new IdleEventCounters(Objects.requireNonNull(registry, "registry"));
            return this;
        }

        /**
         * Returns the factory of handlers with these settings.
         *
         * @return the factory; immutable and thread-safe
         * @throws IllegalStateException if no idle time was set (a handler that watches nothing is
         *     a mistake here; Netty's shape, {@code new WheelIdleStateHandler(0, 0, 0)}, still allows it)
         */
        public Factory build() {
            if (readerIdleTimeNanos == 0 && writerIdleTimeNanos == 0 && allIdleTimeNanos == 0) {
                throw new IllegalStateException("set readerIdleTime, writerIdleTime or allIdleTime");
            }
            return new Factory(new IdleSettings(observeOutput, readerIdleTimeNanos, writerIdleTimeNanos,
                    allIdleTimeNanos, wheels, sharedTimer, counters));
        }
    }
}
