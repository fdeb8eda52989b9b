package io.wheelbeat.netty.idle;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.timeout.WriteTimeoutException;
import io.netty.handler.timeout.WriteTimeoutHandler;
import io.netty.util.concurrent.EventExecutor;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.TimerNode;
import io.wheelbeat.core.internal.checks.ConfigChecks;
import io.wheelbeat.netty.EventLoopWheels;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * A drop-in for Netty's {@link WriteTimeoutHandler} that allocates and schedules nothing per write:
 * a write whose promise is not done {@code timeout} after it was written calls
 * {@link #writeTimedOut}, once per such write in write order; by default that fires
 * {@link WriteTimeoutException#INSTANCE} and closes the channel, once. A timeout of zero or less
 * disables it; positive ones are floored at 1 ms. Void promises are replaced ({@code unvoid()}), as
 * Netty does. Not a subclass of Netty's handler.
 *
 * <p>Pending writes sit in a ring of (promise, time written) that one listener trims from its head;
 * one timer on the loop's wheel waits for the oldest deadline. A write that completes out of order
 * keeps its slot until the writes before it complete; it is never timed out.
 *
 * <p>One instance per channel, called on its context's executor; writes completing on another
 * thread are handed to it. Removed and added again, it times the writes of its new context only.
 * A channel moved to another event loop while active takes the timer along: it leaves the old
 * loop's wheel on {@code channelUnregistered}, and on {@code channelRegistered} the pending writes
 * are timed on the new loop's wheel, from the times they were written (writes made in between
 * too). It passes on every other inbound event untouched (Netty skips it for them).
 */
public class WheelWriteTimeoutHandler extends ChannelDuplexHandler {

    private static final long MIN_TIMEOUT_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final int INITIAL_CAPACITY = 4;
    private static final Function<EventExecutor, ExecutorDrivenWheel> SHARED_WHEELS =
            EventLoopWheels.shared()::wheelFor;

    private final long timeoutNanos;
    private final Function<EventExecutor, ExecutorDrivenWheel> wheels;
    private final TimeoutCloses closes;
    /** The pending writes of the context the handler is in, made by its first write there; null when removed. */
    private PendingWrites pending;

    private boolean closed;

    /**
     * Netty's {@code WriteTimeoutHandler(int)}.
     *
     * @param timeoutSeconds the write timeout in seconds; zero or less disables it
     */
    public WheelWriteTimeoutHandler(int timeoutSeconds) {
        this(timeoutSeconds, TimeUnit.SECONDS);
    }

    /**
     * Netty's {@code WriteTimeoutHandler(long, TimeUnit)}: positive timeouts are floored at 1 ms.
     *
     * @param timeout the write timeout; zero or less disables it
     * @param unit the unit of {@code timeout}
     * @throws NullPointerException if {@code unit} is null
     */
    public WheelWriteTimeoutHandler(long timeout, TimeUnit unit) {
        this(timeout, unit, SHARED_WHEELS, TimeoutCloses.firingException());
    }

    /**
     * As {@link #WheelWriteTimeoutHandler(long, TimeUnit)}.
     *
     * @param timeout the write timeout; zero disables it
     * @throws NullPointerException if {@code timeout} is null
     * @throws IllegalArgumentException if {@code timeout} is negative or over 292 years
     */
    public WheelWriteTimeoutHandler(Duration timeout) {
        this(timeout, TimeoutCloses.firingException());
    }

    /**
     * As {@link #WheelWriteTimeoutHandler(Duration)}, closing the way {@code closes} says
     * (quietly, counted).
     *
     * @param timeout the write timeout; zero disables it
     * @param closes how a timeout closes the channel
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code timeout} is negative or over 292 years
     */
    public WheelWriteTimeoutHandler(Duration timeout, TimeoutCloses closes) {
        this(
                ConfigChecks.nonNegativeNanos("timeout", timeout),
                TimeUnit.NANOSECONDS,
                SHARED_WHEELS,
                Objects.requireNonNull(closes, "closes"));
    }

    /** On the wheels {@code wheels} gives per event loop, for tests that drive a wheel themselves. */
    WheelWriteTimeoutHandler(long timeout, TimeUnit unit, Function<EventExecutor, ExecutorDrivenWheel> wheels) {
        this(timeout, unit, wheels, TimeoutCloses.firingException());
    }

    private WheelWriteTimeoutHandler(
            long timeout, TimeUnit unit, Function<EventExecutor, ExecutorDrivenWheel> wheels, TimeoutCloses closes) {
        Objects.requireNonNull(unit, "unit");
        this.timeoutNanos = timeout <= 0 ? 0 : Math.max(unit.toNanos(timeout), MIN_TIMEOUT_NANOS);
        this.wheels = wheels;
        this.closes = closes;
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        if (timeoutNanos <= 0) {
            ctx.write(msg, promise);
            return;
        }
        PendingWrites writes = pending;
        if (writes == null) {
            writes = pending = new PendingWrites(ctx, wheels.apply(ctx.executor()));
        }
        promise = promise.unvoid();
        long now = writes.wheel.ticker().getAsLong(); // before the write, as Netty schedules its task
        ctx.write(msg, promise);
        if (!promise.isDone()) {
            writes.add(promise, now);
        }
    }

    @Override
    public void channelUnregistered(ChannelHandlerContext ctx) throws Exception {
        if (pending != null) {
            pending.leave();
        }
        ctx.fireChannelUnregistered();
    }

    @Override
    public void channelRegistered(ChannelHandlerContext ctx) throws Exception {
        if (pending != null) {
            pending.arrive(wheels.apply(ctx.executor()));
        }
        ctx.fireChannelRegistered();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        // Added again later, the handler starts anew in its new context (and on its wheel), as
        // Netty's times each write in the context it was written in.
        if (pending != null) {
            pending.clear();
            pending = null;
        }
    }

    /**
     * A write timed out: fires {@link WriteTimeoutException#INSTANCE} (unless quiet) and closes,
     * the first time only.
     *
     * @param ctx the handler's context
     * @throws Exception to be fired through {@code exceptionCaught}
     */
    protected void writeTimedOut(ChannelHandlerContext ctx) throws Exception {
        if (!closed) {
            closed = true;
            closes.writeTimedOut(ctx, timeoutNanos);
        }
    }

    /**
     * The writes pending in one context, in the order written: a ring indexed by sequence number
     * {@code & (length - 1)}, touched on the context's executor only. Also the listener of every
     * write, the timer and the hand-over task.
     */
    private final class PendingWrites extends TimerNode implements ChannelFutureListener, Runnable {
        private final ChannelHandlerContext ctx;
        /** The wheel of the loop the channel is registered with. */
        private ExecutorDrivenWheel wheel;

        private ChannelPromise[] promises = new ChannelPromise[INITIAL_CAPACITY];
        private long[] writtenAt = new long[INITIAL_CAPACITY];
        /** Sequence number of the oldest write still in the ring. */
        private long head;
        /** Sequence number the next write gets. */
        private long tail;
        /** Writes before this sequence number have been timed out already. */
        private long timedOutBefore;

        PendingWrites(ChannelHandlerContext ctx, ExecutorDrivenWheel wheel) {
            this.ctx = ctx;
            this.wheel = wheel;
        }

        void add(ChannelPromise promise, long now) {
            if (tail - head == promises.length) {
                grow();
            }
            int i = index(tail++);
            promises[i] = promise;
            writtenAt[i] = now;
            promise.addListener(this);
            if (!isPending() && ctx.channel().isRegistered()) { // on no loop: arrive() times it
                wheel.scheduleAt(this, now + timeoutNanos);
            }
        }

        /** The channel leaves its loop: the timer leaves that loop's wheel, the writes stay. */
        void leave() {
            if (isPending()) {
                wheel.cancel(this);
            }
        }

        /** The channel is on a loop again: the timer checks the writes at once, then waits for the oldest. */
        void arrive(ExecutorDrivenWheel wheel) {
            this.wheel = wheel;
            if (head != tail && !isPending()) {
                wheel.scheduleAt(this, wheel.ticker().getAsLong());
            }
        }

        /** The handler left the context: no timeout falls here any more. */
        void clear() {
            leave();
            for (; head != tail; head++) {
                promises[index(head)] = null;
            }
            timedOutBefore = head;
        }

        private void grow() {
            int length = promises.length;
            ChannelPromise[] biggerPromises = new ChannelPromise[2 * length];
            long[] biggerWrittenAt = new long[2 * length];
            for (long seq = head; seq != tail; seq++) {
                int from = (int) (seq & (length - 1));
                int to = (int) (seq & (2 * length - 1));
                biggerPromises[to] = promises[from];
                biggerWrittenAt[to] = writtenAt[from];
            }
            promises = biggerPromises;
            writtenAt = biggerWrittenAt;
        }

        private int index(long seq) {
            return (int) (seq & (promises.length - 1));
        }

        /** A write completed, on whatever thread completed it. */
        @Override
        public void operationComplete(ChannelFuture future) {
            EventExecutor executor = ctx.executor();
            if (executor.inEventLoop()) {
                dropCompleted();
            } else {
                executor.execute(this); // the promise is done: run() drops it there
            }
        }

        /** A write completed on another thread, handed over to the context's executor. */
        @Override
        public void run() {
            dropCompleted();
        }

        /** Drops the completed writes that head the ring. */
        private void dropCompleted() {
            while (head != tail && promises[index(head)].isDone()) {
                promises[index(head++)] = null;
            }
            if (timedOutBefore - head < 0) {
                timedOutBefore = head;
            }
        }

        /** The timer fell due: times out the due writes in order, then waits for the oldest one left. */
        @Override
        protected void expire() {
            long now = wheel.ticker().getAsLong();
            dropCompleted();
            for (long seq = timedOutBefore; seq != tail; seq = timedOutBefore) {
                int i = index(seq);
                if (promises[i] == null || promises[i].isDone()) {
                    timedOutBefore = seq + 1; // completed out of order: never times out
                    continue;
                }
                long deadline = writtenAt[i] + timeoutNanos;
                if (deadline - now > 0) {
                    wheel.scheduleAt(this, deadline);
                    return;
                }
                timedOutBefore = seq + 1;
                try {
                    writeTimedOut(ctx);
                } catch (Throwable t) {
                    ctx.fireExceptionCaught(t);
                }
            }
        }
    }

    @Override
    public String toString() {
        PendingWrites writes = pending;
        return getClass().getSimpleName() + "(" + timeoutNanos + " ns"
                + (writes == null ? "" : ", " + writes.ctx.channel()) + ")";
    }
}
