package io.wheelbeat.netty.loop;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SingleThreadIoEventLoop;
import io.netty.channel.local.LocalIoHandler;
import io.netty.util.concurrent.Ticker;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A virtual clock shared by the test thread and one event loop: it moves only when the test
 * advances it, from any origin. Its {@link #initialNanoTime()} follows the system clock so that
 * {@code System.nanoTime() - initialNanoTime()} is the virtual reading, as Netty's {@code Ticker}
 * contract says ({@code nanoTime()} is the time since {@code initialNanoTime()}): the loop's I/O
 * wait, which Netty computes that way, then lasts the virtual delay (short) instead of spinning or
 * sleeping for ever; the test wakes the loop after each advance.
 */
final class LoopClock implements Ticker {

    /** How far {@link #runFor} moves the clock at a time. */
    static final long STEP = TimeUnit.MILLISECONDS.toNanos(50);

    private volatile long now;

    LoopClock(long origin) {
        this.now = origin;
    }

    void advance(long nanos) {
        now += nanos;
    }

    @Override
    public long initialNanoTime() {
        return System.nanoTime() - now;
    }

    @Override
    public long nanoTime() {
        return now;
    }

    @Override
    public void sleep(long delay, TimeUnit unit) {
        throw new UnsupportedOperationException("virtual time");
    }

    /** Netty's own loop (one thread, local transport) on this clock: the reference. */
    MultiThreadIoEventLoopGroup nettyGroup() {
        return nettyGroup(LocalIoHandler.newFactory());
    }

    /** Netty's own loop (one thread, the transport of {@code ioHandlerFactory}) on this clock. */
    MultiThreadIoEventLoopGroup nettyGroup(IoHandlerFactory ioHandlerFactory) {
        LoopClock clock = this;
        return new MultiThreadIoEventLoopGroup(1, ioHandlerFactory) {
            @Override
            protected IoEventLoop newChild(Executor executor, IoHandlerFactory factory, Object... args) {
                return new SingleThreadIoEventLoop(this, executor, factory) {
                    @Override
                    public Ticker ticker() {
                        return clock;
                    }
                };
            }
        };
    }

    /** The wheel loop (one thread, local transport) on this clock. */
    MultiThreadIoEventLoopGroup wheelGroup() {
        return wheelGroup(LocalIoHandler.newFactory());
    }

    /** The wheel loop (one thread, the transport of {@code ioHandlerFactory}) on this clock. */
    MultiThreadIoEventLoopGroup wheelGroup(IoHandlerFactory ioHandlerFactory) {
        LoopClock clock = this;
        return new MultiThreadIoEventLoopGroup(1, ioHandlerFactory) {
            @Override
            protected IoEventLoop newChild(Executor executor, IoHandlerFactory factory, Object... args) {
                return new WheelIoEventLoop(this, executor, factory, clock);
            }
        };
    }

    /**
     * Shuts {@code group} down: its quiet period is measured on this clock, so the clock moves on
     * until the loop ends.
     */
    void shutDown(EventLoopGroup group) throws InterruptedException {
        io.netty.util.concurrent.Future<?> terminated = group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
        while (!terminated.await(20, TimeUnit.MILLISECONDS)) {
            advance(TimeUnit.SECONDS.toNanos(1));
        }
    }

    /**
     * Moves the loop's clock {@code nanos} on, a {@link #STEP} at a time. After each step: a task scheduled
     * on the loop for that instant, which the wheel fires after every timer due by then (deadline
     * order, then scheduling order), so the due timers have run when it has; then plain tasks until
     * three turns in a row show no progress (a ping's delivery and its pong are tasks of their own).
     */
    void runFor(EventLoop loop, AtomicInteger progress, long nanos) throws Exception {
        for (long moved = 0; moved < nanos; moved += STEP) {
            // On the loop, between its tasks: a clock moved while a task runs would show that task
            // two readings of one instant, which real time never does so far apart.
            loop.submit(() -> advance(STEP)).sync();
            loop.submit(() -> loop.schedule(() -> {}, 0, TimeUnit.NANOSECONDS))
                    .get()
                    .get();
            int quiet = 0;
            int seen = -1;
            while (quiet < 3) {
                loop.submit(() -> {}).sync();
                int now = progress.get();
                quiet = now == seen ? quiet + 1 : 0;
                seen = now;
            }
        }
    }
}
