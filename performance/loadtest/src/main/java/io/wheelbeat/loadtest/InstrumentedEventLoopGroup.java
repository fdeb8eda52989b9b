package io.wheelbeat.loadtest;

import io.netty.channel.IoEventLoop;
import io.netty.channel.IoEventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SingleThreadIoEventLoop;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.ScheduledFuture;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.loop.LoopWheelOwner;
import io.wheelbeat.netty.loop.WheelIoEventLoopGroup;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The server's event loops, Netty's or wheelbeat's ({@link EventLoopKind}), and what the load
 * test counts on them: the tasks scheduled on them (the timer operations of Netty's
 * {@code IdleStateHandler}, and the driving task of a shared wheel) and the traffic and idle
 * events the server probes see ({@link LoopCounters}). Counting costs one field increment per
 * event on the loop's own thread, the same for every idle handler under test.
 *
 * <p>Scheduled tasks are counted where each group keeps them: Netty's loops count their
 * {@code schedule(...)} calls; a {@code WheelIoEventLoopGroup} loop puts every scheduled task on
 * its own wheel, so its count is that wheel's scheduled timers (which, with a wheel handler, are
 * the handler's timers too: the loop and the handler share the wheel).
 */
final class InstrumentedEventLoopGroup {

    private final IoEventLoopGroup loops;
    private final LoopThreads threads;
    /** Filled in the constructor, read-only afterwards. */
    private final Map<EventExecutor, LoopCounters> counters = new IdentityHashMap<>();

    InstrumentedEventLoopGroup(EventLoopKind kind, int nThreads, String name, IoHandlerFactory ioHandlerFactory) {
        this.threads = new LoopThreads(name);
        this.loops = kind == EventLoopKind.WHEEL
                ? new WheelIoEventLoopGroup(nThreads, threads, ioHandlerFactory)
                : new CountingGroup(nThreads, threads, ioHandlerFactory);
        for (EventExecutor loop : loops) {
            counters.put(loop, new LoopCounters());
        }
    }

    /** The loops, for a server bootstrap. */
    IoEventLoopGroup loops() {
        return loops;
    }

    /** The counters of {@code loop}, one of this group's loops; to be written on that loop only. */
    LoopCounters counters(EventExecutor loop) {
        LoopCounters c = counters.get(loop);
        if (c == null) {
            throw new IllegalArgumentException(loop + " is not a loop of this group");
        }
        return c;
    }

    Future<?> shutdownGracefully(long quietPeriod, long timeout, TimeUnit unit) {
        return loops.shutdownGracefully(quietPeriod, timeout, unit);
    }

    /** CPU time of the group's threads so far, in nanoseconds. */
    long cpuNanos() {
        return threads.cpuNanos();
    }

    /** The names of the group's threads. */
    Set<String> threadNames() {
        return threads.names();
    }

    /** Heap bytes allocated so far by this group's threads. */
    long allocatedBytes() {
        return threads.allocatedBytes();
    }

    /**
     * Sums the loops' counters, each read on its own loop so that the reading is exact and sees
     * every write the loop made before it.
     *
     * @param readWheels whether to read the loops' shared wheels as well (only where a wheel
     *     handler made them; reading creates one otherwise)
     */
    LoopSnapshot snapshot(boolean readWheels, long timeout, TimeUnit unit)
            throws InterruptedException, ExecutionException, TimeoutException {
        List<Future<LoopSnapshot>> parts = new ArrayList<>();
        for (EventExecutor loop : loops) {
            parts.add(loop.submit(() -> snapshot(loop, readWheels)));
        }
        LoopSnapshot total = LoopSnapshot.ZERO;
        for (Future<LoopSnapshot> part : parts) {
            total = total.plus(part.get(timeout, unit));
        }
        return total;
    }

    /** One loop's reading, on that loop. */
    private LoopSnapshot snapshot(EventExecutor loop, boolean readWheel) {
        long scheduled = loop instanceof LoopWheelOwner owner
                ? owner.wheel().scheduledCount()
                : ((CountingLoop) loop).scheduled();
        long wheelScheduled = 0;
        long wheelCancelled = 0;
        long wheelExpired = 0;
        long wheelPending = 0;
        if (readWheel) {
            ExecutorDrivenWheel wheel = EventLoopWheels.shared().wheelFor(loop);
            wheelScheduled = wheel.scheduledCount();
            wheelCancelled = wheel.cancelledCount();
            wheelExpired = wheel.expiredCount();
            wheelPending = wheel.pendingTimers();
        }
        // The wheel a loop group's loop owns is the one a wheel handler gets there too.
        ExecutorDrivenWheel used = loop instanceof LoopWheelOwner owner
                ? owner.wheel()
                : readWheel ? EventLoopWheels.shared().wheelFor(loop) : null;
        LoopCounters c = counters(loop);
        return new LoopSnapshot(
                scheduled,
                c.channelsActive,
                c.channelsClosed,
                c.messages,
                c.readBatches,
                c.firstIdleEvents,
                c.repeatIdleEvents,
                wheelScheduled,
                wheelCancelled,
                wheelExpired,
                wheelPending,
                used == null ? List.of() : List.of(used.largestRun()));
    }

    /** What the server pipelines count on one loop. Written and read on that loop's thread only. */
    static final class LoopCounters {
        long channelsActive;
        long channelsClosed;
        long messages;
        long readBatches;
        long firstIdleEvents;
        long repeatIdleEvents;
    }

    /** Netty's group, its loops counting their {@code schedule(...)} calls. */
    private static final class CountingGroup extends MultiThreadIoEventLoopGroup {
        CountingGroup(int nThreads, LoopThreads threads, IoHandlerFactory ioHandlerFactory) {
            super(nThreads, threads, ioHandlerFactory);
        }

        @Override
        protected IoEventLoop newChild(Executor executor, IoHandlerFactory ioHandlerFactory, Object... args) {
            return new CountingLoop(this, executor, ioHandlerFactory);
        }
    }

    /** Netty's {@link SingleThreadIoEventLoop}, counting {@code schedule(...)} calls. */
    private static final class CountingLoop extends SingleThreadIoEventLoop {
        private long scheduledOnLoop;
        private final AtomicLong scheduledFromElsewhere = new AtomicLong();

        CountingLoop(IoEventLoopGroup parent, Executor executor, IoHandlerFactory ioHandlerFactory) {
            super(parent, executor, ioHandlerFactory);
        }

        @Override
        public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            countSchedule();
            return super.schedule(command, delay, unit);
        }

        @Override
        public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
            countSchedule();
            return super.schedule(callable, delay, unit);
        }

        private void countSchedule() {
            if (inEventLoop()) {
                scheduledOnLoop++;
            } else {
                scheduledFromElsewhere.incrementAndGet();
            }
        }

        /** On the loop. */
        long scheduled() {
            return scheduledOnLoop + scheduledFromElsewhere.get();
        }
    }
}
