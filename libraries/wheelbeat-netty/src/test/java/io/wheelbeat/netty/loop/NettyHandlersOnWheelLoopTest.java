package io.wheelbeat.netty.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2GoAwayFrame;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2StreamChannelBootstrap;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.handler.timeout.ReadTimeoutException;
import io.netty.handler.timeout.ReadTimeoutHandler;
import io.netty.handler.timeout.WriteTimeoutException;
import io.netty.handler.timeout.WriteTimeoutHandler;
import io.wheelbeat.netty.EventLoopWheels;
import java.net.InetSocketAddress;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Netty's own, unmodified timeout handlers and HTTP/2 codec on the wheel loop, over real loopback
 * sockets: their timers are the loop's scheduled tasks, now on its wheel. Bounds are generous
 * (a loaded machine): an event must come no earlier than its timeout and within seconds of it.
 */
class NettyHandlersOnWheelLoopTest {

    private EventLoopGroup group;

    @BeforeEach
    void start() {
        group = new WheelIoEventLoopGroup(2, NioIoHandler.newFactory());
    }

    @AfterEach
    void stop() throws InterruptedException {
        group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS).sync();
    }

    /** A server whose child pipeline {@code init} builds; returns its port. */
    private int server(Consumer<Channel> init) throws InterruptedException {
        Channel server = new ServerBootstrap()
                .group(group)
                .channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        init.accept(ch);
                    }
                })
                .bind(new InetSocketAddress("127.0.0.1", 0))
                .sync()
                .channel();
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    private Channel client(int port, Consumer<Channel> init) throws InterruptedException {
        return new Bootstrap()
                .group(group)
                .channel(NioSocketChannel.class)
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        init.accept(ch);
                    }
                })
                .connect("127.0.0.1", port)
                .sync()
                .channel();
    }

    /** Records what reaches the end of a pipeline, with the time since the pipeline was built. */
    private static final class Recorder extends ChannelInboundHandlerAdapter {
        final BlockingQueue<Object> events = new LinkedBlockingQueue<>();
        /**
         * Read before the pipeline's handlers are added, so no timer of theirs starts earlier (an
         * accepted channel's idle handler starts when added; a reading in channelActive could
         * come later by however long the loop's thread was preempted).
         */
        volatile long startedAt;

        ChannelPipeline building(Channel ch) {
            startedAt = System.nanoTime();
            return ch.pipeline();
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            events.add(evt);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            events.add(cause);
            ctx.close();
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            events.add(msg);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            events.add("inactive");
        }

        Object next() throws InterruptedException {
            Object event = events.poll(20, TimeUnit.SECONDS);
            assertTrue(event != null, "nothing came within 20 s");
            return event;
        }

        long millisSinceStart() {
            return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedAt);
        }
    }

    @Test
    void idleStateHandlerFiresReaderIdleOnTimeAndRepeats() throws Exception {
        Recorder recorder = new Recorder();
        int port = server(ch -> recorder.building(ch)
                .addLast(
                        new IdleStateHandler(0, 0, 0, TimeUnit.MILLISECONDS) {},
                        new IdleStateHandler(200, 0, 0, TimeUnit.MILLISECONDS),
                        recorder));
        Channel client = client(port, ch -> {});
        Object first = recorder.next();
        long at = recorder.millisSinceStart();
        assertEquals(IdleStateEvent.FIRST_READER_IDLE_STATE_EVENT, first);
        assertTrue(at >= 200, "reader idle after " + at + " ms");
        assertEquals(IdleStateEvent.READER_IDLE_STATE_EVENT, recorder.next());
        assertTrue(recorder.millisSinceStart() >= 400);
        assertEquals(IdleState.READER_IDLE, ((IdleStateEvent) recorder.next()).state());
        client.close().sync();
    }

    @Test
    void readTimeoutHandlerClosesASilentConnectionNotABusyOne() throws Exception {
        Recorder recorder = new Recorder();
        int port = server(
                ch -> recorder.building(ch).addLast(new ReadTimeoutHandler(300, TimeUnit.MILLISECONDS), recorder));
        Channel client = client(port, ch -> {});
        // Traffic every 100 ms for 600 ms keeps it open.
        for (int i = 0; i < 6; i++) {
            client.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {1})).sync();
            Thread.sleep(100);
        }
        Object event;
        while (!((event = recorder.next()) instanceof Throwable)) {
            io.netty.util.ReferenceCountUtil.release(event);
        }
        long at = recorder.millisSinceStart();
        assertInstanceOf(ReadTimeoutException.class, event);
        assertTrue(at >= 600 + 300 - 150, "timed out " + at + " ms after connecting, through 600 ms of traffic");
        assertEquals("inactive", recorder.next());
        client.closeFuture().await(10, TimeUnit.SECONDS);
        assertTrue(!client.isActive());
    }

    @Test
    void writeTimeoutHandlerFailsAStuckWriteAndCancelsTheTimersOfCompletedOnes() throws Exception {
        // Small writes to a reading client complete: their timers are cancelled, nothing fires.
        Recorder small = new Recorder();
        int echoPort = server(ch -> ch.pipeline()
                .addLast(
                        new WriteTimeoutHandler(300, TimeUnit.MILLISECONDS), small, new ChannelInboundHandlerAdapter() {
                            @Override
                            public void channelActive(ChannelHandlerContext ctx) {
                                for (int i = 0; i < 100; i++) {
                                    ctx.writeAndFlush(Unpooled.wrappedBuffer(new byte[16]));
                                }
                                ctx.fireChannelActive();
                            }
                        }));
        Channel reader = client(echoPort, ch -> {});
        Thread.sleep(700);
        assertTrue(small.events.isEmpty(), "completed writes timed out: " + small.events);
        reader.close().sync();

        // 64 MB to a client that reads nothing cannot complete: WriteTimeoutException.
        Recorder recorder = new Recorder();
        BlockingQueue<Channel> found = new LinkedBlockingQueue<>();
        int stuckPort = server(ch -> {
            ch.pipeline().addLast(new WriteTimeoutHandler(300, TimeUnit.MILLISECONDS), recorder);
            found.add(ch);
        });
        Channel silent = client(stuckPort, ch -> ch.config().setAutoRead(false));
        Channel stuck = found.poll(10, TimeUnit.SECONDS);
        long writeAt = System.nanoTime();
        stuck.writeAndFlush(Unpooled.wrappedBuffer(new byte[64 << 20]));
        Object event = recorder.next();
        long after = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - writeAt);
        assertInstanceOf(WriteTimeoutException.class, event);
        assertTrue(after >= 300, "write timed out after " + after + " ms");
        silent.close().sync();
    }

    @Test
    void http2GracefulGoAwayClosesAfterItsTimeoutWhileAStreamStaysOpen() throws Exception {
        BlockingQueue<Channel> served = new LinkedBlockingQueue<>();
        int port = server(ch -> {
            Http2FrameCodec codec = Http2FrameCodecBuilder.forServer()
                    .gracefulShutdownTimeoutMillis(400)
                    .build();
            ch.pipeline().addLast(codec, new ChannelInboundHandlerAdapter() {
                @Override
                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                    if (msg instanceof Http2HeadersFrame) {
                        served.add(ctx.channel());
                    }
                    io.netty.util.ReferenceCountUtil.release(msg);
                }
            });
        });
        Recorder recorder = new Recorder();
        Channel client = client(
                port,
                ch -> ch.pipeline()
                        .addLast(
                                Http2FrameCodecBuilder.forClient().build(),
                                new Http2MultiplexHandler(new ChannelInboundHandlerAdapter()),
                                recorder));
        Channel stream = new Http2StreamChannelBootstrap(client)
                .handler(new ChannelInboundHandlerAdapter())
                .open()
                .sync()
                .getNow();
        stream.writeAndFlush(new DefaultHttp2HeadersFrame(
                        new DefaultHttp2Headers()
                                .method("GET")
                                .path("/")
                                .scheme("http")
                                .authority("localhost"),
                        false))
                .sync();
        Channel server = served.poll(10, TimeUnit.SECONDS);
        long closeAt = System.nanoTime();
        // Graceful: GOAWAY now, the connection closed when the open stream ends or the 400 ms pass.
        server.close();
        Object event;
        while (!((event = recorder.next()) instanceof Http2GoAwayFrame)) {
            io.netty.util.ReferenceCountUtil.release(event);
        }
        io.netty.util.ReferenceCountUtil.release(event);
        assertTrue(client.closeFuture().await(20, TimeUnit.SECONDS));
        long after = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - closeAt);
        assertTrue(after >= 400, "closed " + after + " ms after the graceful close began");
    }

    @Test
    void theTimersOfNettysHandlersAreOnTheLoopsWheel() throws Exception {
        BlockingQueue<Channel> served = new LinkedBlockingQueue<>();
        int port = server(ch -> {
            ch.pipeline().addLast(new IdleStateHandler(1, 1, 1, TimeUnit.HOURS));
            served.add(ch);
        });
        Channel client = client(port, ch -> {});
        Channel server = served.poll(10, TimeUnit.SECONDS);
        var wheel = EventLoopWheels.shared().wheelFor(server.eventLoop());
        int pending = server.eventLoop().submit(wheel::pendingTimers).get();
        assertTrue(pending >= 3, "the idle handler's three tasks are on the wheel: " + pending);
        client.close().sync();
        server.closeFuture().sync();
        // channelInactive (which cancels them) runs as a task after the close future completes.
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        int left;
        while ((left = server.eventLoop().submit(wheel::pendingTimers).get()) != pending - 3
                && System.nanoTime() < giveUp) {
            Thread.sleep(10);
        }
        assertEquals(pending - 3, left);
    }
}
