package io.wheelbeat.demo.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.util.ReferenceCountUtil;
import io.wheelbeat.demo.Transport;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 13, item 4, over real sockets: 10,000 connections fall idle at the same moment, and the
 * demo server closes them at its configured rate (250 per 100 ms here) instead of in one burst.
 *
 * <p>The server runs in its own JVM and the 10,000 clients in this one: each process then holds
 * 10,000 sockets, within the limit of 20,000 open files per process (both ends in one JVM would
 * need 20,000). The clients keep every connection busy while the others connect, then all send a
 * last frame together, so that the server's reader-idle deadlines fall due within a few
 * milliseconds of each other.
 *
 * <p>Bounds: no connection is closed while the others connect (each is written to after every
 * batch of 250 connects, well within the 3 s idle time even on a busy machine); every connection is closed as reader
 * idle; the closes span at least 75% of the 4 s the rate needs for 10,000 (a pacer never closes
 * faster than its rate, and a busy machine only spreads the closes further); no 500 ms window
 * holds half of the 10,000. That last bound is wide on purpose: the clients see the closes
 * through their own event loops, which bunch them by as long as this JVM is starved of CPU (2,837
 * in one window at load 10, against the 1,250 the rate allows), while an unpaced storm puts about
 * 8,000 in one window. The rate itself is checked exactly, in virtual time, by
 * {@code ClosePacerTest}. The figures are printed.
 */
@Timeout(180)
class IdleCloseStormProcessTest {

    private static final int CONNECTIONS = 10_000;
    private static final int CLOSES_PER_100_MS = 250;
    private static final long READER_IDLE_MS = 3_000;
    private static final int WINDOW_MS = 500;
    /** Half of the connections: an unpaced storm closes about 80% of them in one window. */
    private static final int BUSIEST_BOUND = CONNECTIONS / 2;

    private static final byte[] DATA_FRAME = {3, 0, 0, 0, 1, 'x'};

    @Test
    void tenThousandConnectionsFallingIdleTogetherAreClosedAtTheConfiguredRate() throws Exception {
        long[] closedAt = new long[CONNECTIONS];
        AtomicInteger closed = new AtomicInteger();
        EventLoopGroup loops = Transport.best().newGroup(2);
        try (ServerProcess server = ServerProcess.start(
                List.of("-Xmx512m"),
                "--threads",
                "2",
                "--reader-idle-ms",
                String.valueOf(READER_IDLE_MS),
                "--first-message-timeout-ms",
                "60000",
                "--connections-per-address",
                "1000000",
                "--close-rate-per-100ms",
                String.valueOf(CLOSES_PER_100_MS))) {
            ChannelHandler recorder = new Recorder(closedAt, closed);
            Bootstrap bootstrap = new Bootstrap()
                    .group(loops)
                    .channel(Transport.best().clientChannel())
                    .handler(recorder);
            List<Channel> channels = new ArrayList<>(CONNECTIONS);
            while (channels.size() < CONNECTIONS) {
                List<ChannelFuture> batch = new ArrayList<>();
                for (int i = 0; i < 250 && channels.size() + batch.size() < CONNECTIONS; i++) {
                    batch.add(bootstrap.connect(server.address()));
                }
                for (ChannelFuture future : batch) {
                    channels.add(future.sync().channel());
                }
                sendToAll(channels); // nobody falls idle while the others connect, however slowly
            }
            assertEquals(0, closed.get(), "no connection closed while connecting");
            long lastFrame = System.nanoTime();
            sendToAll(channels);

            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            while (closed.get() < CONNECTIONS && System.nanoTime() - deadline < 0) {
                Thread.sleep(100);
            }
            assertEquals(CONNECTIONS, closed.get(), "every connection was closed");
            long[] times = Arrays.copyOf(closedAt, CONNECTIONS);
            Arrays.sort(times);
            int busiest = Spread.busiestWindow(times, TimeUnit.MILLISECONDS.toNanos(WINDOW_MS));
            double spanSeconds = (times[CONNECTIONS - 1] - times[0]) / 1e9;
            double readerIdleCloses =
                    server.metric("wheelbeat_connection_closed_connections_total", "reason=\"reader_idle\"");
            double paced = server.metric("wheelbeat_connection_closes_paced_connections_total");
            System.out.printf(
                    "idle close storm: %d connections idle together; first closed %.2f s after the last "
                            + "frame, closes spread over %.2f s (the rate needs %.1f s); busiest 500 ms window %d "
                            + "closes (the rate allows %d, bound %d); server: %.0f reader_idle closes, %.0f waited for"
                            + " a slot%n",
                    CONNECTIONS,
                    (times[0] - lastFrame) / 1e9,
                    spanSeconds,
                    CONNECTIONS / (CLOSES_PER_100_MS * 10.0),
                    busiest,
                    CLOSES_PER_100_MS * WINDOW_MS / 100,
                    BUSIEST_BOUND,
                    readerIdleCloses,
                    paced);

            assertEquals(CONNECTIONS, readerIdleCloses, 0.0, "all closed as reader idle");
            assertTrue(busiest <= BUSIEST_BOUND, "busiest 500 ms window: " + busiest);
            assertTrue(
                    spanSeconds >= 0.75 * CONNECTIONS / (CLOSES_PER_100_MS * 10.0),
                    "spread over " + spanSeconds + " s");
        } finally {
            loops.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(30, TimeUnit.SECONDS);
        }
    }

    private static void sendToAll(List<Channel> channels) {
        for (Channel channel : channels) {
            channel.writeAndFlush(Unpooled.wrappedBuffer(DATA_FRAME), channel.voidPromise());
        }
    }

    /** Discards what the server sends and records when each connection closes. */
    @ChannelHandler.Sharable
    private static final class Recorder extends ChannelInboundHandlerAdapter {
        private final long[] closedAt;
        private final AtomicInteger closed;

        Recorder(long[] closedAt, AtomicInteger closed) {
            this.closedAt = closedAt;
            this.closed = closed;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ReferenceCountUtil.release(msg);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            long now = System.nanoTime();
            closedAt[closed.getAndIncrement()] = now;
        }
    }
}
