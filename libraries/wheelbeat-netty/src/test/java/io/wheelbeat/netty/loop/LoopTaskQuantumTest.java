package io.wheelbeat.netty.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;

/**
 * A loop that stalls while thousands of tasks come due must still serve its channels between
 * batches of them, as Netty's loop does within its task-time quantum. On real loopback TCP, with
 * Netty's loop and the wheel loop on the same virtual clock (so the quantum is spent after a count
 * of tasks, not after a span of real time that a busy machine would stretch): the loop stalls 1 s
 * while 6,000 tasks come due, each of which holds it for 1 ms of that clock; an echo request
 * arrives while the first of them runs. What is compared is how many tasks the loop ran before it
 * served the request.
 */
class LoopTaskQuantumTest {

    private static final int TASKS = 6_000;

    @Test
    void anEchoIsServedBetweenBatchesOfADueBacklogNoLaterThanOnNettysLoop() throws Exception {
        int netty = tasksRunBeforeTheEcho(LoopClock::nettyGroup);
        int wheel = tasksRunBeforeTheEcho(LoopClock::wheelGroup);
        // Netty's default quantum is 1 s, checked every 64 tasks: about 1,000 tasks, not all 6,000.
        assertTrue(netty < TASKS / 2, "Netty's loop ran " + netty + " of " + TASKS + " tasks before the echo");
        assertTrue(wheel <= netty, "the wheel loop ran " + wheel + " tasks before the echo, Netty's " + netty);
    }

    private static int tasksRunBeforeTheEcho(BiFunction<LoopClock, IoHandlerFactory, EventLoopGroup> groups)
            throws Exception {
        LoopClock clock = new LoopClock(0);
        EventLoopGroup group = groups.apply(clock, NioIoHandler.newFactory());
        AtomicInteger ran = new AtomicInteger();
        AtomicInteger ranAtEcho = new AtomicInteger(-1);
        CountDownLatch sendNow = new CountDownLatch(1);
        CountDownLatch sent = new CountDownLatch(1);
        CountDownLatch allRan = new CountDownLatch(1);
        try {
            EventLoop loop = group.next();
            Channel server = new ServerBootstrap()
                    .group(group)
                    .channel(NioServerSocketChannel.class)
                    .childHandler(new ChannelInboundHandlerAdapter() {
                        @Override
                        public void channelRead(ChannelHandlerContext ctx, Object msg) {
                            ranAtEcho.compareAndSet(-1, ran.get());
                            ctx.writeAndFlush(msg);
                        }
                    })
                    .bind(new InetSocketAddress("127.0.0.1", 0))
                    .sync()
                    .channel();
            try (Socket client = new Socket()) {
                client.setSoTimeout((int) TimeUnit.SECONDS.toMillis(60));
                client.connect(server.localAddress());
                OutputStream out = client.getOutputStream();
                InputStream in = client.getInputStream();
                // The connection is up and served before the stall.
                out.write(1);
                assertEquals(1, in.read());
                ranAtEcho.set(-1);

                Runnable task = () -> {
                    if (ran.get() == 0) {
                        sendNow.countDown();
                        await(sent);
                    }
                    clock.advance(TimeUnit.MILLISECONDS.toNanos(1));
                    if (ran.incrementAndGet() == TASKS) {
                        allRan.countDown();
                    }
                };
                loop.execute(() -> {
                    for (int i = 0; i < TASKS; i++) {
                        loop.schedule(task, 1, TimeUnit.MILLISECONDS);
                    }
                    clock.advance(TimeUnit.SECONDS.toNanos(1));
                });
                assertTrue(sendNow.await(60, TimeUnit.SECONDS), "the backlog never started");
                // On loopback the byte is in the server's receive buffer once write returns.
                out.write(2);
                sent.countDown();
                assertEquals(2, in.read());
                assertTrue(allRan.await(60, TimeUnit.SECONDS), "the backlog never finished: " + ran.get());
            }
            server.close().sync();
            return ranAtEcho.get();
        } finally {
            clock.shutDown(group);
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            assertTrue(latch.await(60, TimeUnit.SECONDS));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
