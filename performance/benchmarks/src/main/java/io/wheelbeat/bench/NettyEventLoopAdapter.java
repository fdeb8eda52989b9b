package io.wheelbeat.bench;

import io.netty.channel.EventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Netty event-loop scheduling, what {@code IdleStateHandler} uses: {@code loop.schedule(...)} and
 * {@code future.cancel(false)} called on the loop's own thread.
 *
 * <p>The loop is an {@link EmbeddedChannel}'s: it is {@code inEventLoop()} for the benchmark
 * thread, so schedule and cancel take exactly the in-loop path of every Netty event loop
 * ({@code AbstractScheduledEventExecutor}: a {@code ScheduledFutureTask} added to and removed from
 * the loop's binary-heap priority queue), with no thread hop to measure instead. Due tasks run when
 * {@link #poll()} calls {@code runScheduledPendingTasks()}, as a loop runs them between I/O.
 */
final class NettyEventLoopAdapter extends OwnerThreadAdapter {

    private final EmbeddedChannel channel;
    private final EventLoop loop;
    private final ScheduledFuture<?>[] futures;
    private final Runnable task = this::onFired;

    NettyEventLoopAdapter(int capacity, boolean virtualTime) {
        super(capacity);
        this.channel = new EmbeddedChannel();
        if (virtualTime) {
            channel.freezeTime();
        }
        this.loop = channel.eventLoop();
        this.futures = new ScheduledFuture<?>[capacity];
    }

    @Override
    void schedule(int i, long delayNanos) {
        futures[i] = loop.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    void cancel(int i) {
        futures[i].cancel(false);
    }

    @Override
    int poll() {
        long before = fired();
        channel.runScheduledPendingTasks();
        return (int) (fired() - before);
    }

    @Override
    long untilNextDeadline() {
        return channel.runScheduledPendingTasks(); // runs what is due, then tells the delay or -1
    }

    @Override
    void advanceTime(long nanos) {
        channel.advanceTimeBy(nanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void close() {
        channel.finishAndReleaseAll();
    }
}
