package io.wheelbeat.netty.idle;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalIoHandler;
import io.netty.channel.local.LocalServerChannel;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.concurrent.DefaultEventExecutorGroup;
import io.netty.util.concurrent.EventExecutorGroup;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.core.WheelTimer;
import io.wheelbeat.core.internal.TimerWheelMetrics;
import io.wheelbeat.netty.EventLoopWheels;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The handler where its callbacks cross threads: on a {@link WheelTimer} shared by every channel
 * (expiries hop to the channel's loop), and added with its own executor (write completions arrive
 * on the channel's loop). Real threads, so assertions are about what happens and on which thread,
 * never about how fast: waits are generous and lower bounds are the handler's guarantees.
 */
class WheelIdleStateHandlerThreadsTest {

    private static final long WAIT_SECONDS = 10;

    private final EventLoopGroup loops = new MultiThreadIoEventLoopGroup(2, LocalIoHandler.newFactory());
    private final WheelTimer timer = WheelTimer.builder().build();
    private final EventExecutorGroup handlerExecutors = new DefaultEventExecutorGroup(1);

    /** An idle event, when it arrived, and whether it arrived on the thread of the handler. */
    private record Arrival(IdleStateEvent event, long nanoTime, boolean onHandlerThread, Thread thread) {}

    private final BlockingQueue<Arrival> arrivals = new LinkedBlockingQueue<>();
    private final List<Channel> opened = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (Channel channel : opened) {
            channel.close().sync();
        }
        loops.shutdownGracefully(0, 1, SECONDS).sync();
        handlerExecutors.shutdownGracefully(0, 1, SECONDS).sync();
        timer.stop();
    }

    private final class ArrivalRecorder extends ChannelInboundHandlerAdapter {
        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof IdleStateEvent event) {
                arrivals.add(
                        new Arrival(event, System.nanoTime(), ctx.executor().inEventLoop(), Thread.currentThread()));
            }
        }
    }

    /**
     * Starts a server whose child channels get {@code idleHandler} (on {@code executor} if not
     * null: deprecated in Netty 4.2, still supported, so the handler must work there).
     */
    @SuppressWarnings("deprecation")
    private LocalAddress server(
            Supplier<ChannelHandler> idleHandler, EventExecutorGroup executor, BlockingQueue<Channel> children)
            throws InterruptedException {
        LocalAddress address = new LocalAddress(WheelIdleStateHandlerThreadsTest.class);
        opened.add(new ServerBootstrap()
                .group(loops)
                .channel(LocalServerChannel.class)
                .childHandler(new ChannelInitializer<LocalChannel>() {
                    @Override
                    protected void initChannel(LocalChannel ch) {
                        ch.pipeline().addLast(executor, "idle", idleHandler.get());
                        ch.pipeline().addLast(executor, "recorder", new ArrivalRecorder());
                        children.add(ch);
                        opened.add(ch);
                    }
                })
                .bind(address)
                .sync()
                .channel());
        return address;
    }

    private Channel connect(LocalAddress address) throws InterruptedException {
        Channel client = new Bootstrap()
                .group(loops)
                .channel(LocalChannel.class)
                .handler(new ChannelInboundHandlerAdapter())
                .connect(address)
                .sync()
                .channel();
        opened.add(client);
        return client;
    }

    private static void awaitTrue(Supplier<Boolean> condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + SECONDS.toNanos(WAIT_SECONDS);
        while (!condition.get()) {
            assertTrue(System.nanoTime() < deadline, "gave up waiting: " + what);
            Thread.sleep(5);
        }
    }

    // ---------------------------------------------------------------- one shared timer

    @Test
    void onASharedTimerIdleEventsArriveOnTheChannelsLoop() throws Exception {
        BlockingQueue<Channel> children = new LinkedBlockingQueue<>();
        LocalAddress address = server(
                () -> WheelIdleStateHandler.builder()
                        .timer(timer)
                        .readerIdleTime(Duration.ofMillis(100))
                        .build()
                        .newHandler(),
                null,
                children);
        long connected = System.nanoTime();
        connect(address);
        Arrival first = arrivals.poll(WAIT_SECONDS, SECONDS);
        assertSame(IdleStateEvent.FIRST_READER_IDLE_STATE_EVENT, first.event());
        assertTrue(first.onHandlerThread(), "fired on " + first.thread());
        assertTrue(first.nanoTime() - connected >= MILLISECONDS.toNanos(100), "fired before the idle time");
        Arrival second = arrivals.poll(WAIT_SECONDS, SECONDS);
        assertSame(IdleStateEvent.READER_IDLE_STATE_EVENT, second.event());
    }

    @Test
    void onASharedTimerClosingTheChannelLeavesNoTimeoutPending() throws Exception {
        BlockingQueue<Channel> children = new LinkedBlockingQueue<>();
        LocalAddress address = server(
                () -> WheelIdleStateHandler.builder()
                        .timer(timer)
                        .readerIdleTime(Duration.ofMinutes(1))
                        .writerIdleTime(Duration.ofMinutes(1))
                        .allIdleTime(Duration.ofMinutes(1))
                        .build()
                        .newHandler(),
                null,
                children);
        connect(address);
        connect(address);
        Channel child = children.poll(WAIT_SECONDS, SECONDS);
        Channel other = children.poll(WAIT_SECONDS, SECONDS);
        awaitTrue(() -> timer.pendingTimers() == 6, "three timeouts per channel");
        child.close().sync();
        other.close().sync();
        awaitTrue(() -> timer.pendingTimers() == 0, "no timeout left, " + timer.pendingTimers() + " pending");
    }

    @Test
    void onASharedTimerTrafficSchedulesNoTimeouts() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new TimerWheelMetrics(timer, Tags.empty()).bindTo(registry);
        BlockingQueue<Channel> children = new LinkedBlockingQueue<>();
        LocalAddress address = server(
                () -> WheelIdleStateHandler.builder()
                        .timer(timer)
                        .readerIdleTime(Duration.ofMinutes(1))
                        .writerIdleTime(Duration.ofMinutes(1))
                        .build()
                        .newHandler(),
                null,
                children);
        Channel client = connect(address);
        Channel child = children.poll(WAIT_SECONDS, SECONDS);
        awaitTrue(
                () -> registry.get("wheelbeat.timer.scheduled")
                                .functionCounter()
                                .count()
                        == 2,
                "two timeouts");
        for (int i = 0; i < 100; i++) {
            client.writeAndFlush("ping").sync();
            child.writeAndFlush("pong").sync();
        }
        assertEquals(
                2, registry.get("wheelbeat.timer.scheduled").functionCounter().count());
        assertEquals(2, timer.pendingTimers());
    }

    // ---------------------------------------------------------------- the handler on its own executor

    /**
     * Writes complete on the channel's loop, not the handler's executor; the handler must count
     * them. A write resets the writer idle period and makes the next writer-idle event a first one
     * again, so the first FIRST_WRITER_IDLE event after a repeated one can only come from the write,
     * whatever the threads' speed: it is at least the idle time after the write was issued.
     */
    @Test
    void onItsOwnExecutorItFiresThereAndCountsWritesCompletedOnTheChannelsLoop() throws Exception {
        BlockingQueue<Channel> children = new LinkedBlockingQueue<>();
        LocalAddress address =
                server(() -> new WheelIdleStateHandler(0, 150, 0, MILLISECONDS), handlerExecutors, children);
        connect(address);
        Channel child = children.poll(WAIT_SECONDS, SECONDS);
        ExecutorDrivenWheel wheel = EventLoopWheels.shared()
                .wheelFor(child.pipeline().context("idle").executor());
        assertSame(IdleStateEvent.FIRST_WRITER_IDLE_STATE_EVENT, nextArrival().event());
        assertSame(IdleStateEvent.WRITER_IDLE_STATE_EVENT, nextArrival().event(), "a repeated event is not first");
        long beforeWrite = System.nanoTime();
        child.writeAndFlush("hello").sync(); // completes on the channel's loop, not the handler's
        Arrival arrival;
        do {
            arrival = nextArrival();
        } while (arrival.event() != IdleStateEvent.FIRST_WRITER_IDLE_STATE_EVENT);
        assertTrue(arrival.onHandlerThread(), "fired on " + arrival.thread());
        assertTrue(
                arrival.nanoTime() - beforeWrite >= MILLISECONDS.toNanos(150),
                "writer idle " + (arrival.nanoTime() - beforeWrite) / 1_000_000 + " ms after a write");
        child.close().sync();
        awaitTrue(() -> wheel.pendingTimers() == 0, "timers cancelled");
    }

    private Arrival nextArrival() throws InterruptedException {
        Arrival arrival = arrivals.poll(WAIT_SECONDS, SECONDS);
        assertNotNull(arrival, "no idle event within " + WAIT_SECONDS + " s");
        return arrival;
    }
}
