package io.wheelbeat.netty.idle;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.NANOSECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelProgressivePromise;
import io.netty.channel.ChannelPromise;
import io.netty.channel.DefaultChannelProgressivePromise;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalIoHandler;
import io.netty.channel.local.LocalServerChannel;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.DefaultEventExecutorGroup;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.EventExecutorGroup;
import io.netty.util.concurrent.GenericFutureListener;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.internal.Drivers;
import io.wheelbeat.core.internal.WheelExecutor;
import io.wheelbeat.core.internal.WheelSettings;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link WheelWriteTimeoutHandler} added with an executor of its own: writes pass through it on
 * that executor while they complete on the channel's loop, a second thread. Its timer runs on a
 * wheel of the handler's executor whose clock is virtual, moved by the test, so the assertions are
 * about which writes time out and at which virtual instant, never about how fast the threads run:
 * the test waits for the threads, however slow, before it moves the clock.
 */
@Timeout(300) // a hang guard only: the assertions do not depend on speed
class WheelWriteTimeoutHandlerThreadsTest {

    private static final long TIMEOUT = MILLISECONDS.toNanos(4);
    private static final long STEP = MILLISECONDS.toNanos(1);
    /**
     * Every write is done before the clock moves this many steps past it, less than the timeout;
     * the timer then runs every few rounds, while writes complete.
     */
    private static final int ROUNDS_PER_SYNC = 2;

    private static final StackWalker STACK = StackWalker.getInstance();
    private static final int ROUNDS = 500;
    private static final int WRITES_PER_ROUND = 8;
    private static final int CHANNELS = 4;

    private final EventLoopGroup loops = new MultiThreadIoEventLoopGroup(1, LocalIoHandler.newFactory());
    private final EventExecutorGroup handlerExecutors = new DefaultEventExecutorGroup(1);
    private final EventExecutor handlerExecutor = handlerExecutors.next();
    private final AtomicLong clock = new AtomicLong(Long.MAX_VALUE - SECONDS.toNanos(10)); // wraps mid-test
    private final VirtualWakes wakes = new VirtualWakes();
    private final ExecutorDrivenWheel wheel = Drivers.executorDriven(wakes, new WheelSettings().ticker(clock::get));
    private final List<Channel> opened = new CopyOnWriteArrayList<>();
    /** Each call of writeTimedOut: the channel's index and the virtual instant. */
    private final Queue<String> timedOut = new ConcurrentLinkedQueue<>();

    private final Queue<Throwable> caught = new ConcurrentLinkedQueue<>();
    /** The threads on which the handler read a pending write's promise off its executor. */
    private final Queue<String> offExecutorReads = new ConcurrentLinkedQueue<>();
    /** What the handler's write listener threw: Netty would only log it. */
    private final Queue<Throwable> listenerFailures = new ConcurrentLinkedQueue<>();
    /** The virtual instant the writes start: timeouts are noted after it. */
    private long start;

    @AfterEach
    void stop() throws Exception {
        for (Channel channel : opened) {
            channel.close().sync();
        }
        loops.shutdownGracefully(0, 1, SECONDS).sync();
        handlerExecutors.shutdownGracefully(0, 1, SECONDS).sync();
    }

    /**
     * Drives the wheel in virtual time: its driving task, scheduled for a virtual instant, runs on
     * the handler's executor when the test moves the clock there and calls {@link #fireDue}.
     */
    private final class VirtualWakes implements WheelExecutor {
        private record Wake(long at, FutureTask<Void> task) {}

        private final Queue<Wake> wakes = new ConcurrentLinkedQueue<>();

        @Override
        public boolean inOwnerThread() {
            return handlerExecutor.inEventLoop();
        }

        @Override
        public void execute(Runnable task) {
            handlerExecutor.execute(task);
        }

        @Override
        public Future<?> schedule(Runnable task, long delayNanos) {
            FutureTask<Void> future = new FutureTask<>(task, null); // cancelled, it does not run
            wakes.add(new Wake(clock.get() + delayNanos, future));
            return future;
        }

        void fireDue() {
            long now = clock.get();
            wakes.removeIf(wake -> {
                if (wake.at - now <= 0) {
                    handlerExecutor.execute(wake.task);
                    return true;
                }
                return false;
            });
        }
    }

    /** Nearer the head, on the channel's loop: passes writes on, or holds them (a peer that stopped reading). */
    private static final class Holder extends ChannelOutboundHandlerAdapter {
        volatile boolean holding;
        final List<ChannelPromise> held = new ArrayList<>();

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            if (holding) {
                ReferenceCountUtil.release(msg);
                held.add(promise);
            } else {
                ctx.write(msg, promise);
            }
        }
    }

    /**
     * A write's promise bound to the channel's loop, so its listeners run there: Netty 4.1 leaves every
     * promise so, 4.2 every promise that is not a {@code DefaultChannelPromise} (those it swaps for
     * one of the handler's executor). It keeps what its listeners throw, and notes each time the
     * handler reads it off the handler's executor: the ring of pending writes is the handler's
     * executor's alone, so any such read is the race, caught whether or not it corrupts this run.
     */
    private final class LoopPromise extends DefaultChannelProgressivePromise {
        LoopPromise(Channel channel) {
            super(channel);
        }

        @Override
        public boolean isDone() {
            if (!handlerExecutor.inEventLoop() && calledFromTheHandler()) {
                offExecutorReads.add(Thread.currentThread().getName());
            }
            return super.isDone();
        }

        @Override
        @SuppressWarnings("unchecked")
        public ChannelProgressivePromise addListener(
                GenericFutureListener<? extends io.netty.util.concurrent.Future<? super Void>> listener) {
            GenericFutureListener<io.netty.util.concurrent.Future<Void>> checked =
                    (GenericFutureListener<io.netty.util.concurrent.Future<Void>>) listener;
            return super.addListener((GenericFutureListener<io.netty.util.concurrent.Future<Void>>) future -> {
                try {
                    checked.operationComplete(future);
                } catch (Throwable t) {
                    listenerFailures.add(t);
                    throw t;
                }
            });
        }
    }

    /** Whether the caller of {@link LoopPromise#isDone} is the handler's own code. */
    private static boolean calledFromTheHandler() {
        String handler = WheelWriteTimeoutHandler.class.getName();
        return STACK.walk(frames -> frames.skip(2).findFirst())
                .map(StackWalker.StackFrame::getClassName)
                .filter(name -> name.equals(handler) || name.startsWith(handler + "$"))
                .isPresent();
    }

    private Channel connect(LocalAddress address, int index, Holder holder) throws InterruptedException {
        WheelWriteTimeoutHandler handler = new WheelWriteTimeoutHandler(TIMEOUT, NANOSECONDS, executor -> wheel) {
            @Override
            protected void writeTimedOut(ChannelHandlerContext ctx) {
                timedOut.add(index + "@" + (clock.get() - start));
            }
        };
        Channel channel = new Bootstrap()
                .group(loops)
                .channel(LocalChannel.class)
                .handler(new ChannelInitializer<LocalChannel>() {
                    @Override
                    protected void initChannel(LocalChannel ch) {
                        ch.pipeline().addLast(holder);
                        ch.pipeline().addLast(handlerExecutors, "writeTimeout", handler);
                        ch.pipeline().addLast(handlerExecutors, "caught", new ChannelInboundHandlerAdapter() {
                            @Override
                            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                caught.add(cause);
                            }
                        });
                    }
                })
                .connect(address)
                .sync()
                .channel();
        opened.add(channel);
        return channel;
    }

    /** Lets the handler's executor run what was handed to it so far, and what that hands on. */
    private void settle() throws Exception {
        for (int i = 0; i < 3; i++) {
            handlerExecutor.submit(() -> {}).sync();
            loops.next().submit(() -> {}).sync();
        }
    }

    private void advance(long nanos) throws Exception {
        clock.addAndGet(nanos);
        wakes.fireDue();
        settle();
    }

    /**
     * Many writes complete on the channel's loop while the handler takes new ones on its executor
     * and its timer runs there: no write that completed within the timeout times out, nothing
     * throws, and afterwards a write held back times out exactly one timeout after it was
     * written, once, on each channel. Without the hand-over to the handler's executor, the
     * completions on the loop race with the writes and the timer on the ring of pending writes;
     * the corruption shows now and then (a callback that throws, a pending write dropped or
     * kept); the read of a pending write off the handler's executor in every run.
     */
    @Test
    void writesCompletingOnTheChannelsLoopKeepTheRingOfPendingWritesIntact() throws Exception {
        LocalAddress address = new LocalAddress(WheelWriteTimeoutHandlerThreadsTest.class);
        opened.add(new ServerBootstrap()
                .group(loops)
                .channel(LocalServerChannel.class)
                .childHandler(new ChannelInitializer<LocalChannel>() {
                    @Override
                    protected void initChannel(LocalChannel ch) {
                        // The writes arrive here and are dropped by the pipeline's tail.
                    }
                })
                .bind(address)
                .sync()
                .channel());
        Channel[] channels = new Channel[CHANNELS];
        Holder[] holders = new Holder[CHANNELS];
        for (int c = 0; c < CHANNELS; c++) {
            holders[c] = new Holder();
            channels[c] = connect(address, c, holders[c]);
        }
        start = clock.get();
        ChannelFuture[] last = new ChannelFuture[CHANNELS];
        for (int round = 1; round <= ROUNDS; round++) {
            for (int c = 0; c < CHANNELS; c++) {
                for (int w = 1; w < WRITES_PER_ROUND; w++) {
                    channels[c].write("w", new LoopPromise(channels[c]));
                }
                last[c] = channels[c].writeAndFlush("w", new LoopPromise(channels[c]));
            }
            clock.addAndGet(STEP);
            wakes.fireDue(); // the timer runs on the handler's executor while writes complete
            if (round % ROUNDS_PER_SYNC == 0) {
                for (ChannelFuture future : last) {
                    future.sync(); // writes complete in order: every earlier one is done too
                }
            }
        }
        settle();
        assertEquals(List.of(), List.copyOf(timedOut), "writes that completed within the timeout timed out");
        assertEquals(List.of(), List.copyOf(caught));
        assertEquals(List.of(), List.copyOf(listenerFailures), "the write listener threw");
        assertEquals(0, wheel.failedCount(), "the timer's callback threw");
        assertEquals(
                0,
                offExecutorReads.size(),
                "pending writes read off the handler's executor, on " + Set.copyOf(offExecutorReads));

        for (Holder holder : holders) {
            holder.holding = true;
        }
        long writtenAt = clock.get() - start;
        for (Channel channel : channels) {
            channel.writeAndFlush("held");
        }
        settle();
        advance(TIMEOUT - 1);
        assertEquals(List.of(), List.copyOf(timedOut), "timed out early");
        advance(1);
        List<String> expected = new ArrayList<>();
        for (int c = 0; c < CHANNELS; c++) {
            expected.add(c + "@" + (writtenAt + TIMEOUT));
        }
        List<String> seen = new ArrayList<>(timedOut);
        seen.sort(null);
        assertEquals(expected, seen, "one timeout per held write, one timeout after it was written");
        advance(3 * TIMEOUT);
        assertEquals(CHANNELS, timedOut.size(), "a write timed out twice");
        assertEquals(List.of(), List.copyOf(caught));
        assertEquals(0, wheel.failedCount(), "the timer's callback threw");
        for (Channel channel : channels) {
            channel.close().sync();
        }
        settle();
        assertEquals(0, wheel.pendingTimers(), "the timers are cancelled when the channels go");
    }
}
