package io.wheelbeat.netty;

import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelPromise;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.Ticker;
import io.wheelbeat.core.WheelScheduler;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * A drop-in replacement for Netty's {@link IdleStateHandler} whose timers live on the shared
 * timing wheel of the channel's event loop ({@link EventLoopWheels#shared()}) instead of the
 * loop's priority queue: it fires the same {@link IdleStateEvent} singletons, with the same
 * first/non-first semantics, so existing {@code userEventTriggered} code works unchanged.
 *
 * <h2>Swapping it in</h2>
 * <pre>{@code
 * // was: pipeline.addLast("idle", new IdleStateHandler(60, 30, 0));
 * import io.wheelbeat.netty.WheelIdleStateHandler;
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
 * <h2>Timing</h2>
 * Events fire on the wheel's tick, at most one tick (1.05 ms with the shared wheels) after the
 * instant Netty's handler would fire them, and never before. Deadlines of one handler that fall
 * due in the same tick run in deadline order, as Netty's separate tasks would. Repeated events
 * are counted from the due time, so the tick's rounding does not accumulate. In tests with
 * {@code EmbeddedChannel}, {@code freezeTime()}, {@code advanceTimeBy(...)} and
 * {@code runScheduledPendingTasks()} drive it as they drive Netty's handler; advance one tick
 * past the idle time for the event to fire.
 *
 * <h2>Cost</h2>
 * Traffic moves a deadline on the wheel (O(1), no allocation; one field write when it stays in
 * its slot) at most once per read batch and once per write completion; {@code channelRead} only
 * sets a flag. A connection that keeps talking never wakes its timers. With
 * {@link Builder#timer(WheelScheduler) a shared timer}, traffic only stamps times (as in Netty)
 * and every expiry hops to the channel's event loop: slower, and a timeout handle per expiry.
 *
 * <h2>Thread rules</h2>
 * One instance per channel. Every method runs on the handler's executor, except
 * {@link #resetReadTimeout()} and {@link #resetWriteTimeout()}, which may be called from any
 * thread (off the executor they are handed to it). Construction and the builder are
 * single-threaded.
 */
public class WheelIdleStateHandler extends ChannelDuplexHandler {

    private static final long MIN_TIMEOUT_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final byte ST_INITIALIZED = 1;
    private static final byte ST_DESTROYED = 2;
    /** The deadline of a kind with no pending timer; also what a saturated deadline becomes. */
    private static final long NOT_ARMED = Long.MAX_VALUE;

    private final boolean observeOutput;
    private final long readerIdleTimeNanos;
    private final long writerIdleTimeNanos;
    private final long allIdleTimeNanos;
    /** Where the timers go: per-event-loop wheels, or (when non-null) {@link #sharedTimer}. */
    private final EventLoopWheels wheels;
    private final WheelScheduler sharedTimer;
    /** Null when no meter registry was given. */
    private final IdleEventCounters counters;
    /** One listener for every write, as Netty does, so that writes allocate no listener. */
    private final ChannelFutureListener writeListener = this::writeCompleted;

    private ChannelHandlerContext ctx;
    private Ticker ticker = Ticker.systemTicker();
    private IdleDeadlines deadlines;
    private byte state;

    private boolean reading;
    private long lastReadTime;
    private long lastWriteTime;
    private boolean firstReaderIdleEvent = true;
    private boolean firstWriterIdleEvent = true;
    private boolean firstAllIdleEvent = true;
    /** Per kind, the deadline its pending timer was armed for, or {@link #NOT_ARMED}. */
    private long readerDeadline = NOT_ARMED;
    private long writerDeadline = NOT_ARMED;
    private long allDeadline = NOT_ARMED;

    // What observeOutput compares against, as Netty keeps it.
    private long lastChangeCheckTimeStamp;
    private int lastMessageHashCode;
    private long lastPendingWriteBytes;
    private long lastFlushProgress;

    /**
     * Netty's {@code IdleStateHandler(int, int, int)}: idle times in seconds, zero or less
     * disables a check.
     */
    public WheelIdleStateHandler(int readerIdleTimeSeconds, int writerIdleTimeSeconds, int allIdleTimeSeconds) {
        this(readerIdleTimeSeconds, writerIdleTimeSeconds, allIdleTimeSeconds, TimeUnit.SECONDS);
    }

    /**
     * Netty's {@code IdleStateHandler(long, long, long, TimeUnit)}: zero or less disables a check;
     * positive values are floored at 1 ms.
     *
     * @throws NullPointerException if {@code unit} is null
     */
    public WheelIdleStateHandler(long readerIdleTime, long writerIdleTime, long allIdleTime, TimeUnit unit) {
        this(false, readerIdleTime, writerIdleTime, allIdleTime, unit);
    }

    /**
     * Netty's {@code IdleStateHandler(boolean, long, long, long, TimeUnit)}.
     *
     * @param observeOutput whether progress of the outbound buffer (a slow consumer still
     *     draining) keeps the writer from being idle; see the class comment
     * @throws NullPointerException if {@code unit} is null
     */
    public WheelIdleStateHandler(boolean observeOutput, long readerIdleTime, long writerIdleTime,
                                 long allIdleTime, TimeUnit unit) {
        this(builder().observeOutput(observeOutput)
                .readerIdleTime(readerIdleTime, unit)
                .writerIdleTime(writerIdleTime, unit)
                .allIdleTime(allIdleTime, unit));
    }

    /** A handler with the builder's settings; for subclasses that need the builder's options. */
    protected WheelIdleStateHandler(Builder builder) {
        this.observeOutput = builder.observeOutput;
        this.readerIdleTimeNanos = builder.readerIdleTimeNanos;
        this.writerIdleTimeNanos = builder.writerIdleTimeNanos;
        this.allIdleTimeNanos = builder.allIdleTimeNanos;
        this.wheels = builder.wheels;
        this.sharedTimer = builder.sharedTimer;
        this.counters = builder.counters;
    }

    /** Returns a builder: every check disabled, no output observation, the shared wheels, no metrics. */
    public static Builder builder() {
        return new Builder();
    }

    /** Returns the reader idle time in milliseconds (0: disabled). */
    public long getReaderIdleTimeInMillis() {
        return TimeUnit.NANOSECONDS.toMillis(readerIdleTimeNanos);
    }

    /** Returns the writer idle time in milliseconds (0: disabled). */
    public long getWriterIdleTimeInMillis() {
        return TimeUnit.NANOSECONDS.toMillis(writerIdleTimeNanos);
    }

    /** Returns the all idle time in milliseconds (0: disabled). */
    public long getAllIdleTimeInMillis() {
        return TimeUnit.NANOSECONDS.toMillis(allIdleTimeNanos);
    }

    // ---------------------------------------------------------------- lifecycle

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) throws Exception {
        this.ctx = ctx;
        this.ticker = ctx.executor().ticker();
        Channel channel = ctx.channel();
        if (channel.isActive() && channel.isRegistered()) {
            // channelActive() has fired already and will not reach this handler.
            initialize();
        }
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) throws Exception {
        destroy();
    }

    @Override
    public void channelRegistered(ChannelHandlerContext ctx) throws Exception {
        if (ctx.channel().isActive()) {
            initialize();
        }
        super.channelRegistered(ctx);
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        initialize();
        super.channelActive(ctx);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        destroy();
        super.channelInactive(ctx);
    }

    private void initialize() {
        // Starts at most once, and never after destroy(): a handler removed or made inactive
        // before it started must not start later (Netty issue 143).
        if (state != 0) {
            return;
        }
        state = ST_INITIALIZED;
        initOutputChanged();
        lastReadTime = lastWriteTime = ticker.nanoTime();
        deadlines = sharedTimer != null
                ? new IdleDeadlines.OnSharedTimer(this, sharedTimer, ctx.executor())
                : new IdleDeadlines.OnLoopWheel(this, wheels.wheelFor(ctx.executor()).wheel());
        if (readerIdleTimeNanos > 0) {
            arm(IdleDeadlines.READER, plus(lastReadTime, readerIdleTimeNanos));
        }
        if (writerIdleTimeNanos > 0) {
            arm(IdleDeadlines.WRITER, plus(lastWriteTime, writerIdleTimeNanos));
        }
        if (allIdleTimeNanos > 0) {
            arm(IdleDeadlines.ALL, plus(lastWriteTime, allIdleTimeNanos));
        }
    }

    private void destroy() {
        state = ST_DESTROYED;
        if (deadlines != null) {
            deadlines.disarmAll();
        }
        readerDeadline = writerDeadline = allDeadline = NOT_ARMED;
    }

    // ---------------------------------------------------------------- traffic

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (readerIdleTimeNanos > 0 || allIdleTimeNanos > 0) {
            reading = true;
            firstReaderIdleEvent = firstAllIdleEvent = true;
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
        if ((readerIdleTimeNanos > 0 || allIdleTimeNanos > 0) && reading) {
            readObserved();
        }
        ctx.fireChannelReadComplete();
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        if (writerIdleTimeNanos > 0 || allIdleTimeNanos > 0) {
            ctx.write(msg, promise.unvoid()).addListener(writeListener);
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
        if (readerIdleTimeNanos > 0 || allIdleTimeNanos > 0) {
            if (offExecutor()) {
                ctx.executor().execute(this::resetReadTimeout);
                return;
            }
            firstReaderIdleEvent = firstAllIdleEvent = true;
            readObserved();
        }
    }

    /**
     * Counts a write now: Netty's {@code resetWriteTimeout()}. The next writer-idle and all-idle
     * events are first again. May be called from any thread; off the handler's executor it is
     * handed to the executor.
     */
    public void resetWriteTimeout() {
        if (writerIdleTimeNanos > 0 || allIdleTimeNanos > 0) {
            if (offExecutor()) {
                ctx.executor().execute(this::resetWriteTimeout);
                return;
            }
            writeObserved();
        }
    }

    private void writeCompleted(ChannelFuture future) {
        writeObserved();
    }

    private void readObserved() {
        lastReadTime = ticker.nanoTime();
        reading = false;
        if (rearmsNow()) {
            rearmAfterTraffic(IdleDeadlines.READER, lastReadTime, readerIdleTimeNanos);
            rearmAfterTraffic(IdleDeadlines.ALL, Math.max(lastReadTime, lastWriteTime), allIdleTimeNanos);
        }
    }

    private void writeObserved() {
        lastWriteTime = ticker.nanoTime();
        firstWriterIdleEvent = firstAllIdleEvent = true;
        if (rearmsNow()) {
            rearmAfterTraffic(IdleDeadlines.WRITER, lastWriteTime, writerIdleTimeNanos);
            rearmAfterTraffic(IdleDeadlines.ALL, Math.max(lastReadTime, lastWriteTime), allIdleTimeNanos);
        }
    }

    /**
     * Whether traffic moves the deadlines now. A write listener may run on the channel's loop
     * when the handler was added with another executor: it then only stamps the time, and the
     * timer re-arms for what is left when it fires.
     */
    private boolean rearmsNow() {
        return state == ST_INITIALIZED && deadlines.rearmsOnTraffic() && ctx.executor().inEventLoop();
    }

    private void rearmAfterTraffic(int kind, long lastTraffic, long idleTimeNanos) {
        if (idleTimeNanos > 0) {
            arm(kind, plus(lastTraffic, idleTimeNanos));
        }
    }

    private boolean offExecutor() {
        return ctx != null && !ctx.executor().inEventLoop();
    }

    // ---------------------------------------------------------------- expiry

    /**
     * Called on the handler's executor when the timer of {@code expiredKind} fires. Runs the
     * check of every kind due by now, in deadline order (ties: reader, writer, all), as Netty's
     * scheduler would run its separate tasks: the wheel fires a whole tick at once.
     */
    final void deadlineExpired(int expiredKind) {
        int spent = 1 << expiredKind; // kinds whose timer has fired: due whatever the time says
        long now = ticker.nanoTime();
        while (state == ST_INITIALIZED && ctx.channel().isOpen()) {
            int kind = earliestDue(spent, now);
            if (kind < 0) {
                return;
            }
            long due = deadlineOf(kind);
            if ((spent & (1 << kind)) != 0) {
                spent &= ~(1 << kind);
            } else {
                deadlines.disarm(kind);
            }
            setDeadline(kind, NOT_ARMED);
            switch (kind) {
                case IdleDeadlines.READER -> checkReader(now, due);
                case IdleDeadlines.WRITER -> checkWriter(now, due);
                default -> checkAll(now, due);
            }
        }
        // Closed or destroyed: as Netty's tasks do, a fired timer is simply not re-armed.
        for (int kind = IdleDeadlines.READER; kind <= IdleDeadlines.ALL; kind++) {
            if ((spent & (1 << kind)) != 0) {
                setDeadline(kind, NOT_ARMED);
            }
        }
    }

    /** The kind with the earliest deadline among those spent or due by {@code now}, or -1. */
    private int earliestDue(int spent, long now) {
        int earliest = -1;
        long earliestDeadline = 0;
        for (int kind = IdleDeadlines.READER; kind <= IdleDeadlines.ALL; kind++) {
            long deadline = deadlineOf(kind);
            boolean due = (spent & (1 << kind)) != 0 || (deadline != NOT_ARMED && deadline - now <= 0);
            if (due && (earliest < 0 || deadline - earliestDeadline < 0)) {
                earliest = kind;
                earliestDeadline = deadline;
            }
        }
        return earliest;
    }

    private void checkReader(long now, long due) {
        if (!reading && now - lastReadTime < readerIdleTimeNanos) {
            // Read since the timer was armed (only when traffic does not re-arm).
            arm(IdleDeadlines.READER, plus(lastReadTime, readerIdleTimeNanos));
            return;
        }
        arm(IdleDeadlines.READER, plus(repeatFrom(now, due), readerIdleTimeNanos));
        if (reading) {
            return;
        }
        boolean first = firstReaderIdleEvent;
        firstReaderIdleEvent = false;
        fireIdle(IdleState.READER_IDLE, first, false);
    }

    private void checkWriter(long now, long due) {
        if (now - lastWriteTime < writerIdleTimeNanos) {
            arm(IdleDeadlines.WRITER, plus(lastWriteTime, writerIdleTimeNanos));
            return;
        }
        arm(IdleDeadlines.WRITER, plus(repeatFrom(now, due), writerIdleTimeNanos));
        boolean first = firstWriterIdleEvent;
        firstWriterIdleEvent = false;
        fireIdle(IdleState.WRITER_IDLE, first, true);
    }

    private void checkAll(long now, long due) {
        long lastTraffic = Math.max(lastReadTime, lastWriteTime);
        if (!reading && now - lastTraffic < allIdleTimeNanos) {
            arm(IdleDeadlines.ALL, plus(lastTraffic, allIdleTimeNanos));
            return;
        }
        arm(IdleDeadlines.ALL, plus(repeatFrom(now, due), allIdleTimeNanos));
        if (reading) {
            return;
        }
        boolean first = firstAllIdleEvent;
        firstAllIdleEvent = false;
        fireIdle(IdleState.ALL_IDLE, first, true);
    }

    /**
     * Where the next period starts after a deadline passed: Netty counts from when its task ran.
     * A timer late by less than the wheel's granularity counts from its due time instead, so that
     * the rounding to ticks does not add up over repeated events; a loop that ran later than that
     * counts from now, as Netty does.
     */
    private long repeatFrom(long now, long due) {
        return now - due < deadlines.quantumNanos() ? due : now;
    }

    private void fireIdle(IdleState idleState, boolean first, boolean suppressedByOutput) {
        try {
            if (suppressedByOutput && hasOutputChanged(first)) {
                return;
            }
            IdleStateEvent event = newIdleStateEvent(idleState, first);
            if (counters != null) {
                counters.increment(idleState);
            }
            channelIdle(ctx, event);
        } catch (Throwable t) {
            ctx.fireExceptionCaught(t);
        }
    }

    private void arm(int kind, long deadline) {
        if (deadlineOf(kind) == deadline) {
            return;
        }
        setDeadline(kind, deadline);
        if (deadline == NOT_ARMED) {
            deadlines.disarm(kind); // beyond the clock's range: it would never fire
        } else {
            deadlines.arm(kind, deadline);
        }
    }

    private long deadlineOf(int kind) {
        return kind == IdleDeadlines.READER ? readerDeadline
                : kind == IdleDeadlines.WRITER ? writerDeadline : allDeadline;
    }

    private void setDeadline(int kind, long deadline) {
        if (kind == IdleDeadlines.READER) {
            readerDeadline = deadline;
        } else if (kind == IdleDeadlines.WRITER) {
            writerDeadline = deadline;
        } else {
            allDeadline = deadline;
        }
    }

    /** {@code time + duration} for a positive duration, saturating instead of overflowing. */
    private static long plus(long time, long duration) {
        long sum = time + duration;
        return sum < time ? NOT_ARMED : sum;
    }

    // ---------------------------------------------------------------- extension points

    /**
     * Called when an idle state event should be fired; fires it through the pipeline
     * ({@code ctx.fireUserEventTriggered(evt)}). As in Netty's handler.
     */
    protected void channelIdle(ChannelHandlerContext ctx, IdleStateEvent evt) throws Exception {
        ctx.fireUserEventTriggered(evt);
    }

    /**
     * Returns the event for {@code state}: by default Netty's singletons
     * ({@link IdleStateEvent#FIRST_READER_IDLE_STATE_EVENT} and the five others).
     */
    protected IdleStateEvent newIdleStateEvent(IdleState state, boolean first) {
        return switch (state) {
            case ALL_IDLE -> first ? IdleStateEvent.FIRST_ALL_IDLE_STATE_EVENT : IdleStateEvent.ALL_IDLE_STATE_EVENT;
            case READER_IDLE -> first ? IdleStateEvent.FIRST_READER_IDLE_STATE_EVENT : IdleStateEvent.READER_IDLE_STATE_EVENT;
            case WRITER_IDLE -> first ? IdleStateEvent.FIRST_WRITER_IDLE_STATE_EVENT : IdleStateEvent.WRITER_IDLE_STATE_EVENT;
        };
    }

    // ---------------------------------------------------------------- observeOutput

    private void initOutputChanged() {
        if (observeOutput) {
            ChannelOutboundBuffer buf = ctx.channel().unsafe().outboundBuffer();
            if (buf != null) {
                lastMessageHashCode = System.identityHashCode(buf.current());
                lastPendingWriteBytes = buf.totalPendingWriteBytes();
                lastFlushProgress = buf.currentProgress();
            }
        }
    }

    /**
     * Whether the outbound buffer changed since the last call (Netty issue 6150): a completed
     * write, another message at the head, other pending bytes, or flush progress. A first call
     * only records; it never reports a change, so first events are never skipped.
     */
    private boolean hasOutputChanged(boolean first) {
        if (!observeOutput) {
            return false;
        }
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

    @Override
    public String toString() {
        return getClass().getSimpleName() + "(reader " + readerIdleTimeNanos + " ns, writer "
                + writerIdleTimeNanos + " ns, all " + allIdleTimeNanos + " ns"
                + (ctx == null ? "" : ", " + ctx.channel()) + ")";
    }

    /**
     * Settings of a {@link WheelIdleStateHandler}. Every check starts disabled. Not thread-safe;
     * {@link #build()} may be called many times (say once per channel) and the handlers share the
     * meters looked up once here.
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
         * Reader idle time: zero or less disables the check; positive values are floored at 1 ms.
         *
         * @throws NullPointerException if {@code unit} is null
         */
        public Builder readerIdleTime(long time, TimeUnit unit) {
            this.readerIdleTimeNanos = idleNanos(time, unit);
            return this;
        }

        /** Writer idle time, as {@link #readerIdleTime}. */
        public Builder writerIdleTime(long time, TimeUnit unit) {
            this.writerIdleTimeNanos = idleNanos(time, unit);
            return this;
        }

        /** All idle time (neither read nor write), as {@link #readerIdleTime}. */
        public Builder allIdleTime(long time, TimeUnit unit) {
            this.allIdleTimeNanos = idleNanos(time, unit);
            return this;
        }

        /** Whether a draining outbound buffer keeps the writer from being idle; off by default. */
        public Builder observeOutput(boolean observeOutput) {
            this.observeOutput = observeOutput;
            return this;
        }

        /**
         * Puts the timers on these per-event-loop wheels instead of {@link EventLoopWheels#shared()}
         * (say, wheels with another tick).
         *
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
         * expiry then hops to the channel's event loop ({@code ctx.executor().execute}) and each
         * arm allocates a timeout handle, so traffic only stamps times and deadlines are fixed up
         * when they fire: slower than the per-loop wheels, for when one timer thread is wanted.
         *
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
         * @throws NullPointerException if {@code registry} is null
         */
        public Builder meterRegistry(MeterRegistry registry) {
            this.counters = new IdleEventCounters(Objects.requireNonNull(registry, "registry"));
            return this;
        }

        /** Builds a handler for one channel. */
        public WheelIdleStateHandler build() {
            return new WheelIdleStateHandler(this);
        }

        private static long idleNanos(long time, TimeUnit unit) {
            Objects.requireNonNull(unit, "unit");
            return time <= 0 ? 0 : Math.max(unit.toNanos(time), MIN_TIMEOUT_NANOS);
        }
    }
}
