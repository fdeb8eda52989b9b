package io.wheelbeat.netty;

import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelPromise;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.Ticker;
import io.wheelbeat.core.TimerWheel;
import io.wheelbeat.core.WheelScheduler;
import io.wheelbeat.netty.internal.ActiveChannelLifecycle;
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
 * The handler keeps Netty's three idle tasks as data (when each would run next, and the order
 * they were scheduled in) and runs them in Netty's order; the wheel only wakes it for the checks
 * that can fire an event. The events are therefore Netty's, in Netty's order, each fired at most
 * one wheel tick (1.05 ms with the shared wheels) after the instant Netty's handler would fire
 * it, and never before. Traffic arriving within that tick runs the overdue checks first, so it
 * never hides an event that Netty would have fired. When the loop itself runs late by a tick or
 * more, the next period counts from when the check ran, as with Netty's task. In tests with
 * {@code EmbeddedChannel}, {@code freezeTime()}, {@code advanceTimeBy(...)} and
 * {@code runScheduledPendingTasks()} drive it as they drive Netty's handler; advance one tick
 * past the idle time for the event to fire.
 *
 * <h2>Cost</h2>
 * Traffic moves a timer on the wheel (O(1), no allocation; one field write when it stays in its
 * slot) at most once per read batch and once per write completion, and a read batch reads the
 * clock twice (Netty's handler: once); further {@code channelRead}s of a batch only set a flag.
 * A connection that keeps talking never wakes its timers. With
 * {@link Builder#timer(WheelScheduler) a shared timer}, traffic only stamps times (as in Netty),
 * the timer wakes for every check, and every wake-up hops to the channel's event loop: slower,
 * and a timeout handle per check.
 *
 * <p>Memory: handlers configured alike share one immutable settings object (per builder, or per
 * set of constructor arguments), a handler keeps the state of the writer and all checks only
 * when it watches one of them, and its timers are cells of the loop's wheel rather than task
 * objects. A started reader-idle handler is two small objects, less than half of what Netty's
 * handler and its scheduled task take.
 *
 * <h2>Thread rules</h2>
 * One instance per channel. Every method runs on the handler's executor, except
 * {@link #resetReadTimeout()} and {@link #resetWriteTimeout()}, which may be called from any
 * thread (off the executor they are handed to it). Construction and the builder are
 * single-threaded.
 */
public class WheelIdleStateHandler extends ActiveChannelLifecycle {

    private static final long MIN_TIMEOUT_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** A check or timer not scheduled; also what a time beyond the clock's range becomes. */
    private static final long NOT_ARMED = Long.MAX_VALUE;

    // Heap per connection (WheelIdleStateHandlerFootprintTest): the settings are shared, and the
    // state of the writer and all checks exists only when one of them is watched, so a started
    // reader-idle handler is this object and its IdleDeadlines. The first flags of all three kinds
    // stay here: they fit in this object's alignment padding.
    private final Settings settings;
    /** The writer and all checks and the writes they count; null unless one of them is watched. */
    private final WriteChecks writes;

    private ChannelHandlerContext ctx;
    private Ticker ticker = Ticker.systemTicker();
    private IdleDeadlines deadlines;

    private boolean reading;
    private boolean firstReaderIdleEvent = true;
    private boolean firstWriterIdleEvent = true;
    private boolean firstAllIdleEvent = true;
    /** Set while checks run, so that traffic caused by an idle event does not run them again. */
    private boolean runningChecks;
    private long lastReadTime;

    // Netty's reader idle task, kept as data: when it would next run ({@link #NOT_ARMED}: not
    // scheduled), where its timer is armed (the next check that can fire an event, {@link #wakeFor})
    // and that timer's id on the loop wheel. WriteChecks keeps the same for the writer and all tasks.
    private long readerCheckAt = NOT_ARMED;
    private long readerWakeAt = NOT_ARMED;
    private long readerTimer = TimerWheel.NO_TIMER;

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
        this(Settings.interned(observeOutput, idleNanos(readerIdleTime, unit), idleNanos(writerIdleTime, unit),
                idleNanos(allIdleTime, unit)));
    }

    /** A handler with the builder's settings; for subclasses that need the builder's options. */
    protected WheelIdleStateHandler(Builder builder) {
        this(builder.settings);
    }

    private WheelIdleStateHandler(Settings settings) {
        this.settings = settings;
        this.writes = !settings.watchesWrites ? null
                : settings.observeOutput ? new ObservedWriteChecks(this) : new WriteChecks(this);
    }

    /** Returns a builder: every check disabled, no output observation, the shared wheels, no metrics. */
    public static Builder builder() {
        return new Builder();
    }

    /** Returns the reader idle time in milliseconds (0: disabled). */
    public long getReaderIdleTimeInMillis() {
        return TimeUnit.NANOSECONDS.toMillis(settings.readerIdleTimeNanos);
    }

    /** Returns the writer idle time in milliseconds (0: disabled). */
    public long getWriterIdleTimeInMillis() {
        return TimeUnit.NANOSECONDS.toMillis(settings.writerIdleTimeNanos);
    }

    /** Returns the all idle time in milliseconds (0: disabled). */
    public long getAllIdleTimeInMillis() {
        return TimeUnit.NANOSECONDS.toMillis(settings.allIdleTimeNanos);
    }

    // ---------------------------------------------------------------- lifecycle

    /** Starts the checks: the channel is active and the handler in place. */
    @Override
    protected final void onStart(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        this.ticker = ctx.executor().ticker();
        long now = ticker.nanoTime();
        lastReadTime = now;
        if (writes != null) {
            writes.initOutputChanged(ctx);
            writes.lastWriteTime = now;
        }
        deadlines = settings.sharedTimer != null
                ? new IdleDeadlines.OnSharedTimer(this, settings.sharedTimer, ctx.executor())
                : new IdleDeadlines.OnLoopWheel(this, settings.wheels.wheelFor(ctx.executor()));
        if (settings.readerIdleTimeNanos > 0) {
            scheduleCheck(IdleDeadlines.READER, plus(now, settings.readerIdleTimeNanos));
        }
        if (settings.writerIdleTimeNanos > 0) {
            scheduleCheck(IdleDeadlines.WRITER, plus(now, settings.writerIdleTimeNanos));
        }
        if (settings.allIdleTimeNanos > 0) {
            scheduleCheck(IdleDeadlines.ALL, plus(now, settings.allIdleTimeNanos));
        }
        rearmWakes();
    }

    /** Stops the checks for good: the channel went inactive or the handler was removed. */
    @Override
    protected final void onStop() {
        for (int kind = IdleDeadlines.READER; kind <= lastKind(); kind++) {
            deadlines.disarm(kind);
            setCheckAt(kind, NOT_ARMED);
            setWakeAt(kind, NOT_ARMED);
        }
    }

    // ---------------------------------------------------------------- traffic

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (settings.watchesReads) {
            if (!reading) {
                // A batch starts: checks that fell due before it see the state before it.
                runDueChecks(ticker.nanoTime());
            }
            reading = true;
            firstReaderIdleEvent = firstAllIdleEvent = true;
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
        if (settings.watchesReads && reading) {
            readObserved(false);
        }
        ctx.fireChannelReadComplete();
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        if (writes != null) {
            if (settings.observeOutput) {
                runDueChecks(ticker.nanoTime()); // they must see the outbound buffer before this write
            }
            ctx.write(msg, promise.unvoid()).addListener(writes);
        } else {
            // Only reads are watched: a void promise may stay void.
            ctx.write(msg, promise);
        }
    }

    @Override
    public void flush(ChannelHandlerContext ctx) throws Exception {
        if (writes != null && settings.observeOutput) {
            runDueChecks(ticker.nanoTime()); // they must see the outbound buffer before this flush
        }
        ctx.flush();
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
            readObserved(true);
        }
    }

    /**
     * Counts a write now: Netty's {@code resetWriteTimeout()}. The next writer-idle and all-idle
     * events are first again. May be called from any thread; off the handler's executor it is
     * handed to the executor.
     */
    public void resetWriteTimeout() {
        if (writes != null) {
            if (offExecutor()) {
                ctx.executor().execute(this::resetWriteTimeout);
                return;
            }
            writeObserved();
        }
    }

    /** A read batch completed ({@code resetFirst}: or the read timeout was reset). */
    private void readObserved(boolean resetFirst) {
        long now = ticker.nanoTime();
        runDueChecks(now);
        lastReadTime = now;
        reading = false;
        if (resetFirst) {
            firstReaderIdleEvent = firstAllIdleEvent = true;
        }
        rearmWakes();
    }

    /**
     * A write completed, or the write timeout was reset. A write listener may run on the
     * channel's loop when the handler was added with another executor: it then only stamps the
     * time, as Netty does, and the checks catch up when they run.
     */
    private void writeObserved() {
        long now = ticker.nanoTime();
        boolean onExecutor = onExecutor();
        if (onExecutor) {
            runDueChecks(now);
        }
        writes.lastWriteTime = now;
        firstWriterIdleEvent = firstAllIdleEvent = true;
        if (onExecutor) {
            rearmWakes();
        }
    }

    private boolean onExecutor() {
        return ctx != null && ctx.executor().inEventLoop();
    }

    private boolean offExecutor() {
        return ctx != null && !ctx.executor().inEventLoop();
    }

    // ---------------------------------------------------------------- checks (Netty's idle tasks)

    /** Called on the handler's executor when the timer of {@code kind} fires. */
    final void deadlineExpired(int kind) {
        if (!running()) {
            return;
        }
        runDueChecks(ticker.nanoTime());
        setWakeAt(kind, NOT_ARMED); // its timer is spent: re-arm it whatever it was aimed at
        rearmWakes();
    }

    /** Called on the handler's executor when the loop-wheel timer {@code timerId} fires. */
    final void timerExpired(long timerId) {
        for (int kind = IdleDeadlines.READER; kind <= lastKind(); kind++) {
            if (timer(kind) == timerId) {
                setTimer(kind, TimerWheel.NO_TIMER);
                deadlineExpired(kind);
                return;
            }
        }
        // Not ours any more: ids are never reused, so nothing else can match.
    }

    /**
     * Runs every check that Netty's scheduler would have run by {@code now}, in its order: by
     * time, then by the order they were scheduled in. Traffic runs them before it changes any
     * state, so a check sees what Netty's task would have seen at its time.
     */
    private void runDueChecks(long now) {
        if (runningChecks || !running()) {
            return; // an idle event's own traffic: the running loop goes on after the event
        }
        runningChecks = true;
        try {
            int kind;
            while (running() && (kind = nextDueCheck(now)) >= 0) {
                long due = checkAt(kind);
                if (!ctx.channel().isOpen()) {
                    setCheckAt(kind, NOT_ARMED); // as Netty's task: a closed channel stops it
                    continue;
                }
                // A check the timer was aimed at and found late by a tick or more: the loop ran
                // late, and Netty's task would have run now. Other checks (not aimed at, since
                // they cannot fire) ran on time.
                boolean late = wakeAt(kind) == due && now - due >= deadlines.quantumNanos();
                runCheck(kind, late ? now : due);
            }
        } finally {
            runningChecks = false;
        }
    }

    /** The kind whose check is due by {@code now} and comes first, or -1. */
    private int nextDueCheck(long now) {
        int next = -1;
        for (int kind = IdleDeadlines.READER; kind <= lastKind(); kind++) {
            long at = checkAt(kind);
            if (at == NOT_ARMED || at - now > 0) {
                continue;
            }
            // A tie needs two watched kinds, one of them writer or all: writes is there.
            if (next < 0 || at - checkAt(next) < 0 || (at == checkAt(next) && writes.scheduledBefore(kind, next))) {
                next = kind;
            }
        }
        return next;
    }

    /** Netty's idle task of {@code kind}, run at {@code ranAt}. */
    private void runCheck(int kind, long ranAt) {
        long idleTime = idleTimeOf(kind);
        boolean busyReading = kind != IdleDeadlines.WRITER && reading;
        long last = lastTrafficOf(kind);
        if (!busyReading && ranAt - last < idleTime) {
            scheduleCheck(kind, plus(last, idleTime)); // traffic since: wait for what is left
            return;
        }
        scheduleCheck(kind, plus(ranAt, idleTime));
        if (busyReading) {
            return;
        }
        boolean first;
        IdleState idleState;
        if (kind == IdleDeadlines.READER) {
            first = firstReaderIdleEvent;
            firstReaderIdleEvent = false;
            idleState = IdleState.READER_IDLE;
        } else if (kind == IdleDeadlines.WRITER) {
            first = firstWriterIdleEvent;
            firstWriterIdleEvent = false;
            idleState = IdleState.WRITER_IDLE;
        } else {
            first = firstAllIdleEvent;
            firstAllIdleEvent = false;
            idleState = IdleState.ALL_IDLE;
        }
        fireIdle(idleState, first, kind != IdleDeadlines.READER);
    }

    private void fireIdle(IdleState idleState, boolean first, boolean suppressedByOutput) {
        try {
            if (suppressedByOutput && writes.hasOutputChanged(ctx, first)) {
                return;
            }
            IdleStateEvent event = newIdleStateEvent(idleState, first);
            if (settings.counters != null) {
                settings.counters.increment(idleState);
            }
            channelIdle(ctx, event);
        } catch (Throwable t) {
            ctx.fireExceptionCaught(t);
        }
    }

    private void scheduleCheck(int kind, long at) {
        setCheckAt(kind, at);
        if (writes != null) {
            writes.scheduled(kind);
        }
    }

    /** Aims each kind's timer at {@link #wakeFor} its check, moving only those that changed. */
    private void rearmWakes() {
        for (int kind = IdleDeadlines.READER; kind <= lastKind() && running(); kind++) {
            long wake = wakeFor(kind);
            if (wake != wakeAt(kind)) {
                setWakeAt(kind, wake);
                if (wake == NOT_ARMED) {
                    deadlines.disarm(kind);
                } else {
                    deadlines.arm(kind, wake);
                }
            }
        }
    }

    /**
     * When the timer of {@code kind} must fire: at the first check that can fire an event. With
     * cheap re-arming, that is the check itself if it finds the channel idle, else the moment it
     * would wait for (the last traffic plus the idle time), so checks that cannot fire cost no
     * wake-up and a connection that keeps talking never wakes its timers. Otherwise every check.
     */
    private long wakeFor(int kind) {
        long at = checkAt(kind);
        if (at == NOT_ARMED || !deadlines.rearmsOnTraffic()) {
            return at;
        }
        long last = lastTrafficOf(kind);
        long idleAt = plus(last, idleTimeOf(kind));
        return idleAt - at > 0 ? idleAt : at;
    }

    /**
     * The last kind that can have a check: the writer and all kinds only have state when one of
     * them is watched.
     */
    private int lastKind() {
        return writes == null ? IdleDeadlines.READER : IdleDeadlines.ALL;
    }

    /** The last traffic the check of {@code kind} counts from: reads, writes, or either. */
    private long lastTrafficOf(int kind) {
        return kind == IdleDeadlines.READER ? lastReadTime
                : kind == IdleDeadlines.WRITER ? writes.lastWriteTime : Math.max(lastReadTime, writes.lastWriteTime);
    }

    private long idleTimeOf(int kind) {
        return kind == IdleDeadlines.READER ? settings.readerIdleTimeNanos
                : kind == IdleDeadlines.WRITER ? settings.writerIdleTimeNanos : settings.allIdleTimeNanos;
    }

    private long checkAt(int kind) {
        return kind == IdleDeadlines.READER ? readerCheckAt
                : kind == IdleDeadlines.WRITER ? writes.writerCheckAt : writes.allCheckAt;
    }

    private void setCheckAt(int kind, long at) {
        if (kind == IdleDeadlines.READER) {
            readerCheckAt = at;
        } else if (kind == IdleDeadlines.WRITER) {
            writes.writerCheckAt = at;
        } else {
            writes.allCheckAt = at;
        }
    }

    private long wakeAt(int kind) {
        return kind == IdleDeadlines.READER ? readerWakeAt
                : kind == IdleDeadlines.WRITER ? writes.writerWakeAt : writes.allWakeAt;
    }

    private void setWakeAt(int kind, long at) {
        if (kind == IdleDeadlines.READER) {
            readerWakeAt = at;
        } else if (kind == IdleDeadlines.WRITER) {
            writes.writerWakeAt = at;
        } else {
            writes.allWakeAt = at;
        }
    }

    /** The loop-wheel timer of {@code kind}, or {@link TimerWheel#NO_TIMER}; for {@link IdleDeadlines.OnLoopWheel}. */
    final long timer(int kind) {
        return kind == IdleDeadlines.READER ? readerTimer
                : kind == IdleDeadlines.WRITER ? writes.writerTimer : writes.allTimer;
    }

    final void setTimer(int kind, long timer) {
        if (kind == IdleDeadlines.READER) {
            readerTimer = timer;
        } else if (kind == IdleDeadlines.WRITER) {
            writes.writerTimer = timer;
        } else {
            writes.allTimer = timer;
        }
    }

    /**
     * {@code time + duration} for a positive duration; a sum beyond the clock's range becomes
     * {@link #NOT_ARMED}: such a check would never run.
     */
    private static long plus(long time, long duration) {
        long sum = time + duration;
        return sum < time ? NOT_ARMED : sum;
    }

    /** An idle time in nanoseconds: zero or less disables the check; positive values are floored at 1 ms. */
    private static long idleNanos(long time, TimeUnit unit) {
        Objects.requireNonNull(unit, "unit");
        return time <= 0 ? 0 : Math.max(unit.toNanos(time), MIN_TIMEOUT_NANOS);
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

    @Override
    public String toString() {
        return getClass().getSimpleName() + "(reader " + settings.readerIdleTimeNanos + " ns, writer "
                + settings.writerIdleTimeNanos + " ns, all " + settings.allIdleTimeNanos + " ns"
                + (ctx == null ? "" : ", " + ctx.channel()) + ")";
    }

    // ---------------------------------------------------------------- per-handler parts

    /**
     * The state of the writer and all checks (as the reader's in the handler) and the write
     * traffic they count from, kept only by a handler that watches one of them. It is also the
     * listener of every write, one for all of them as in Netty, so that writes allocate no
     * listener.
     */
    private static class WriteChecks implements ChannelFutureListener {
        /** Reader first, then writer, then all: the order {@link #onStart} schedules them in. */
        private static final byte START_ORDER = IdleDeadlines.READER << 2 * IdleDeadlines.READER
                | IdleDeadlines.WRITER << 2 * IdleDeadlines.WRITER | IdleDeadlines.ALL << 2 * IdleDeadlines.ALL;
        private static final int LAST_PLACE = 2;

        private final WheelIdleStateHandler handler;
        long lastWriteTime;
        long writerCheckAt = NOT_ARMED;
        long writerWakeAt = NOT_ARMED;
        long writerTimer = TimerWheel.NO_TIMER;
        long allCheckAt = NOT_ARMED;
        long allWakeAt = NOT_ARMED;
        long allTimer = TimerWheel.NO_TIMER;
        /**
         * Each kind's place (two bits at {@code 2 * kind}; 0: longest ago) in the order the
         * checks were last scheduled, which breaks ties between equal times as Netty's scheduler
         * does. Places, not a counter, so that it never wraps.
         */
        private byte scheduleOrder = START_ORDER;

        WriteChecks(WheelIdleStateHandler handler) {
            this.handler = handler;
        }

        /** A write completed. */
        @Override
        public void operationComplete(ChannelFuture future) {
            handler.writeObserved();
        }

        /** The check of {@code kind} was scheduled: it moves to the last place. */
        final void scheduled(int kind) {
            int was = place(kind);
            int order = 0;
            for (int k = IdleDeadlines.READER; k <= IdleDeadlines.ALL; k++) {
                int place = k == kind ? LAST_PLACE : place(k) > was ? place(k) - 1 : place(k);
                order |= place << 2 * k;
            }
            scheduleOrder = (byte) order;
        }

        /** Whether the check of {@code kind} was last scheduled before that of {@code other}. */
        final boolean scheduledBefore(int kind, int other) {
            return place(kind) < place(other);
        }

        private int place(int kind) {
            return scheduleOrder >>> 2 * kind & 3;
        }

        /** Records the outbound buffer as it is when the handler starts, with observeOutput. */
        void initOutputChanged(ChannelHandlerContext ctx) {
        }

        /**
         * Whether a non-first writer or all event is skipped because the outbound buffer made
         * progress; never without observeOutput.
         */
        boolean hasOutputChanged(ChannelHandlerContext ctx, boolean first) {
            return false;
        }
    }

    /** The writer and all checks with observeOutput: what it compares against, as Netty keeps it. */
    private static final class ObservedWriteChecks extends WriteChecks {
        private long lastChangeCheckTimeStamp;
        private int lastMessageHashCode;
        private long lastPendingWriteBytes;
        private long lastFlushProgress;

        ObservedWriteChecks(WheelIdleStateHandler handler) {
            super(handler);
        }

        @Override
        void initOutputChanged(ChannelHandlerContext ctx) {
            ChannelOutboundBuffer buf = ctx.channel().unsafe().outboundBuffer();
            if (buf != null) {
                lastMessageHashCode = System.identityHashCode(buf.current());
                lastPendingWriteBytes = buf.totalPendingWriteBytes();
                lastFlushProgress = buf.currentProgress();
            }
        }

        /**
         * Whether the outbound buffer changed since the last call (Netty issue 6150): a completed
         * write, another message at the head, other pending bytes, or flush progress. A first call
         * only records; it never reports a change, so first events are never skipped.
         */
        @Override
        boolean hasOutputChanged(ChannelHandlerContext ctx, boolean first) {
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

    /**
     * A handler's configuration: immutable, so one instance serves every handler configured
     * alike (one per builder, or one per distinct set of constructor arguments), and a handler
     * keeps one reference instead of the values.
     */
    private static final class Settings {
        /**
         * Recent settings of the Netty-shaped constructors, by their values. Racy on purpose: a
         * reader sees null, an older or a newer entry, each fully built (every field is final),
         * and a miss only costs a new instance.
         */
        private static final Settings[] INTERNED = new Settings[16];

        final boolean observeOutput;
        final long readerIdleTimeNanos;
        final long writerIdleTimeNanos;
        final long allIdleTimeNanos;
        /** Reader or all idleness is watched: reads count. */
        final boolean watchesReads;
        /** Writer or all idleness is watched: writes count. */
        final boolean watchesWrites;
        /** Where the timers go: per-event-loop wheels, or (when non-null) {@link #sharedTimer}. */
        final EventLoopWheels wheels;
        final WheelScheduler sharedTimer;
        /** Null when no meter registry was given. */
        final IdleEventCounters counters;

        Settings(boolean observeOutput, long readerIdleTimeNanos, long writerIdleTimeNanos, long allIdleTimeNanos,
                 EventLoopWheels wheels, WheelScheduler sharedTimer, IdleEventCounters counters) {
            this.observeOutput = observeOutput;
            this.readerIdleTimeNanos = readerIdleTimeNanos;
            this.writerIdleTimeNanos = writerIdleTimeNanos;
            this.allIdleTimeNanos = allIdleTimeNanos;
            this.watchesReads = readerIdleTimeNanos > 0 || allIdleTimeNanos > 0;
            this.watchesWrites = writerIdleTimeNanos > 0 || allIdleTimeNanos > 0;
            this.wheels = wheels;
            this.sharedTimer = sharedTimer;
            this.counters = counters;
        }

        /** Settings with the shared wheels and no metrics, as the Netty-shaped constructors give. */
        static Settings interned(boolean observeOutput, long readerIdleTimeNanos, long writerIdleTimeNanos,
                                 long allIdleTimeNanos) {
            int hash = Boolean.hashCode(observeOutput) + 31 * (Long.hashCode(readerIdleTimeNanos)
                    + 31 * (Long.hashCode(writerIdleTimeNanos) + 31 * Long.hashCode(allIdleTimeNanos)));
            int index = (hash ^ hash >>> 16) & (INTERNED.length - 1);
            Settings cached = INTERNED[index];
            if (cached != null && cached.observeOutput == observeOutput
                    && cached.readerIdleTimeNanos == readerIdleTimeNanos
                    && cached.writerIdleTimeNanos == writerIdleTimeNanos
                    && cached.allIdleTimeNanos == allIdleTimeNanos) {
                return cached;
            }
            Settings settings = new Settings(observeOutput, readerIdleTimeNanos, writerIdleTimeNanos, allIdleTimeNanos,
                    EventLoopWheels.shared(), null, null);
            INTERNED[index] = settings;
            return settings;
        }
    }

    /**
     * Settings of a {@link WheelIdleStateHandler}. Every check starts disabled. The setters are
     * not thread-safe; {@link #build()} only reads, so once the builder is configured (and safely
     * published) it may be called many times from any thread, say once per channel in a
     * {@code ChannelInitializer}, and the handlers share the settings and meters looked up once
     * here. Changing the builder afterwards does not change the handlers already built.
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
        /** What the last {@link #build()} used, until a setter changes something; null: none yet. */
        /** Rebuilt by every setter, so that {@link #build()} only reads. */
        private Settings settings;

        private Builder() {
            settings = newSettings();
        }

        /**
         * Reader idle time: zero or less disables the check; positive values are floored at 1 ms.
         *
         * @throws NullPointerException if {@code unit} is null
         */
        public Builder readerIdleTime(long time, TimeUnit unit) {
            this.readerIdleTimeNanos = idleNanos(time, unit);
            settings = newSettings();
            return this;
        }

        /** Writer idle time, as {@link #readerIdleTime}. */
        public Builder writerIdleTime(long time, TimeUnit unit) {
            this.writerIdleTimeNanos = idleNanos(time, unit);
            settings = newSettings();
            return this;
        }

        /** All idle time (neither read nor write), as {@link #readerIdleTime}. */
        public Builder allIdleTime(long time, TimeUnit unit) {
            this.allIdleTimeNanos = idleNanos(time, unit);
            settings = newSettings();
            return this;
        }

        /** Whether a draining outbound buffer keeps the writer from being idle; off by default. */
        public Builder observeOutput(boolean observeOutput) {
            this.observeOutput = observeOutput;
            settings = newSettings();
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
            settings = newSettings();
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
         * @throws NullPointerException if {@code timer} is null
         * @throws IllegalStateException if {@link #wheels} was chosen
         */
        public Builder timer(WheelScheduler timer) {
            Objects.requireNonNull(timer, "timer");
            if (wheelsChosen) {
                throw new IllegalStateException("choose either wheels(...) or timer(...), not both");
            }
            this.sharedTimer = timer;
            settings = newSettings();
            return this;
        }

        /**
         * Counts idle events in {@code registry}: counter {@code wheelbeat.idle.events}, tag
         * {@code state} = {@code reader}, {@code writer} or {@code all}. Without a registry there
         * are no metrics and no cost.
         *
         * @throws NullPointerException if {@code registry} is null
         */
        public Builder metrics(MeterRegistry registry) {
            this.counters = new IdleEventCounters(Objects.requireNonNull(registry, "registry"));
            settings = newSettings();
            return this;
        }

        /** Builds a handler for one channel. */
        public WheelIdleStateHandler build() {
            return new WheelIdleStateHandler(this);
        }

        private Settings newSettings() {
            return new Settings(observeOutput, readerIdleTimeNanos, writerIdleTimeNanos, allIdleTimeNanos,
                    wheels, sharedTimer, counters);
        }
    }
}
