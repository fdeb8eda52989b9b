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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The server's event loops: ordinary {@link SingleThreadIoEventLoop}s that also count what the
 * load test reports, namely the tasks scheduled on them (the timer operations of Netty's
 * {@code IdleStateHandler}, and the driving task of a shared wheel) and the traffic and idle
 * events the server probes see. Counting costs one field increment per event on the loop's own
 * thread, the same for every idle handler under test.
 */
final class InstrumentedEventLoopGroup extends MultiThreadIoEventLoopGroup {

    private final LoopThreads threads;

    InstrumentedEventLoopGroup(int nThreads, String name, IoHandlerFactory ioHandlerFactory) {
        this(nThreads, new LoopThreads(name), ioHandlerFactory);
    }

    private InstrumentedEventLoopGroup(int nThreads, LoopThreads threads, IoHandlerFactory ioHandlerFactory) {
        super(nThreads, threads, ioHandlerFactory);
        this.threads = threads;
    }

    @Override
    protected IoEventLoop newChild(Executor executor, IoHandlerFactory ioHandlerFactory, Object... args) {
        return new InstrumentedEventLoop(this, executor, ioHandlerFactory);
    }

    /** CPU time of the group's threads so far, in nanoseconds. */
    long cpuNanos() {
        return threads.cpuNanos();
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
        for (EventExecutor loop : this) {
            InstrumentedEventLoop instrumented = (InstrumentedEventLoop) loop;
            parts.add(loop.submit(() -> instrumented.snapshot(readWheels)));
        }
        LoopSnapshot total = LoopSnapshot.ZERO;
        for (Future<LoopSnapshot> part : parts) {
            total = total.plus(part.get(timeout, unit));
        }
        return total;
    }

    /** One server event loop and its counters. Counters are written on the loop's thread only. */
    static final class InstrumentedEventLoop extends SingleThreadIoEventLoop {
        private long scheduledOnLoop;
        private final AtomicLong scheduledFromElsewhere = new AtomicLong();
        long channelsActive;
        long channelsClosed;
        long messages;
        long readBatches;
        long firstIdleEvents;
        long repeatIdleEvents;

        InstrumentedEventLoop(IoEventLoopGroup parent, Executor executor, IoHandlerFactory ioHandlerFactory) {
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

        private LoopSnapshot snapshot(boolean readWheel) {
            long wheelScheduled = 0;
            long wheelCancelled = 0;
            long wheelExpired = 0;
            long wheelPending = 0;
            if (readWheel) {
                ExecutorDrivenWheel wheel = EventLoopWheels.shared().wheelFor(this);
                wheelScheduled = wheel.scheduledCount();
                wheelCancelled = wheel.cancelledCount();
                wheelExpired = wheel.expiredCount();
                wheelPending = wheel.pendingTimers();
            }
            return new LoopSnapshot(scheduledOnLoop + scheduledFromElsewhere.get(), channelsActive, channelsClosed,
                    messages, readBatches, firstIdleEvents, repeatIdleEvents,
                    wheelScheduled, wheelCancelled, wheelExpired, wheelPending);
        }
    }
}
