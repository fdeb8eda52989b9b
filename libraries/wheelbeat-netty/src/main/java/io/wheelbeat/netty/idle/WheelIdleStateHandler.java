package io.wheelbeat.netty.idle;

import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelPromise;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.EventExecutor;
import io.wheelbeat.core.TimerNode;
import io.wheelbeat.core.WheelScheduler;
import io.wheelbeat.core.WheelTimeout;
import io.wheelbeat.core.internal.checks.ConfigChecks;
import io.wheelbeat.netty.ChannelTimerHandler;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.internal.ContextHolder;
import io.wheelbeat.netty.internal.HandlerFields;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
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
 *   <li>A channel moved to another event loop while active takes the checks along: they keep
 *       their deadlines and the times of the last read and write ({@link ChannelTimerHandler}).</li>
 *   <li>{@link #channelIdle} and {@link #newIdleStateEvent} may be overridden; their exceptions
 *       go to {@code exceptionCaught}.</li>
 * </ul>
 *
 * <h2>Timing and cost</h2>
 * Netty's algorithm: traffic only stamps the time; each watched check waits on a timer node of its
 * own (the reader's is the handler itself), re-armed without allocating. A node per check keeps
 * Netty's order among checks of several channels falling due at one instant. Checks run when and
 * in the order Netty's tasks would. Under
 * {@code EmbeddedChannel}, {@code advanceTimeBy(...)} and {@code runScheduledPendingTasks()} drive
 * it as they drive Netty's. On a shared timer ({@link Builder#timer}) each wake hops to the loop
 * and allocates a timeout handle.
 *
 * <h2>Thread rules</h2>
 * One instance per channel; methods run on the handler's executor, except
 * {@link #resetReadTimeout()} and {@link #resetWriteTimeout()}, which may be called from any thread
 * (after the executor has shut down they do nothing).
 */
public class WheelIdleStateHandler extends ChannelTimerHandler {

    private static final Logger log = LoggerFactory.getLogger(WheelIdleStateHandler.class);
    private static final long MIN_TIMEOUT_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    // The handler's flags (HandlerFields): Netty's reading and firstXxxIdleEvent (inverted), whether
    // reads are watched, and the reader idle time when it fits in the rest, else in the extras.
    private static final int READING = 1;
    private static final int READER_FIRED = 2;
    private static final int WRITER_FIRED = 4;
    private static final int ALL_FIRED = 8;
    private static final int WATCHES_READS = 16;
    private static final int IDLE_SHIFT = 5;
    /** An idle time in the flags: a count of 2^IDLE_COUNT_BITS - 1 at most, of one of these units. */
    private static final long[] IDLE_UNIT_NANOS = {1, 1_000, 1_000_000, 1_000_000_000};

    private static final int IDLE_UNIT_BITS = 2;
    private static final int IDLE_COUNT_BITS = HandlerFields.FLAG_BITS - IDLE_SHIFT - IDLE_UNIT_BITS;

    /**
     * The one field of its own: the time of the last completed read, as Netty keeps it. Everything
     * else a reader-only handler on the shared wheels needs is in the base's two fields.
     */
    private long lastReadTime;

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
        this(
                observeOutput,
                idleNanos(readerIdleTime, unit),
                idleNanos(writerIdleTime, unit),
                idleNanos(allIdleTime, unit),
                EventLoopWheels.shared(),
                null,
                null);
    }

    /**
     * A handler with a factory's settings; for subclasses that need the builder's options.
     *
     * @param factory the settings, from the builder
     */
    protected WheelIdleStateHandler(Factory factory) {
        this(
                factory.observeOutput,
                factory.readerIdleTimeNanos,
                factory.writerIdleTimeNanos,
                factory.allIdleTimeNanos,
                factory.wheels,
                factory.timer,
                factory.extras);
    }

    /** Idle times in nanoseconds, 0 (not watched) or at least 1 ms. */
    private WheelIdleStateHandler(
            boolean observeOutput,
            long readerIdleTimeNanos,
            long writerIdleTimeNanos,
            long allIdleTimeNanos,
            EventLoopWheels wheels,
            WheelScheduler timer,
            Extras metered) {
        super(wheels);
        int idleCode = idleCode(readerIdleTimeNanos);
        // Netty's one write listener: the writer's check, else the all check; it observes the output.
        WriteCheck writerCheck = writerIdleTimeNanos == 0
                ? null
                : observeOutput
                        ? new ObservingCheck(this, writerIdleTimeNanos)
                        : new WriteCheck(this, writerIdleTimeNanos);
        IdleCheck allCheck = allIdleTimeNanos == 0
                ? null
                : writerCheck != null
                        ? new IdleCheck(this, allIdleTimeNanos)
                        : observeOutput
                                ? new ObservingCheck(this, allIdleTimeNanos)
                                : new WriteCheck(this, allIdleTimeNanos);
        if (!flagsHold(readerIdleTimeNanos) && metered == null) {
            metered = new Extras(null, readerIdleTimeNanos); // a factory's carries it already
        }
        Object extras = timer == null ? metered : new SharedTimeouts(timer, metered);
        if (writerCheck != null || allCheck != null || extras != null || wheels != EventLoopWheels.shared()) {
            HandlerFields.hold(this, new Checks(wheels, writerCheck, allCheck, extras));
        }
        boolean watchesReads = readerIdleTimeNanos > 0 || allCheck != null;
        HandlerFields.flags(this, idleCode << IDLE_SHIFT | (watchesReads ? WATCHES_READS : 0));
    }

    /** Whether the flags hold {@code nanos} exactly, or it is 0: else an {@link Extras} carries it. */
    private static boolean flagsHold(long nanos) {
        return nanos == 0 || idleCode(nanos) != 0;
    }

    /** The reader idle time as kept in the flags, or 0 if it does not fit there exactly (or is 0). */
    private static int idleCode(long nanos) {
        for (int unit = 0; unit < IDLE_UNIT_NANOS.length && nanos > 0; unit++) {
            long count = nanos / IDLE_UNIT_NANOS[unit];
            if (count * IDLE_UNIT_NANOS[unit] == nanos && count < 1L << IDLE_COUNT_BITS) {
                return (int) count << IDLE_UNIT_BITS | unit;
            }
        }
        return 0;
    }

    /** 0 when not watched. */
    private long readerIdleTimeNanos() {
        int code = flags() >>> IDLE_SHIFT;
        if (code != 0) {
            return (code >>> IDLE_UNIT_BITS) * IDLE_UNIT_NANOS[code & (1 << IDLE_UNIT_BITS) - 1];
        }
        Extras extras = extras();
        return extras == null ? 0 : extras.readerIdleTimeNanos;
    }

    private int flags() {
        return HandlerFields.flags(this);
    }

    private void flags(int flags) {
        HandlerFields.flags(this, flags);
    }

    /** Null for a reader-only handler on the shared wheels: then the context is held directly. */
    private Checks checks() {
        return HandlerFields.context(this) instanceof Checks checks ? checks : null;
    }

    /** Null when the check is not watched. */
    private WriteCheck writerCheck() {
        Checks checks = checks();
        return checks == null ? null : checks.writerCheck;
    }

    /** Null when not watched; a {@link WriteCheck} when the writer is not. */
    private IdleCheck allCheck() {
        Checks checks = checks();
        return checks == null ? null : checks.allCheck;
    }

    /**
     * Null for Netty's constructors; else the factory's meters and reader idle time, shared by its
     * handlers, or on a shared timer this handler's timeouts, which carry them too.
     */
    private Extras extras() {
        Checks checks = checks();
        Object extras = checks == null ? null : checks.extras;
        return extras instanceof SharedTimeouts shared ? shared.settings : (Extras) extras;
    }

    /** Null unless built with a shared timer. */
    private SharedTimeouts sharedTimeouts() {
        Checks checks = checks();
        return checks != null && checks.extras instanceof SharedTimeouts shared ? shared : null;
    }

    /** A builder's idle time in nanoseconds: zero disables the check; positive values are floored at 1 ms. */
    private static long idleNanos(String name, Duration time) {
        long nanos = ConfigChecks.nonNegativeNanos(name, time);
        return nanos == 0 ? 0 : Math.max(nanos, MIN_TIMEOUT_NANOS);
    }

    private static long idleNanos(long time, TimeUnit unit) {
        Objects.requireNonNull(unit, "unit");
        return time <= 0 ? 0 : Math.max(unit.toNanos(time), MIN_TIMEOUT_NANOS);
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
        return TimeUnit.NANOSECONDS.toMillis(readerIdleTimeNanos());
    }

    /**
     * Returns the writer idle time in milliseconds (0: disabled).
     *
     * @return the writer idle time in milliseconds
     */
    public long getWriterIdleTimeInMillis() {
        WriteCheck writerCheck = writerCheck();
        return writerCheck == null ? 0 : TimeUnit.NANOSECONDS.toMillis(writerCheck.idleTimeNanos);
    }

    /**
     * Returns the all idle time in milliseconds (0: disabled).
     *
     * @return the all idle time in milliseconds
     */
    public long getAllIdleTimeInMillis() {
        IdleCheck allCheck = allCheck();
        return allCheck == null ? 0 : TimeUnit.NANOSECONDS.toMillis(allCheck.idleTimeNanos);
    }

    // ---------------------------------------------------------------- lifecycle (ChannelTimerHandler's)

    /** Netty's {@code initialize}. */
    @Override
    protected final void onStart(ChannelHandlerContext ctx, long now) {
        SharedTimeouts shared = sharedTimeouts();
        if (shared != null) {
            shared.start(ctx.executor());
        }
        // On a move to another loop the traffic's times stand; the checks run at once and re-arm
        // for what is left (on the loop's wheel the base restores their deadlines instead).
        boolean moving = HandlerFields.moving(this);
        if (!moving) {
            lastReadTime = now;
            WriteCheck listener = writeListener();
            if (listener != null) {
                listener.lastWriteTime = now;
                if (listener instanceof ObservingCheck observing) {
                    observing.start(ctx);
                }
            }
        }
        // Netty schedules its tasks in this order, which breaks ties between equal deadlines.
        long readerIdleTimeNanos = readerIdleTimeNanos();
        if (readerIdleTimeNanos > 0) {
            arm(this, moving ? now : now + readerIdleTimeNanos);
        }
        WriteCheck writerCheck = writerCheck();
        IdleCheck allCheck = allCheck();
        if (writerCheck != null) {
            arm(writerCheck, moving ? now : now + writerCheck.idleTimeNanos);
        }
        if (allCheck != null) {
            arm(allCheck, moving ? now : now + allCheck.idleTimeNanos);
        }
    }

    /** Netty's {@code destroy}. */
    @Override
    protected final void onStop() {
        disarmAll();
    }

    private void disarmAll() {
        disarm(this);
        disarm(writerCheck());
        disarm(allCheck());
    }

    // ---------------------------------------------------------------- traffic: stamps only

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        int flags = flags();
        if ((flags & WATCHES_READS) != 0) {
            flags(flags & ~(READER_FIRED | ALL_FIRED) | READING);
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
        int flags = flags();
        if ((flags & READING) != 0) { // only ever set when reads are watched
            flags(flags & ~READING);
            if (running()) {
                lastReadTime = now();
            }
        }
        ctx.fireChannelReadComplete();
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        WriteCheck listener = writeListener();
        if (listener != null) {
            ctx.write(msg, promise.unvoid()).addListener(listener);
        } else {
            ctx.write(msg, promise);
        }
    }

    /** Netty's {@code resetReadTimeout()}: counts a read now. Any thread (handed to the executor). */
    public void resetReadTimeout() {
        if ((flags() & WATCHES_READS) != 0) {
            if (handedOver(this::resetReadTimeout)) {
                return;
            }
            if (running()) {
                lastReadTime = now();
            }
            // As Netty's: a batch in progress counts as complete.
            flags(flags() & ~(READING | READER_FIRED | ALL_FIRED));
        }
    }

    /** Netty's {@code resetWriteTimeout()}: counts a write now. Any thread (handed to the executor). */
    public void resetWriteTimeout() {
        if (writeListener() != null) {
            if (handedOver(this::resetWriteTimeout)) {
                return;
            }
            writeObserved();
        }
    }

    /** A write completed, or the write timeout was reset. */
    private void writeObserved() {
        if (running()) {
            writeListener().lastWriteTime = now();
        }
        flags(flags() & ~(WRITER_FIRED | ALL_FIRED));
    }

    /** Netty's one write listener: the writer's check, else the all check; null when writes are not watched. */
    private WriteCheck writeListener() {
        Checks checks = checks();
        return checks == null ? null : checks.writerCheck != null ? checks.writerCheck : (WriteCheck) checks.allCheck;
    }

    /** Off the executor: hands {@code again} to it (one shut down refuses it) and returns true. */
    private boolean handedOver(Runnable again) {
        ChannelHandlerContext ctx = ctx();
        if (ctx == null || ctx.executor().inEventLoop()) {
            return false;
        }
        try {
            ctx.executor().execute(again);
        } catch (RejectedExecutionException shutDown) {
            // As Netty's reset, which only stamps a time: nothing to report.
        }
        return true;
    }

    // ---------------------------------------------------------------- checks (Netty's idle tasks)

    /** The reader check's timer fired. */
    @Override
    protected final void expire() {
        checkFired(this);
    }

    private void checkFired(TimerNode check) {
        if (running()) {
            runCheck(check, now());
        }
    }

    /** Netty's idle task of {@code check} (this handler for the reader), its timer fired at {@code now}. */
    private void runCheck(TimerNode check, long now) {
        if (!ctx().channel().isOpen()) {
            disarmAll(); // as Netty's task: a closed channel stops it (and fires nothing after)
            return;
        }
        IdleState idle;
        long idleTime;
        long lastTraffic;
        byte bit;
        if (check == this) {
            idle = IdleState.READER_IDLE;
            idleTime = readerIdleTimeNanos();
            lastTraffic = lastReadTime;
            bit = READER_FIRED;
        } else if (check instanceof WriteCheck writerCheck && writerCheck == writerCheck()) {
            idle = IdleState.WRITER_IDLE;
            idleTime = writerCheck.idleTimeNanos;
            lastTraffic = writerCheck.lastWriteTime;
            bit = WRITER_FIRED;
        } else {
            idle = IdleState.ALL_IDLE;
            idleTime = ((IdleCheck) check).idleTimeNanos;
            long lastWriteTime = writeListener().lastWriteTime;
            lastTraffic = lastWriteTime - lastReadTime > 0 ? lastWriteTime : lastReadTime;
            bit = ALL_FIRED;
        }
        long nextDelay = idleTime;
        int flags = flags();
        if (idle == IdleState.WRITER_IDLE || (flags & READING) == 0) {
            // Traffic stamped after {@code now} (by an event fired in this same run) counts as now.
            nextDelay -= Math.max(0, now - lastTraffic);
        }
        if (nextDelay > 0) {
            arm(check, now + nextDelay);
            return;
        }
        arm(check, now + idleTime);
        boolean first = (flags & bit) == 0;
        flags(flags | bit);
        ChannelHandlerContext ctx = ctx();
        try {
            if (idle != IdleState.READER_IDLE
                    && writeListener() instanceof ObservingCheck observing
                    && observing.hasOutputChanged(ctx, first)) {
                return;
            }
            IdleStateEvent event = newIdleStateEvent(idle, first);
            Extras extras = extras();
            if (extras != null && extras.counters != null) {
                extras.counters.increment(idle);
            }
            channelIdle(ctx, event);
        } catch (Throwable t) {
            ctx.fireExceptionCaught(t);
        }
    }

    /** Netty's {@code schedule(...)}: on the loop's wheel a re-arm, allocation free. */
    private void arm(TimerNode check, long at) {
        SharedTimeouts shared = sharedTimeouts();
        if (shared != null) {
            shared.arm(check, at - now());
        } else {
            scheduleAt(check, at);
        }
    }

    private void disarm(TimerNode check) {
        if (check == null) {
            return;
        }
        SharedTimeouts shared = sharedTimeouts();
        if (shared != null) {
            shared.disarm(check);
        } else {
            cancel(check);
        }
    }

    /**
     * The writer's or the all check's timer (Netty's {@code WriterIdleTimeoutTask} and sibling), re-armed
     * for the channel's life.
     */
    // Static, holding the handler explicitly: an inner subclass of an inner class would hold it twice.
    private static class IdleCheck extends TimerNode {
        final WheelIdleStateHandler handler;
        final long idleTimeNanos;

        IdleCheck(WheelIdleStateHandler handler, long idleTimeNanos) {
            this.handler = handler;
            this.idleTimeNanos = idleTimeNanos;
        }

        @Override
        protected void expire() {
            handler.checkFired(this);
        }
    }

    /** The writer's check, else the all check: Netty's one write listener, keeping the last write's time. */
    private static class WriteCheck extends IdleCheck implements ChannelFutureListener {
        long lastWriteTime;

        WriteCheck(WheelIdleStateHandler handler, long idleTimeNanos) {
            super(handler, idleTimeNanos);
        }

        /** A write completed. */
        @Override
        public void operationComplete(ChannelFuture future) {
            handler.writeObserved();
        }
    }

    /**
     * What a handler holds beside its context and its writer and all checks, when it has any of
     * them or wheels other than the shared ones.
     */
    private static final class Checks extends ContextHolder {
        /** Null when the check is not watched. */
        final WriteCheck writerCheck;
        /** Null when not watched; a {@link WriteCheck} when the writer is not. */
        final IdleCheck allCheck;
        /**
         * Null unless built with meters or a shared timer, or the reader idle time does not fit the
         * flags: the {@link Extras}, or on a shared timer this handler's timeouts, which hold them.
         */
        final Object extras;

        Checks(EventLoopWheels wheels, WriteCheck writerCheck, IdleCheck allCheck, Object extras) {
            super(wheels);
            this.writerCheck = writerCheck;
            this.allCheck = allCheck;
            this.extras = extras;
        }
    }

    /** The builder's options beyond Netty's that a handler reads, and a reader idle time the flags cannot hold. */
    private static final class Extras {
        /** Null: no metrics. */
        final IdleEventCounters counters;
        /** When not in the handler's flags; else unused. */
        final long readerIdleTimeNanos;

        Extras(IdleEventCounters counters, long readerIdleTimeNanos) {
            this.counters = counters;
            this.readerIdleTimeNanos = readerIdleTimeNanos;
        }
    }

    /** The checks' timeouts on a timer shared across loops; the task of all three, told apart by handle. */
    private final class SharedTimeouts implements Consumer<WheelTimeout> {
        /** Null: no metrics, and the reader idle time fits the flags. */
        final Extras settings;

        private final WheelScheduler timer;
        private EventExecutor executor;

        private WheelTimeout readerTimeout;
        private WheelTimeout writerTimeout;
        private WheelTimeout allTimeout;

        SharedTimeouts(WheelScheduler timer, Extras settings) {
            this.settings = settings;
            this.timer = timer;
        }

        void start(EventExecutor executor) {
            this.executor = executor;
        }

        void arm(TimerNode check, long delayNanos) {
            disarm(check);
            setTimeout(check, timer.newTimeout(this, delayNanos));
        }

        void disarm(TimerNode check) {
            WheelTimeout timeout = timeout(check);
            if (timeout != null) {
                timeout.cancel();
                setTimeout(check, null);
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
            TimerNode check = expired == readerTimeout
                    ? WheelIdleStateHandler.this
                    : expired == writerTimeout ? writerCheck() : expired == allTimeout ? allCheck() : null;
            if (check != null && running()) {
                setTimeout(check, null);
                runCheck(check, now());
            }
        }

        private WheelTimeout timeout(TimerNode check) {
            return check == writerCheck() ? writerTimeout : check == allCheck() ? allTimeout : readerTimeout;
        }

        private void setTimeout(TimerNode check, WheelTimeout timeout) {
            if (check == writerCheck()) {
                writerTimeout = timeout;
            } else if (check == allCheck()) {
                allTimeout = timeout;
            } else {
                readerTimeout = timeout;
            }
        }
    }

    /** With observeOutput, the write listener's check: it keeps the outbound buffer as last seen, as Netty does. */
    private static final class ObservingCheck extends WriteCheck {
        private long lastChangeCheckTimeStamp;
        private int lastMessageHashCode;
        private long lastPendingWriteBytes;
        private long lastFlushProgress;

        ObservingCheck(WheelIdleStateHandler handler, long idleTimeNanos) {
            super(handler, idleTimeNanos);
        }

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
        boolean hasOutputChanged(ChannelHandlerContext ctx, boolean first) {
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
        ChannelHandlerContext ctx = ctx();
        WriteCheck writerCheck = writerCheck();
        IdleCheck allCheck = allCheck();
        return getClass().getSimpleName() + "(reader " + readerIdleTimeNanos() + " ns, writer "
                + (writerCheck == null ? 0 : writerCheck.idleTimeNanos) + " ns, all "
                + (allCheck == null ? 0 : allCheck.idleTimeNanos) + " ns" + (ctx == null ? "" : ", " + ctx.channel())
                + ")";
    }

    /** Makes handlers that share its immutable settings and meters. Thread-safe. */
    public static final class Factory {
        private final boolean observeOutput;
        private final long readerIdleTimeNanos;
        private final long writerIdleTimeNanos;
        private final long allIdleTimeNanos;
        private final EventLoopWheels wheels;
        /** Null: the loop's wheel. */
        private final WheelScheduler timer;
        /** Null: no metrics and the reader idle time fits the flags; else one for all the factory's handlers. */
        private final Extras extras;

        private Factory(Builder builder) {
            this.observeOutput = builder.observeOutput;
            this.readerIdleTimeNanos = builder.readerIdleTimeNanos;
            this.writerIdleTimeNanos = builder.writerIdleTimeNanos;
            this.allIdleTimeNanos = builder.allIdleTimeNanos;
            this.wheels = builder.wheels;
            this.timer = builder.sharedTimer;
            this.extras = builder.counters == null && flagsHold(readerIdleTimeNanos)
                    ? null
                    : new Extras(builder.counters, readerIdleTimeNanos);
        }

        /**
         * Returns a new handler for one channel.
         *
         * @return a new handler, for one channel only
         */
        public WheelIdleStateHandler newHandler() {
            return new WheelIdleStateHandler(this);
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
            this.readerIdleTimeNanos = idleNanos("readerIdleTime", time);
            return this;
        }

        /**
         * Writer idle time, as {@link #readerIdleTime}.
         *
         * @param time the time without a write
         * @return this builder
         */
        public Builder writerIdleTime(Duration time) {
            this.writerIdleTimeNanos = idleNanos("writerIdleTime", time);
            return this;
        }

        /**
         * All idle time (neither read nor write), as {@link #readerIdleTime}.
         *
         * @param time the time without a read or a write
         * @return this builder
         */
        public Builder allIdleTime(Duration time) {
            this.allIdleTimeNanos = idleNanos("allIdleTime", time);
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
            return new Factory(this);
        }
    }
}
