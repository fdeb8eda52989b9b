package io.wheelbeat.netty;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.netty.heartbeat.HeartbeatHandler;
import io.wheelbeat.netty.idle.WheelIdleStateHandler;
import io.wheelbeat.netty.internal.LoopClocks;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * Real TCP on 127.0.0.1: a server channel with a {@link WheelIdleStateHandler} (reader idle) and a
 * pinging {@link HeartbeatHandler} is moved, while active and while its peer keeps writing, from
 * its event loop to another loop of the same group ({@code deregister()}, then
 * {@code register(channel)}, as proxies move channels). Then the peer goes silent.
 *
 * <p>What must hold, whatever the machine's speed: every idle check and every ping runs on the
 * loop the channel is registered with at that moment; a reader idle event fires on the new loop,
 * never before a full idle period without reads; the old loop's wheel holds none of the channel's
 * timers once the channel left it; no timer callback fails and nothing reaches
 * {@code exceptionCaught}. Bounds on waiting are generous and only end a failing run.
 */
public final class LoopMove {

    static final long IDLE_MS = 300;
    static final long PING_MS = 100;
    private static final long WAIT_S = 10;

    private final EventLoopGroup serverLoops;
    private final EventLoopWheels wheels;
    private final EventLoopGroup clientLoops = NettyLine.nio(1);
    private final BlockingQueue<ServerSide> accepted = new LinkedBlockingQueue<>();

    /**
     * @param serverLoops at least two loops; the test shuts them down
     * @param wheels the wheels the handlers use (the loops' own on a wheel loop group)
     */
    public LoopMove(EventLoopGroup serverLoops, EventLoopWheels wheels) {
        this.serverLoops = serverLoops;
        this.wheels = wheels;
    }

    /** What the server saw of the connection, in System.nanoTime (every loop's clock here). */
    private static final class ServerSide extends ChannelInboundHandlerAdapter {
        final Channel channel;
        final List<Long> reads = new ArrayList<>();
        final List<EventLoop> readLoops = new ArrayList<>();
        final List<Long> idleEvents = new ArrayList<>();
        final List<EventLoop> idleLoops = new ArrayList<>();
        final List<EventLoop> pingLoops = new ArrayList<>();
        final List<String> offLoop = new ArrayList<>();
        int offLoopCount;
        final CountDownLatch inactive = new CountDownLatch(1);
        final List<Throwable> exceptions = new ArrayList<>();

        ServerSide(Channel channel) {
            this.channel = channel;
        }

        /** The loop the channel is registered with, if the calling thread is that loop's; else records a fault. */
        synchronized EventLoop onChannelLoop(String what) {
            EventLoop loop = channel.eventLoop();
            if (!loop.inEventLoop()) {
                if (offLoop.size() < 3) { // the first few say enough
                    offLoop.add(what + " on " + Thread.currentThread().getName() + ", channel on " + loop);
                }
                offLoopCount++;
                return null;
            }
            return loop;
        }

        /**
         * Before the idle handler is added: it starts there (the accepted channel is active), and
         * its idle time counts from the start as from a read.
         */
        synchronized void started() {
            reads.add(System.nanoTime());
            readLoops.add(channel.eventLoop());
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            inactive.countDown(); // after the timer handlers before it in the pipeline stopped
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            synchronized (this) {
                reads.add(System.nanoTime());
                readLoops.add(onChannelLoop("read"));
            }
            ReferenceCountUtil.release(msg);
        }

        @Override
        public synchronized void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            exceptions.add(cause);
        }

        /** What happened, for a failure's message. */
        synchronized String summary(EventLoop oldLoop, EventLoop newLoop) {
            return "reads " + count(readLoops, oldLoop) + " on the old loop, " + count(readLoops, newLoop)
                    + " on the new; pings " + count(pingLoops, oldLoop) + "/" + count(pingLoops, newLoop)
                    + "; reader idle events " + count(idleLoops, oldLoop) + "/" + count(idleLoops, newLoop)
                    + "; " + offLoopCount + " off the channel's loop, first " + offLoop + "; exceptions "
                    + exceptions.stream()
                            .map(e -> e + " at " + e.getStackTrace()[0])
                            .toList();
        }

        private static int count(List<EventLoop> loops, EventLoop loop) {
            return (int) loops.stream().filter(l -> l == loop).count();
        }

        synchronized boolean readOn(EventLoop loop) {
            return readLoops.contains(loop);
        }

        synchronized int pingsOn(EventLoop loop) {
            return (int) pingLoops.stream().filter(l -> l == loop).count();
        }

        /** The reader idle events fired on {@code loop}. */
        synchronized int idleEventsOn(EventLoop loop) {
            return (int) idleLoops.stream().filter(l -> l == loop).count();
        }

        /** Per reader idle event, how long no read had come, in ns. */
        synchronized List<Long> silenceBeforeEachEvent() {
            return Silences.beforeEach(reads, idleEvents);
        }
    }

    /** Records where and when it checks: {@code channelIdle} runs where the handler's timer fired. */
    private static final class RecordingIdleHandler extends WheelIdleStateHandler {
        private final ServerSide side;

        RecordingIdleHandler(WheelIdleStateHandler.Factory settings, ServerSide side) {
            super(settings);
            this.side = side;
        }

        @Override
        protected void channelIdle(ChannelHandlerContext ctx, IdleStateEvent evt) throws Exception {
            if (evt.state() == IdleState.READER_IDLE) {
                long now = System.nanoTime();
                synchronized (side) {
                    side.idleEvents.add(now);
                    side.idleLoops.add(side.onChannelLoop("reader idle check"));
                }
            }
            super.channelIdle(ctx, evt);
        }
    }

    private InetSocketAddress startServer() throws InterruptedException {
        WheelIdleStateHandler.Factory idle = WheelIdleStateHandler.builder()
                .readerIdleTime(Duration.ofMillis(IDLE_MS))
                .wheels(wheels)
                .build();
        Channel server = new ServerBootstrap()
                .group(serverLoops)
                .channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ServerSide side = new ServerSide(ch);
                        HeartbeatHandler heartbeat = HeartbeatHandler.builder()
                                .sendPings(
                                        Duration.ofMillis(PING_MS),
                                        channel -> {
                                            synchronized (side) {
                                                side.pingLoops.add(side.onChannelLoop("ping"));
                                            }
                                            return Unpooled.wrappedBuffer(new byte[] {'P'});
                                        },
                                        msg -> false)
                                // The peer never answers: each missed pong is followed by the next ping.
                                .pongTimeout(Duration.ofMillis(PING_MS))
                                .maxMissedPongs(Integer.MAX_VALUE)
                                .wheels(wheels)
                                .build()
                                .newHandler();
                        side.started();
                        ch.pipeline().addLast(new RecordingIdleHandler(idle, side), heartbeat, side);
                        accepted.add(side);
                    }
                })
                .bind("127.0.0.1", 0)
                .sync()
                .channel();
        return (InetSocketAddress) server.localAddress();
    }

    /** Runs {@code task} on {@code loop}: a wheel's counts and nodes are the loop's to read. */
    private static <T> T on(EventExecutor loop, Callable<T> task) throws Exception {
        return loop.submit(task).get(WAIT_S, SECONDS);
    }

    /** The kinds of the timers pending on {@code wheel}, read on its loop. */
    private static List<String> pending(EventExecutor loop, ExecutorDrivenWheel wheel) throws Exception {
        return on(loop, () -> {
            List<String> kinds = new ArrayList<>();
            wheel.forEachPending(node -> kinds.add(node.getClass().getName()));
            return kinds;
        });
    }

    /** Moves an active channel to another loop, then silences its peer: see the class comment. */
    public void moveActiveChannelThenGoSilent() throws Exception {
        try {
            run();
        } finally {
            clientLoops.shutdownGracefully(0, 1, SECONDS).sync();
            serverLoops.shutdownGracefully(0, 1, SECONDS).sync();
        }
    }

    @SuppressWarnings("deprecation") // EventLoop.register(Channel): 4.2 deprecates it, 4.1 has nothing else
    private void run() throws Exception {
        InetSocketAddress address = startServer();
        Channel client = new Bootstrap()
                .group(clientLoops)
                .channel(NioSocketChannel.class)
                .handler(new ChannelInboundHandlerAdapter()) // discards the pings
                .connect(address)
                .sync()
                .channel();
        ScheduledFuture<?> writing = client.eventLoop()
                .scheduleAtFixedRate(
                        () -> client.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {1})), 0, 20, MILLISECONDS);
        ServerSide side = accepted.poll(WAIT_S, SECONDS);
        assertNotNull(side, "no connection accepted");
        EventLoop oldLoop = side.channel.eventLoop();
        EventLoop newLoop = oldLoop;
        while (newLoop == oldLoop) {
            newLoop = serverLoops.next();
        }
        ExecutorDrivenWheel oldWheel = wheels.wheelFor(oldLoop);
        ExecutorDrivenWheel newWheel = wheels.wheelFor(newLoop);
        long waitUntil = System.nanoTime() + SECONDS.toNanos(WAIT_S);
        while (side.pingsOn(oldLoop) == 0 && System.nanoTime() - waitUntil < 0) {
            Thread.sleep(10);
        }
        assertTrue(side.pingsOn(oldLoop) > 0, "no ping on the first loop");
        List<String> pendingBefore = pending(oldLoop, oldWheel);
        assertTrue(pendingBefore.size() >= 2, "the idle check and the ping loop wait on the first loop's wheel");

        assertTrue(side.channel.deregister().await(WAIT_S, SECONDS), "deregister");
        List<String> pendingAfterLeaving = pending(oldLoop, oldWheel);
        assertTrue(newLoop.register(side.channel).await(WAIT_S, SECONDS), "register on the other loop");
        assertTrue(side.channel.isRegistered() && side.channel.eventLoop() == newLoop);
        assertTrue(LoopClocks.sameClock(oldLoop, newLoop), "Netty's loops share one clock: deadlines move as they are");
        waitUntil = System.nanoTime() + SECONDS.toNanos(WAIT_S);
        while (!side.readOn(newLoop) && System.nanoTime() - waitUntil < 0) {
            Thread.sleep(10);
        }
        assertTrue(side.readOn(newLoop), "nothing read on the new loop");
        writing.cancel(false);
        waitUntil = System.nanoTime() + SECONDS.toNanos(WAIT_S);
        while ((side.idleEventsOn(newLoop) == 0 || side.pingsOn(newLoop) == 0) && System.nanoTime() - waitUntil < 0) {
            Thread.sleep(10);
        }

        String summary = side.summary(oldLoop, newLoop);
        System.out.println("moved channel: " + summary);
        synchronized (side) {
            assertEquals(0, side.offLoopCount, "callbacks off the channel's loop: " + summary);
            assertEquals(List.of(), side.exceptions, "exceptionCaught: " + summary);
        }
        assertEquals(List.of(), pendingAfterLeaving, "timers left on the old loop's wheel when the channel left it");
        assertEquals(List.of(), pending(oldLoop, oldWheel), "timers on the old loop's wheel");
        assertEquals(0, (long) on(oldLoop, oldWheel::failedCount), "timer callbacks that threw on the old loop");
        assertEquals(0, (long) on(newLoop, newWheel::failedCount), "timer callbacks that threw on the new loop");
        assertTrue(side.idleEventsOn(newLoop) > 0, "no reader idle event on the new loop");
        assertTrue(side.pingsOn(newLoop) > 0, "no ping on the new loop");
        for (long silence : side.silenceBeforeEachEvent()) {
            assertTrue(silence >= MILLISECONDS.toNanos(IDLE_MS), "reader idle after only " + silence + " ns");
        }
        assertTrue(side.channel.isActive() && client.isActive(), "the connection survives the move");
        side.channel.close();
        assertTrue(side.inactive.await(WAIT_S, SECONDS), "channelInactive");
        assertEquals(List.of(), pending(newLoop, newWheel), "timers left once the channel closed");
    }
}
