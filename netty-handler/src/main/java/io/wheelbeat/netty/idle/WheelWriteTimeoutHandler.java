package io.wheelbeat.netty.idle;

import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.handler.timeout.WriteTimeoutException;
import io.netty.handler.timeout.WriteTimeoutHandler;
import io.netty.util.concurrent.EventExecutor;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.TimerNode;
import io.wheelbeat.netty.EventLoopWheels;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * A drop-in replacement for Netty's {@link WriteTimeoutHandler} that neither allocates nor
 * schedules a task per write: when a write has not completed (its promise is not done) within the
 * timeout of being written, it fires {@link WriteTimeoutException#INSTANCE} through
 * {@code exceptionCaught} and closes the channel, once, at the moment Netty's does.
 * <pre>{@code
 * // was: pipeline.addLast("writeTimeout", new WriteTimeoutHandler(30));
 * pipeline.addLast("writeTimeout", new WheelWriteTimeoutHandler(30));
 * }</pre>
 *
 * <h2>Semantics (Netty's, reproduced)</h2>
 * Each write passing through the handler is timed from the moment it is written (flushed or not)
 * until its promise completes, successfully or not. A write still pending {@code timeout} after it
 * was written times out: {@link #writeTimedOut} is called then, once per write that times out, in
 * the order they were written, and by default fires the exception and closes the channel the first
 * time. A write whose promise is done when {@code ctx.write} returns is never timed. A timeout of
 * zero or less disables the handler (writes pass through untouched); positive timeouts are floored
 * at 1 ms. Void promises are replaced by real ones ({@code unvoid()}), as Netty's handler does;
 * that is Netty's allocation, made only for callers that pass a void promise. Writes made by
 * handlers nearer the head do not pass through it and are not timed, as with Netty's.
 *
 * <h2>How, and what it costs</h2>
 * Netty's handler schedules one task per write on the event loop (a task object, a listener and
 * a priority-queue insert) and cancels it when the write completes. This one keeps the pending
 * writes in a ring of (promise, time written), one shared listener drops completed writes from
 * its head, and a single timer on the loop's shared wheel waits for the oldest pending write's
 * deadline: it is armed when a write finds it idle, and when it fires it times out the writes that
 * are due or re-arms for the oldest one still pending (a write that completed meanwhile is skipped);
 * with nothing pending it stays idle. The timer therefore wakes at the moment Netty's task for that
 * write would run, at most once per timeout period while writes keep completing, and writes touch
 * only the ring: a clock read and two stores (Netty reads the clock per write too). The ring grows
 * by doubling to the largest number of writes ever pending at once on the channel and is then
 * reused; it holds the promises of pending writes only, never their messages.
 *
 * <p>The one difference: a write that completes out of order (after a later one) leaves its slot
 * in the ring until every write before it has completed; it is never timed out, as with Netty's.
 *
 * <p>It is not a subclass of Netty's {@code WriteTimeoutHandler}: code that looks the handler up
 * by that class must look up this one.
 *
 * <h2>Thread rules</h2>
 * One instance per channel (not {@code @Sharable}); every method runs on the channel's event loop.
 */
public class WheelWriteTimeoutHandler extends ChannelOutboundHandlerAdapter {

    private static final long MIN_TIMEOUT_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final int INITIAL_CAPACITY = 4;
    private static final Function<EventExecutor, ExecutorDrivenWheel> SHARED_WHEELS = EventLoopWheels.shared()::wheelFor;

    private final long timeoutNanos;
    private final Function<EventExecutor, ExecutorDrivenWheel> wheels;
    /** The listener of every write and the timer: one object per handler. */
    private final Callbacks callbacks = new Callbacks();

    private ChannelHandlerContext ctx;
    private ExecutorDrivenWheel wheel;
    private boolean closed;

    // The pending writes, in the order written: a ring indexed by sequence number & (length - 1).
    private ChannelPromise[] promises;
    private long[] writtenAt;
    /** Sequence number of the oldest write still in the ring. */
    private long head;
    /** Sequence number the next write gets. */
    private long tail;
    /** Writes before this sequence number have been timed out already. */
    private long timedOutBefore;

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
        this(timeout, unit, SHARED_WHEELS);
    }

    /** On the wheels {@code wheels} gives per event loop, for tests that drive a wheel themselves. */
    WheelWriteTimeoutHandler(long timeout, TimeUnit unit, Function<EventExecutor, ExecutorDrivenWheel> wheels) {
        Objects.requireNonNull(unit, "unit");
        this.timeoutNanos = timeout <= 0 ? 0 : Math.max(unit.toNanos(timeout), MIN_TIMEOUT_NANOS);
        this.wheels = wheels;
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        if (timeoutNanos <= 0) {
            ctx.write(msg, promise);
            return;
        }
        if (wheel == null) {
            this.ctx = ctx;
            this.wheel = wheels.apply(ctx.executor());
        }
        promise = promise.unvoid();
        long now = wheel.ticker().nanoTime(); // before the write, as Netty schedules its task
        ctx.write(msg, promise);
        if (!promise.isDone()) {
            add(promise, now);
        }
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (callbacks.isPending()) {
            wheel.cancel(callbacks);
        }
        for (; head != tail; head++) {
            promises[index(head)] = null;
        }
        timedOutBefore = head;
    }

    private void add(ChannelPromise promise, long now) {
        if (promises == null) {
            promises = new ChannelPromise[INITIAL_CAPACITY];
            writtenAt = new long[INITIAL_CAPACITY];
        } else if (tail - head == promises.length) {
            grow();
        }
        int i = index(tail++);
        promises[i] = promise;
        writtenAt[i] = now;
        promise.addListener(callbacks);
        if (!callbacks.isPending()) {
            wheel.scheduleAt(callbacks, now + timeoutNanos);
        }
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

    /** A write completed: drops it and the completed writes after it while they head the ring. */
    private void dropCompleted() {
        while (head != tail && promises[index(head)].isDone()) {
            promises[index(head++)] = null;
        }
        if (timedOutBefore - head < 0) {
            timedOutBefore = head;
        }
    }

    /**
     * The timer fell due, on the event loop: times out every pending write that is due, in the
     * order written, then waits for the oldest one left, if any.
     */
    private void timerFellDue() {
        long now = wheel.ticker().nanoTime();
        dropCompleted();
        for (long seq = timedOutBefore; seq != tail; seq = timedOutBefore) {
            int i = index(seq);
            if (promises[i] == null || promises[i].isDone()) {
                timedOutBefore = seq + 1; // completed out of order: never times out
                continue;
            }
            long deadline = writtenAt[i] + timeoutNanos;
            if (deadline - now > 0) {
                wheel.scheduleAt(callbacks, deadline);
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

    /**
     * Called when a write timed out: fires {@link WriteTimeoutException#INSTANCE} and closes the
     * channel, the first time only, as Netty's handler does. May be overridden.
     *
     * @param ctx the handler's context
     * @throws Exception to be fired through {@code exceptionCaught}
     */
    protected void writeTimedOut(ChannelHandlerContext ctx) throws Exception {
        if (!closed) {
            ctx.fireExceptionCaught(WriteTimeoutException.INSTANCE);
            ctx.close();
            closed = true;
        }
    }

    /** Drops completed writes from the ring (one listener for every write), and runs the timer's checks. */
    private final class Callbacks extends TimerNode implements ChannelFutureListener {
        @Override
        public void operationComplete(ChannelFuture future) {
            dropCompleted();
        }

        @Override
        protected void expire() {
            timerFellDue();
        }
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "(" + timeoutNanos + " ns" + (ctx == null ? "" : ", " + ctx.channel()) + ")";
    }
}
