package io.wheelbeat.netty.loop;

import io.netty.channel.IoEventLoop;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadFactory;

/**
 * Netty 4.2's {@link MultiThreadIoEventLoopGroup} whose loops keep every scheduled task on a
 * hierarchical timing wheel instead of a binary heap: {@code schedule(...)} and a cancel are O(1),
 * whoever schedules (Netty's {@code IdleStateHandler}, {@code ReadTimeoutHandler},
 * {@code WriteTimeoutHandler}, connect timeouts, HTTP/2, gRPC-java, Reactor Netty). A drop-in:
 * <pre>{@code new MultiThreadIoEventLoopGroup(n, NioIoHandler.newFactory())}</pre> becomes
 * <pre>{@code new WheelIoEventLoopGroup(n, NioIoHandler.newFactory())}</pre> for any
 * {@link IoHandlerFactory} (NIO, epoll, io_uring, local).
 *
 * <h2>Contract</h2>
 * Netty's, unchanged: {@code schedule(Runnable|Callable, delay, unit)},
 * {@code scheduleAtFixedRate}, {@code scheduleWithFixedDelay} refuse what Netty refuses with
 * Netty's exceptions; the returned {@code ScheduledFuture} is cancellable from any thread, takes
 * listeners and reports {@code getDelay}; a task runs on its loop, never before its deadline on
 * the loop's {@code ticker()}, in deadline order and, for equal deadlines, in the order the loop
 * received them; a schedule from another thread is handed to the loop as a task, as Netty does;
 * the loop's I/O wait ends at the next deadline; due tasks run within the loop's task-time
 * quantum, in bounded batches with I/O between them; shutdown cancels the pending scheduled
 * tasks. Each loop's wheel is also the one {@code EventLoopWheels} hands wheelbeat's handlers for
 * that loop: one wheel per loop.
 *
 * <p>Needs Netty 4.2 (the {@code IoHandler} model). On Netty 4.1 this class cannot be loaded: its
 * superclass {@code MultiThreadIoEventLoopGroup} is missing, and the {@code NoClassDefFoundError}
 * names it. The rest of the library does not refer to this package.
 *
 * <p>Thread-safe, as Netty's group.
 */
public final class WheelIoEventLoopGroup extends MultiThreadIoEventLoopGroup {

    /** As {@link MultiThreadIoEventLoopGroup#MultiThreadIoEventLoopGroup(IoHandlerFactory)}: Netty's default thread count. */
    public WheelIoEventLoopGroup(IoHandlerFactory ioHandlerFactory) {
        super(ioHandlerFactory);
    }

    /** As {@link MultiThreadIoEventLoopGroup#MultiThreadIoEventLoopGroup(int, IoHandlerFactory)}; 0 means Netty's default. */
    public WheelIoEventLoopGroup(int nThreads, IoHandlerFactory ioHandlerFactory) {
        super(nThreads, ioHandlerFactory);
    }

    /** As {@link MultiThreadIoEventLoopGroup#MultiThreadIoEventLoopGroup(ThreadFactory, IoHandlerFactory)}. */
    public WheelIoEventLoopGroup(ThreadFactory threadFactory, IoHandlerFactory ioHandlerFactory) {
        super(threadFactory, ioHandlerFactory);
    }

    /** As {@link MultiThreadIoEventLoopGroup#MultiThreadIoEventLoopGroup(Executor, IoHandlerFactory)}. */
    public WheelIoEventLoopGroup(Executor executor, IoHandlerFactory ioHandlerFactory) {
        super(executor, ioHandlerFactory);
    }

    /** As {@link MultiThreadIoEventLoopGroup#MultiThreadIoEventLoopGroup(int, ThreadFactory, IoHandlerFactory)}. */
    public WheelIoEventLoopGroup(int nThreads, ThreadFactory threadFactory, IoHandlerFactory ioHandlerFactory) {
        super(nThreads, threadFactory, ioHandlerFactory);
    }

    /** As {@link MultiThreadIoEventLoopGroup#MultiThreadIoEventLoopGroup(int, Executor, IoHandlerFactory)}. */
    public WheelIoEventLoopGroup(int nThreads, Executor executor, IoHandlerFactory ioHandlerFactory) {
        super(nThreads, executor, ioHandlerFactory);
    }

    /**
     * The timers pending on the wheels of this group's loops: its scheduled tasks and wheelbeat's
     * own timers on those wheels, not counting scheduled tasks still on their way from other threads
     * nor due tasks waiting for the loop's next turn. A racy snapshot, for metrics and tests;
     * any thread.
     *
     * @return the number of pending timers over all loops of the group
     */
    public long pendingTimers() {
        long pending = 0;
        for (EventExecutor loop : this) {
            pending += ((LoopWheelOwner) loop).wheel().pendingTimers();
        }
        return pending;
    }

    @Override
    protected IoEventLoop newChild(Executor executor, IoHandlerFactory ioHandlerFactory, Object... args) {
        return new WheelIoEventLoop(this, executor, ioHandlerFactory);
    }
}
