package io.wheelbeat.netty.loop;

import io.netty.channel.IoEventLoop;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadFactory;

/**
 * Netty 4.2's {@link MultiThreadIoEventLoopGroup} whose loops keep every scheduled task on a
 * timing wheel instead of a binary heap: schedule and cancel are O(1), whoever schedules. A
 * drop-in for any {@link IoHandlerFactory}: {@code new WheelIoEventLoopGroup(n, NioIoHandler.newFactory())}.
 *
 * <p>Contract: Netty's. A task runs on its loop, never before its deadline on the loop's
 * {@code ticker()}, by deadline, then in the order the loop received it; shutdown cancels pending
 * tasks. Each loop's wheel is the one {@code EventLoopWheels} hands wheelbeat's handlers on that loop.
 *
 * <p>Needs Netty 4.2: on 4.1 the class fails to load ({@code NoClassDefFoundError}). Thread-safe.
 */
public final class WheelIoEventLoopGroup extends MultiThreadIoEventLoopGroup {

    /**
     * As Netty's group with the same arguments.
     *
     * @param ioHandlerFactory the loops' I/O handler
     */
    public WheelIoEventLoopGroup(IoHandlerFactory ioHandlerFactory) {
        super(ioHandlerFactory);
    }

    /**
     * As Netty's group with the same arguments.
     *
     * @param nThreads loops, 0 for Netty's default
     * @param ioHandlerFactory the loops' I/O handler
     */
    public WheelIoEventLoopGroup(int nThreads, IoHandlerFactory ioHandlerFactory) {
        super(nThreads, ioHandlerFactory);
    }

    /**
     * As Netty's group with the same arguments.
     *
     * @param threadFactory makes the loops' threads
     * @param ioHandlerFactory the loops' I/O handler
     */
    public WheelIoEventLoopGroup(ThreadFactory threadFactory, IoHandlerFactory ioHandlerFactory) {
        super(threadFactory, ioHandlerFactory);
    }

    /**
     * As Netty's group with the same arguments.
     *
     * @param executor runs the loops
     * @param ioHandlerFactory the loops' I/O handler
     */
    public WheelIoEventLoopGroup(Executor executor, IoHandlerFactory ioHandlerFactory) {
        super(executor, ioHandlerFactory);
    }

    /**
     * As Netty's group with the same arguments.
     *
     * @param nThreads loops, 0 for Netty's default
     * @param threadFactory makes the loops' threads
     * @param ioHandlerFactory the loops' I/O handler
     */
    public WheelIoEventLoopGroup(int nThreads, ThreadFactory threadFactory, IoHandlerFactory ioHandlerFactory) {
        super(nThreads, threadFactory, ioHandlerFactory);
    }

    /**
     * As Netty's group with the same arguments.
     *
     * @param nThreads loops, 0 for Netty's default
     * @param executor runs the loops
     * @param ioHandlerFactory the loops' I/O handler
     */
    public WheelIoEventLoopGroup(int nThreads, Executor executor, IoHandlerFactory ioHandlerFactory) {
        super(nThreads, executor, ioHandlerFactory);
    }

    /**
     * Timers pending on the loops' wheels (scheduled tasks and wheelbeat's own timers), not those
     * still being handed over nor due ones waiting for the next turn. A racy snapshot; any thread.
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
