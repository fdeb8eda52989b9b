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
import io.wheelbeat.core.TimerNode;
import io.wheelbeat.core.WheelScheduler;
import io.wheelbeat.core.WheelTimeout;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.internal.LoopClocks;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A drop-in for Netty's {@link IdleStateHandler} whose timers live on the channel's event-loop
 * wheel ({@link EventLoopWheels#shared()}) instead of the loop's priority queue. It fires Netty's
 * {@link IdleStateEvent} singletons with Netty's first/non-first flags, at Netty's moments and in
 * Netty's order, so {@code userEventTriggered} code stays as it is:
 * <pre>{@code pipeline.addLast("idle", new WheelIdleStateHandler(60, 30, 0)); // was IdleStateHandler}</pre>
 * The constructors are Netty's: zero or less disables a check, positive values are floored at
 * 1 ms. {@link #builder()} adds a meter registry, other wheels or a shared timer. It is not a
 * subclass of {@code IdleStateHandler}: look it up by this class.
 *
 * <h2>Semantics (Netty's)</h2>
 * <ul>
 *   <li>A read counts when its batch completes; during a batch the reader is busy. A completed
 *       write counts (success or failure); void promises are unvoided when writes are watched.
 *       Traffic makes the matching next events first again.</li>
 *   <li>An idle period fires one first event, then a non-first one every period. With
 *       {@code observeOutput}, non-first writer/all events are skipped while the outbound buffer
 *       makes progress.</li>
 *   <li>Nothing fires once the channel is closed; the checks stop for good when the channel goes
 *       inactive or the handler is removed. Not {@code @Sharable}.</li>
 *   <li>{@link #channelIdle} and {@link #newIdleStateEvent} may be overridden; their exceptions
 *       go to {@code exceptionCaught}.</li>
 * </ul>
 *
 * <h2>Timing and cost</h2>
 * Netty's algorithm: traffic only stamps the time; each watched check waits on a timer node of its
 * own, re-armed without allocating. Checks run when and in the order Netty's tasks would. Under
 * {@code EmbeddedChannel}, {@code advanceTimeBy(...)} and {@code runScheduledPendingTasks()} drive
 * it as they drive Netty's. On a shared timer ({@link Builder#timer}) each wake hops to the loop
 * and allocates a timeout handle.
 *
 * <h2>Thread rules</h2>
 * One instance per channel; methods run on the handler's executor, except
 * {@link #resetReadTimeout()} and {@link #resetWriteTimeout()}, which may be called from any thread.
 */
public class WheelIdleStateHandler extends ChannelDuplexHandler {

    private static final Logger log = LoggerFactory.getLogger(WheelIdleStateHandler.class);
    private static final byte NEW = 0;
    private static final byte RUNNING = 1;
    /** Never starts again, even if it never started. */
    private static final byte STOPPED = 2;

    private final IdleSettings settings;
    /** Null when the check is not watched. */
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
     * Netty's {@code IdleStateHandler(int, int, int)}.
     *
     * @param readerIdleTimeSeconds reader idle time in seconds
     * @param writerIdleTimeSeconds writer idle time in seconds
     * @param allIdleTimeSeconds all idle time in seconds
     */
    public WheelIdleStateHandler(int readerIdleTimeSeconds, int writerIdleTimeSeconds, int allIdleTimeSeconds) {
        this(readerIdleTimeSeconds, writerIdleTimeSeconds, allIdleTimeSeconds, TimeUnit.SECONDS);
    }

    /**
     * Netty's {@code IdleStateHandler(long, long, long, TimeUnit)}.
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
     * @param observeOutput whether a draining outbound buffer keeps the writer from being idle
     * @throws NullPointerException if {@code unit} is null
     */
    public WheelIdleStateHandler(
            boolean observeOutput, long readerIdleTime, long writerIdleTime, long allIdleTime, TimeUnit unit) {
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
        boolean observing = settings.observeOutput;
        this.writerCheck = settings.writerIdleTimeNanos > 0 ? observing ? new ObservingCheck() : new IdleCheck() : null;
        this.allCheck = settings.allIdleTimeNanos > 0
                ? observing && writerCheck == null ? new ObservingCheck() : new IdleCheck()
                : null;
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

    // Netty's state machine: start once, when active and in place; stop for good on inactive or removed.

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

    /** On a channel already active and registered {@code channelActive} will not come. */
    private boolean startsEarly(ChannelHandlerContext ctx) {
        return state == NEW && ctx.channel().isActive() && ctx.channel().isRegistered();
    }

    /** Netty's {@code initialize}. */
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

    /** Netty's {@code destroy}. */
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

    /** The loop's clock (virtual under {@code EmbeddedChannel}); once started. */
    private long now() {
        return wheel != null ? wheel.ticker().getAsLong() : shared.clock.getAsLong();
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
            ctx.write(msg, promise.unvoid()).addListener(writeListener());
        } else {
            ctx.write(msg, promise);
        }
    }

    /** Netty's {@code resetReadTimeout()}: counts a read now. Any thread (handed to the executor). */
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

    /** Netty's {@code resetWriteTimeout()}: counts a write now. Any thread (handed to the executor). */
    public void resetWriteTimeout() {
        if (settings.watchesWrites) {
            if (offExecutor()) {
                ctx.executor().execute(this::resetWriteTimeout);
                return;
            }
            writeObserved();
        }
    }

    /** A write completed, or the write timeout was reset. */
    private void writeObserved() {
        if (state == RUNNING) {
            lastWriteTime = now();
        }
        firstWriterIdleEvent = firstAllIdleEvent = true;
    }

    /** Netty's one write listener: the writer's check, else the all check. */
    private IdleCheck writeListener() {
        return writerCheck != null ? writerCheck : allCheck;
    }

    private boolean offExecutor() {
        return ctx != null && !ctx.executor().inEventLoop();
    }

    // ---------------------------------------------------------------- checks (Netty's idle tasks)

    /** Netty's idle task of {@code check}, its timer fired at {@code now}. */
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
            if (idle != IdleState.READER_IDLE
                    && writeListener() instanceof ObservingCheck observing
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
        return check == readerCheck
                ? IdleState.READER_IDLE
                : check == writerCheck ? IdleState.WRITER_IDLE : IdleState.ALL_IDLE;
    }

    /** The last traffic the {@code idle} check counts from. */
    private long lastTrafficOf(IdleState idle) {
        return switch (idle) {
            case READER_IDLE -> lastReadTime;
            case WRITER_IDLE -> lastWriteTime;
            case ALL_IDLE -> lastWriteTime - lastReadTime > 0 ? lastWriteTime : lastReadTime;
        };
    }

    /** Netty's {@code schedule(...)}: on the loop's wheel a re-arm, allocation free. */
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

    /** One check's timer (Netty's {@code ReaderIdleTimeoutTask} and siblings), re-armed for the channel's life. */
    private class IdleCheck extends TimerNode implements ChannelFutureListener {

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

    /** The checks' timeouts on a timer shared across loops; the task of all three, told apart by handle. */
    private final class SharedTimeouts implements Consumer<WheelTimeout> {
        private final WheelScheduler timer;
        private final EventExecutor executor;
        /** The executor's clock. */
        final LongSupplier clock;

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
        public void accept(WheelTimeout expired) {
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

    /** With observeOutput, the write listener's check: it keeps the outbound buffer as last seen, as Netty does. */
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

        /** Netty's {@code hasOutputChanged}: a first event is never skipped, the call then only records. */
        boolean hasOutputChanged(ChannelHandlerContext ctx, boolean first, long lastWriteTime) {
            if (lastChangeCheckTimeStamp != lastWriteTime) {
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
     * Fires {@code evt} through the pipeline, as Netty's handler.
     *
     * @param ctx the handler's context
     * @param evt the event to fire
     * @throws Exception anything: Netty passes it to {@code exceptionCaught}
     */
    protected void channelIdle(ChannelHandlerContext ctx, IdleStateEvent evt) throws Exception {
        ctx.fireUserEventTriggered(evt);
    }

    /**
     * Returns the event for {@code state}: by default Netty's singletons.
     *
     * @param state which idleness
     * @param first whether it is the first event of this idle period
     * @return the event to fire
     */
    protected IdleStateEvent newIdleStateEvent(IdleState state, boolean first) {
        return switch (state) {
            case ALL_IDLE -> first ? IdleStateEvent.FIRST_ALL_IDLE_STATE_EVENT : IdleStateEvent.ALL_IDLE_STATE_EVENT;
            case READER_IDLE ->
                first ? IdleStateEvent.FIRST_READER_IDLE_STATE_EVENT : IdleStateEvent.READER_IDLE_STATE_EVENT;
            case WRITER_IDLE ->
                first ? IdleStateEvent.FIRST_WRITER_IDLE_STATE_EVENT : IdleStateEvent.WRITER_IDLE_STATE_EVENT;
        };
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "(reader " + settings.readerIdleTimeNanos + " ns, writer "
                + settings.writerIdleTimeNanos + " ns, all " + settings.allIdleTimeNanos + " ns"
                + (ctx == null ? "" : ", " + ctx.channel()) + ")";
    }

    /** Makes handlers that share its immutable settings and meters. Thread-safe. */
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

    /** Settings of a {@link WheelIdleStateHandler}; every check starts disabled. Not thread-safe. */
    public static final class Builder {
        private boolean observeOutput;
        private long readerIdleTimeNanos;
        private long writerIdleTimeNanos;
        private long allIdleTimeNanos;
        private EventLoopWheels wheels = EventLoopWheels.shared();
        private boolean wheelsChosen;
        private WheelScheduler sharedTimer;
        private IdleEventCounters counters;

        private Builder() {}

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
         * Puts the timers on these per-event-loop wheels instead of {@link EventLoopWheels#shared()}.
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
         * Puts every channel's timers on one thread-safe timer instead of the loop's wheel.
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
         * Counts idle events: counter {@code wheelbeat.idle.events}, tag {@code state} = reader,
         * writer or all.
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
         * @throws IllegalStateException if no idle time was set
         */
        public Factory build() {
            if (readerIdleTimeNanos == 0 && writerIdleTimeNanos == 0 && allIdleTimeNanos == 0) {
                throw new IllegalStateException("set readerIdleTime, writerIdleTime or allIdleTime");
            }
            return new Factory(new IdleSettings(
                    observeOutput,
                    readerIdleTimeNanos,
                    writerIdleTimeNanos,
                    allIdleTimeNanos,
                    wheels,
                    sharedTimer,
                    counters));
        }
    }
}
