package io.wheelbeat.netty.guard;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
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
import io.netty.util.CharsetUtil;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.NettyLine;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.BooleanSupplier;

/**
 * Real TCP on 127.0.0.1: a channel waiting for its paced close moves, while active, to another
 * loop of {@code serverLoops} ({@code deregister()}, then {@code register(channel)}). The order of
 * the steps follows from the loops' task queues, not from speed; waits are bounded at 10 s and only
 * end a failing run.
 */
public final class PacedCloseMove {

    private static final long WAIT_S = 10;

    private final EventLoopGroup serverLoops;
    private final EventLoopWheels wheels;
    private final EventLoopGroup clientLoops = NettyLine.nio(1);
    private final BlockingQueue<Channel> accepted = new LinkedBlockingQueue<>();
    private SocketAddress address;

    /**
     * @param serverLoops at least two loops; {@link #run} shuts them down
     * @param wheels the wheels of the pacer
     */
    public PacedCloseMove(EventLoopGroup serverLoops, EventLoopWheels wheels) {
        this.serverLoops = serverLoops;
        this.wheels = wheels;
    }

    /** Runs both cases, then shuts the loops down. */
    public void run() throws Exception {
        try {
            address = new ServerBootstrap()
                    .group(serverLoops)
                    .channel(NioServerSocketChannel.class)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            accepted.add(ch);
                        }
                    })
                    .bind("127.0.0.1", 0)
                    .sync()
                    .channel()
                    .localAddress();
            aChannelClosedOnItsNewLoopCancelsItsWaitOnTheOldOne();
            theSlotComingAfterTheMoveClosesOnTheNewLoop();
        } finally {
            clientLoops.shutdownGracefully(0, 1, SECONDS).sync();
            serverLoops.shutdownGracefully(0, 1, SECONDS).sync();
        }
    }

    /** A connection's server channel, and what its client read until it closed. */
    private record Connection(Channel server, Channel client, StringBuffer clientRead) {}

    private Connection connect() throws Exception {
        StringBuffer read = new StringBuffer();
        Channel client = new Bootstrap()
                .group(clientLoops)
                .channel(NioSocketChannel.class)
                .handler(new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                        ByteBuf bytes = (ByteBuf) msg;
                        read.append(bytes.toString(CharsetUtil.US_ASCII));
                        bytes.release();
                    }
                })
                .connect(address)
                .sync()
                .channel();
        Channel server = accepted.poll(WAIT_S, SECONDS);
        assertNotNull(server, "no connection accepted");
        return new Connection(server, client, read);
    }

    private EventLoop anotherLoopThan(EventLoop loop) {
        EventLoop other = loop;
        while (other == loop) {
            other = serverLoops.next();
        }
        return other;
    }

    /** The pacer's timers pending on {@code loop}'s wheel, counted on the loop. */
    private int pacerTimers(EventLoop loop) throws Exception {
        ExecutorDrivenWheel wheel = wheels.wheelFor(loop);
        return loop.submit(() -> {
                    int[] count = {0};
                    wheel.forEachPending(node -> {
                        if (node.getClass().getName().startsWith(ClosePacer.class.getName())) {
                            count[0]++;
                        }
                    });
                    return count[0];
                })
                .get(WAIT_S, SECONDS);
    }

    private long failedCallbacks(EventLoop loop) throws Exception {
        ExecutorDrivenWheel wheel = wheels.wheelFor(loop);
        return loop.submit(wheel::failedCount).get(WAIT_S, SECONDS);
    }

    private static void waitFor(BooleanSupplier condition) throws InterruptedException {
        long until = System.nanoTime() + SECONDS.toNanos(WAIT_S);
        while (!condition.getAsBoolean() && System.nanoTime() - until < 0) {
            Thread.sleep(5);
        }
    }

    /**
     * The close waits an hour on the old loop's wheel; the channel moves, then closes on its new
     * loop: the wait is cancelled on the old loop, the count drops and the goodbye is released.
     */
    @SuppressWarnings("deprecation") // EventLoop.register(Channel): 4.2 deprecates it, 4.1 has nothing else
    private void aChannelClosedOnItsNewLoopCancelsItsWaitOnTheOldOne() throws Exception {
        ClosePacer pacer =
                ClosePacer.builder(1, Duration.ofHours(1)).wheels(wheels).build();
        Connection first = connect();
        Connection moved = connect();
        assertTrue(pacer.close(first.server(), null));
        assertTrue(first.server().closeFuture().await(WAIT_S, SECONDS), "the first slot is now");
        ByteBuf goodbye = Unpooled.copiedBuffer("bye", CharsetUtil.US_ASCII);
        assertTrue(pacer.close(moved.server(), goodbye));
        waitFor(() -> pacer.waiting() == 1);
        assertEquals(1, pacer.waiting());
        EventLoop oldLoop = moved.server().eventLoop();
        EventLoop newLoop = anotherLoopThan(oldLoop);
        assertEquals(1, pacerTimers(oldLoop));

        assertTrue(moved.server().deregister().await(WAIT_S, SECONDS), "deregister");
        assertTrue(newLoop.register(moved.server()).await(WAIT_S, SECONDS), "register on the other loop");
        assertTrue(moved.server().isActive(), "still waiting for its slot");
        assertTrue(moved.server().close().await(WAIT_S, SECONDS));
        waitFor(() -> pacer.waiting() == 0);
        assertEquals(0, pacer.waiting(), "the close no longer waits");
        assertEquals(0, pacerTimers(oldLoop), "its timer left the old loop's wheel");
        assertEquals(0, goodbye.refCnt(), "the goodbye released");
        assertEquals(0, failedCallbacks(oldLoop) + failedCallbacks(newLoop), "timer callbacks that threw");
    }

    /**
     * The close is timed on the old loop's wheel (due at once), and in the same turn of that loop
     * the channel leaves it and is registered with the other: both tasks queued before the wheel's
     * tick. The goodbye is then made on the new loop's thread, and the channel closed after it.
     */
    @SuppressWarnings("deprecation") // EventLoop.register(Channel): 4.2 deprecates it, 4.1 has nothing else
    private void theSlotComingAfterTheMoveClosesOnTheNewLoop() throws Exception {
        ClosePacer pacer =
                ClosePacer.builder(1, Duration.ofHours(1)).wheels(wheels).build();
        Connection moved = connect();
        Channel ch = moved.server();
        EventLoop oldLoop = ch.eventLoop();
        EventLoop newLoop = anotherLoopThan(oldLoop);
        List<String> goodbyeThreads = new ArrayList<>();
        CompletableFuture<Void> closed = oldLoop.submit(() -> {
                    CompletableFuture<Void> done = pacer.closeAllOver(List.of(ch), Duration.ZERO, c -> {
                        synchronized (goodbyeThreads) {
                            goodbyeThreads.add(
                                    newLoop.inEventLoop() && c.isRegistered() && c.eventLoop() == newLoop
                                            ? "the new loop's"
                                            : Thread.currentThread().getName());
                        }
                        return Unpooled.copiedBuffer("bye", CharsetUtil.US_ASCII);
                    });
                    ch.deregister().addListener(f -> newLoop.register(ch));
                    return done;
                })
                .get(WAIT_S, SECONDS);
        closed.get(WAIT_S, SECONDS);
        assertTrue(moved.client().closeFuture().await(WAIT_S, SECONDS), "the client saw the close");
        synchronized (goodbyeThreads) {
            assertEquals(List.of("the new loop's"), goodbyeThreads, "where the goodbye was made");
        }
        assertEquals("bye", moved.clientRead().toString(), "the goodbye came before the close");
        assertEquals(0, pacerTimers(oldLoop) + pacerTimers(newLoop));
        assertEquals(0, failedCallbacks(oldLoop) + failedCallbacks(newLoop), "timer callbacks that threw");
    }
}
