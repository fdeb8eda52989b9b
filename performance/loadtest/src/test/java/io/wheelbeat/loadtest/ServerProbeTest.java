package io.wheelbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalIoHandler;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The server probe over a real local connection: it learns the connection index from the first
 * four bytes even when they come in pieces (as over TCP), and refuses an index outside the run.
 * Real event loops, so the test waits for the messages with a generous bound; it never judges speed.
 */
class ServerProbeTest {

    private static final int CONNECTIONS = 10;
    private static final SilencePlan ALL_SILENT = new SilencePlan(1, 1);

    private final ConnectionLedger ledger = new ConnectionLedger(CONNECTIONS);
    private InstrumentedEventLoopGroup serverLoops;
    private EventLoopGroup clientLoops;
    private Channel client;

    @BeforeEach
    void connect() throws Exception {
        serverLoops = Transport.LOCAL.newServerGroup(EventLoopKind.NETTY, 1, "server");
        Channel server = Transport.LOCAL.bind(serverLoops, new ChannelInitializer<Channel>() {
            @Override
            protected void initChannel(Channel ch) {
                ch.pipeline().addLast(new ServerProbe(ledger, serverLoops), new IdleRecorder(ledger, serverLoops));
            }
        });
        clientLoops = new MultiThreadIoEventLoopGroup(1, LocalIoHandler.newFactory());
        client = new Bootstrap()
                .group(clientLoops)
                .channel(LocalChannel.class)
                .handler(new ChannelInboundHandlerAdapter())
                .connect(server.localAddress())
                .sync()
                .channel();
    }

    @AfterEach
    void close() throws Exception {
        client.close().sync();
        clientLoops.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
        serverLoops.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
    }

    @Test
    void learnsTheIndexFromAHelloThatComesInPieces() throws Exception {
        client.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {0, 0})).sync();
        client.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {0})).sync();
        client.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {7, 1, 2})).sync();
        IdleVerdict v = awaitVerdict(verdict -> verdict.neverHeard() < CONNECTIONS);
        assertEquals(CONNECTIONS - 1, v.neverHeard(), "only connection 7 was heard");
        assertTrue(ledger.heard(7));
        assertEquals(0, v.badHellos());
    }

    @Test
    void refusesAnIndexOutsideTheRun() throws Exception {
        client.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {0, 0, 0, CONNECTIONS}))
                .sync();
        IdleVerdict v = awaitVerdict(verdict -> verdict.badHellos() > 0);
        assertEquals(1, v.badHellos());
        assertEquals(CONNECTIONS, v.neverHeard());
    }

    /**
     * The local transport may coalesce the pieces into one read, so wait for what the probe
     * concluded, not for a number of reads.
     */
    private IdleVerdict awaitVerdict(Predicate<IdleVerdict> done) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            serverLoops.snapshot(false, 30, TimeUnit.SECONDS); // makes the probe's writes visible
            IdleVerdict v = ledger.evaluate(ALL_SILENT, 1, 0);
            if (done.test(v)) {
                return v;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the probe reached no conclusion within 30 s: " + v);
            }
            Thread.sleep(10);
        }
    }
}
