package io.wheelbeat.netty.idle;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.wheelbeat.core.ExecutorDrivenWheel;
import io.wheelbeat.netty.EventLoopWheels;
import io.wheelbeat.netty.NettyLine;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Real TCP on 127.0.0.1: a channel with a {@link WheelWriteTimeoutHandler} moves to another loop of
 * Netty's NIO group while active, after its timer fired on the first loop's wheel; a write on the
 * new loop then arms the timer on the new loop's wheel and completes. Waits are bounded at 10 s.
 */
class WheelWriteTimeoutHandlerMoveTest {

    private final EventLoopGroup serverLoops = NettyLine.nio(2);
    private final EventLoopGroup clientLoops = NettyLine.nio(1);
    private final EventLoopWheels wheels = new EventLoopWheels(Duration.ofMillis(1), 512);

    @AfterEach
    void stop() throws Exception {
        clientLoops.shutdownGracefully(0, 1, SECONDS).sync();
        serverLoops.shutdownGracefully(0, 1, SECONDS).sync();
    }

    private static int pending(EventLoop loop, ExecutorDrivenWheel wheel) throws Exception {
        return loop.submit(wheel::pendingTimers).get(10, SECONDS);
    }

    @Test
    @SuppressWarnings("deprecation") // EventLoop.register(Channel): 4.2 deprecates it, 4.1 has nothing else
    void aWriteAfterAMoveIsTimedOnTheNewLoop() throws Exception {
        BlockingQueue<Channel> accepted = new LinkedBlockingQueue<>();
        SocketAddress address = new ServerBootstrap()
                .group(serverLoops)
                .channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new WheelWriteTimeoutHandler(50, MILLISECONDS, wheels::wheelFor));
                        accepted.add(ch);
                    }
                })
                .bind("127.0.0.1", 0)
                .sync()
                .channel()
                .localAddress();
        Channel client = new Bootstrap()
                .group(clientLoops)
                .channel(NioSocketChannel.class)
                .handler(new ChannelInboundHandlerAdapter())
                .connect(address)
                .sync()
                .channel();
        Channel ch = accepted.poll(10, SECONDS);
        assertNotNull(ch);
        EventLoop oldLoop = ch.eventLoop();
        EventLoop newLoop = oldLoop;
        while (newLoop == oldLoop) {
            newLoop = serverLoops.next();
        }
        ExecutorDrivenWheel oldWheel = wheels.wheelFor(oldLoop);
        ExecutorDrivenWheel newWheel = wheels.wheelFor(newLoop);
        assertTrue(ch.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {1})).await(10, SECONDS));
        long waitUntil = System.nanoTime() + SECONDS.toNanos(10);
        while (pending(oldLoop, oldWheel) > 0 && System.nanoTime() - waitUntil < 0) {
            Thread.sleep(10); // the write completed: the timer fires and is not armed again
        }
        assertEquals(0, pending(oldLoop, oldWheel));

        assertTrue(ch.deregister().await(10, SECONDS));
        assertTrue(newLoop.register(ch).await(10, SECONDS));
        ChannelFuture write = ch.write(Unpooled.wrappedBuffer(new byte[] {2})); // pending until flushed
        assertEquals(1, pending(newLoop, newWheel), "the write is timed on the new loop's wheel");
        assertEquals(0, pending(oldLoop, oldWheel));
        ch.flush();
        assertTrue(write.await(10, SECONDS));
        assertNull(write.cause());
        assertTrue(ch.isActive() && client.isActive());
    }
}
