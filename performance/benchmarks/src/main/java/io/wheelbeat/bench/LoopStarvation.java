package io.wheelbeat.bench;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.wheelbeat.netty.loop.WheelIoEventLoopGroup;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * How long a stalled loop's due backlog keeps a TCP echo on the same loop waiting, on Netty's
 * {@code MultiThreadIoEventLoopGroup} ({@code netty-loop}) and {@link WheelIoEventLoopGroup}
 * ({@code wheel-loop}), one NIO loop each, on the system clock: the loop schedules 6,000 tasks due
 * in 1 ms, each of which busy-spins 1 ms, then blocks 1 s; a client on loopback sends one byte and
 * waits for its echo, over and over, from before the stall until the backlog has run. Printed:
 * the longest echo round trip (the starvation), the echoes answered while the backlog ran, and how
 * long the backlog took. Run: {@code java -cp benchmarks.jar io.wheelbeat.bench.LoopStarvation [runs]}.
 */
public final class LoopStarvation {

    private static final int TASKS = 6_000;
    private static final long TASK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private LoopStarvation() {}

    public static void main(String[] args) throws Exception {
        int runs = args.length > 0 ? Integer.parseInt(args[0]) : 2;
        for (int run = 0; run < runs; run++) {
            for (String contender : new String[] {"netty-loop", "wheel-loop"}) {
                EventLoopGroup group = contender.equals("netty-loop")
                        ? new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory())
                        : new WheelIoEventLoopGroup(1, NioIoHandler.newFactory());
                try {
                    measure(contender, group);
                } finally {
                    group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS).sync();
                }
            }
        }
    }

    private static void measure(String contender, EventLoopGroup group) throws Exception {
        EventLoop loop = group.next();
        Channel server = new ServerBootstrap()
                .group(group)
                .channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                        ctx.writeAndFlush(msg);
                    }
                })
                .bind(new InetSocketAddress("127.0.0.1", 0))
                .sync()
                .channel();
        AtomicInteger ran = new AtomicInteger();
        CountDownLatch allRan = new CountDownLatch(1);
        long[] backlogStart = new long[1];
        try (Socket client = new Socket()) {
            client.setTcpNoDelay(true);
            client.connect(server.localAddress());
            OutputStream out = client.getOutputStream();
            InputStream in = client.getInputStream();
            for (int i = 0; i < 100; i++) {
                out.write(1);
                in.read();
            }
            Runnable task = () -> {
                if (ran.get() == 0) {
                    backlogStart[0] = System.nanoTime();
                }
                long end = System.nanoTime() + TASK_NANOS;
                while (System.nanoTime() - end < 0) {
                    Thread.onSpinWait();
                }
                if (ran.incrementAndGet() == TASKS) {
                    allRan.countDown();
                }
            };
            long start = System.nanoTime();
            loop.execute(() -> {
                for (int i = 0; i < TASKS; i++) {
                    loop.schedule(task, 1, TimeUnit.MILLISECONDS);
                }
                try {
                    Thread.sleep(1000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            long longest = 0;
            int echoesDuringBacklog = 0;
            while (allRan.getCount() > 0) {
                long sent = System.nanoTime();
                out.write(1);
                in.read();
                long roundTrip = System.nanoTime() - sent;
                longest = Math.max(longest, roundTrip);
                int done = ran.get();
                if (done > 0 && done < TASKS) {
                    echoesDuringBacklog++;
                }
            }
            long backlogMillis = (System.nanoTime() - backlogStart[0]) / 1_000_000;
            System.out.printf(
                    "%s: longest echo wait %d ms (stall 1000 ms + backlog), %d echoes answered while "
                            + "the backlog ran, backlog of %d x 1 ms tasks took %d ms, %d ms in all%n",
                    contender,
                    longest / 1_000_000,
                    echoesDuringBacklog,
                    TASKS,
                    backlogMillis,
                    (System.nanoTime() - start) / 1_000_000);
        } finally {
            server.close().sync();
        }
    }
}
